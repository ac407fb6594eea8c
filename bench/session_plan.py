"""A deterministic 200-turn coding-agent session: the workspace it works on and the model's scripted turns."""

# Shapes are the bench generator's (bench/generator.py): text cut from the same seeded corpus (~10% CJK, a few
# emoji), tool outputs 1 KB to 200 KB log-uniform, 0-3 tool rounds per turn. Here the tools really run: the model's
# calls are scripted for the fake Gemini and the sidecar executes them on a generated workspace. Reads favour the
# files read lately (re-reads), shell commands print generated logs with planted error lines, edits replace a
# file's version line or write new files. The same (seed, turns) always gives the same workspace and script.

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.generator import MAX_OUTPUT, MIN_OUTPUT, _Source

SOURCE_FILES = 60
LOG_FILES = 24
RECENT = 6  # a re-read picks one of the last RECENT distinct files read
RE_READ = 0.45  # share of reads that re-read a recent file
LINE_CHARS = 100  # ~2,000 lines in 200 KB: read_file's line limit does not cut the biggest files
_ROUNDS, _ROUND_WEIGHTS = (0, 1, 2, 3), (3, 4, 2, 1)
_TOOLS, _TOOL_WEIGHTS = ("read_file", "run_shell_command", "replace", "write_file"), (50, 25, 13, 12)


@dataclass
class Round:
    """One tool round: the model's call (with an optional text before it)."""

    name: str
    args: dict[str, Any]
    text: str | None = None


@dataclass
class Turn:
    """One user turn: the prompt, the model's tool rounds in order, then its final reply."""

    prompt: str
    rounds: list[Round]
    reply: str


@dataclass
class Plan:
    files: dict[str, str]  # relative path -> text, written before the session starts
    turns: list[Turn]
    reads: int = 0
    re_reads: int = 0
    edits: int = 0
    shells: int = 0
    steps_per_turn: list[int] = field(default_factory=list)

    def script(self, number: int) -> list[dict[str, Any]]:
        """The fake Gemini's steps for turn `number`: each call, then the reply (chat requests only)."""
        turn = self.turns[number]
        steps: list[dict[str, Any]] = []
        for r in turn.rounds:
            step: dict[str, Any] = {"kind": "function_call", "name": r.name, "args": r.args, "match": "chat"}
            if r.text:
                step["text"] = r.text
            steps.append(step)
        steps.append({"kind": "text", "text": turn.reply, "match": "chat"})
        return steps

    def write(self, root: Path) -> None:
        for rel, text in self.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


def _long_lines(src: _Source, chars: int) -> str:
    """`chars` of corpus text re-cut into ~LINE_CHARS-character lines."""
    flat = src.cut(chars).replace("\n", " ")
    return "\n".join(flat[i : i + LINE_CHARS] for i in range(0, len(flat), LINE_CHARS)) + "\n"


def _log(src: _Source, number: int, chars: int) -> str:
    """A test run's log: corpus lines with failures planted among them, and a summary at the end."""
    r = src.r
    lines = _long_lines(src, chars).splitlines()
    for k in range(1 + r.randrange(3)):
        at = r.randrange(len(lines) + 1)
        lines.insert(at, f"FAILED tests/test_{number}_{k}.py::test_case_{k} - AssertionError: expected {k} got {k + 1}")
    lines.append(f"ValueError: run {number} ended with {r.randrange(1, 9)} failures")
    return "\n".join(lines) + "\n"


def session_plan(turns: int = 200, seed: int = 7) -> Plan:
    """The workspace and the scripted turns of one session (deterministic in `turns` and `seed`)."""
    src = _Source(seed)
    r = src.r
    files: dict[str, str] = {}
    versions: dict[str, int] = {}
    for i in range(SOURCE_FILES):
        path = f"src/pkg{i % 8}/module_{i:02d}.py"
        files[path] = f"# {path} version 0\n" + _long_lines(src, src.log_uniform(MIN_OUTPUT, MAX_OUTPUT))
        versions[path] = 0
    for k in range(LOG_FILES):
        files[f"logs/run_{k:02d}.log"] = _log(src, k, src.log_uniform(MIN_OUTPUT, MAX_OUTPUT))
    plan = Plan(files=files, turns=[])
    readable = list(versions)
    recent: list[str] = []
    read_once: set[str] = set()
    new_files = 0
    for _ in range(turns):
        rounds: list[Round] = []
        for _ in range(r.choices(_ROUNDS, weights=_ROUND_WEIGHTS)[0]):
            tool = r.choices(_TOOLS, weights=_TOOL_WEIGHTS)[0]
            text = src.cut(r.randint(40, 400)) if r.random() < 0.3 else None
            if tool == "read_file":
                path = r.choice(recent) if recent and r.random() < RE_READ else r.choice(readable)
                plan.reads += 1
                plan.re_reads += path in read_once
                read_once.add(path)
                recent = [*[p for p in recent if p != path][-(RECENT - 1) :], path]
                rounds.append(Round("read_file", {"path": path}, text))
            elif tool == "run_shell_command":
                number = r.randrange(LOG_FILES)
                fails = " ; exit 1" if r.random() < 0.4 else ""
                rounds.append(Round("run_shell_command", {"command": f"cat logs/run_{number:02d}.log{fails}"}, text))
                plan.shells += 1
            elif tool == "replace":
                path = r.choice(list(versions))
                old, versions[path] = versions[path], versions[path] + 1
                args = {
                    "path": path,
                    "old_string": f"# {path} version {old}\n",
                    "new_string": f"# {path} version {versions[path]}\n",
                }
                rounds.append(Round("replace", args, text))
                read_once.discard(path)  # a read after an edit is not a re-read of the same content
                plan.edits += 1
            else:
                new_files += 1
                path = f"src/new/file_{new_files:03d}.py"
                content = _long_lines(src, r.randint(200, 3000))
                rounds.append(Round("write_file", {"path": path, "content": content}, text))
                readable.append(path)
                plan.edits += 1
        prompt = src.cut(src.log_uniform(40, 1500))
        plan.turns.append(Turn(prompt, rounds, src.cut(src.log_uniform(100, 4000))))
        plan.steps_per_turn.append(len(rounds) + 1)
    return plan
