"""Deterministic coding-agent conversations (REST-JSON contents) and recorded sessions for the benchmarks."""

# A conversation is a list of Gemini `Content` dicts: user prompts, model replies, and tool rounds (a model
# `functionCall`, then a user `functionResponse` whose output is 1 KB to 200 KB, log-uniform). About 10% of
# all characters are CJK and a few are emoji (astral, two UTF-16 units). Sizes are in *estimated tokens*:
# the sidecar's estimate, which is the reference's `estimateTokenCountSync` over all parts.
# Text is cut from one seeded corpus, so the same (size, seed) always gives byte-identical output.

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from sidecar.core.tokens import content_quarters

__all__ = [
    "CONVERSATION_SIZES",
    "SESSION_SIZES",
    "Message",
    "conversation",
    "corpus",
    "kind_of",
    "session_messages",
    "turn",
]

#: Named conversation sizes, in estimated tokens.
CONVERSATION_SIZES = {"10k": 10_000, "100k": 100_000, "500k": 500_000, "1m": 1_000_000}
#: Message counts of the recorded sessions.
SESSION_SIZES = (100, 1_000, 10_000)

MIN_OUTPUT, MAX_OUTPUT = 1_000, 200_000
CORPUS_CHARS = 400_000
_TOLERANCE = 0.005  # stop once within 0.5% of the target

_WORDS = [
    "def", "return", "self", "import", "class", "value", "result", "error", "config", "path", "test", "data", "for",
    "in", "if", "else", "None", "True", "False", "await", "async", "parser", "token", "node", "buffer", "index",
    "offset", "length", "items", "key", "dict", "list", "str", "int", "raise", "except", "try", "with", "open",
    "read", "write", "file", "line", "source", "module", "package", "build", "cache", "state", "session", "history",
    "model", "user", "request", "response", "stream", "chunk", "message", "content", "part", "function", "call",
    "args", "output", "status", "count", "limit",
]  # fmt: skip
_SYMBOLS = ["(", ")", ":", "=", "+=", "->", ",", ".", "[", "]", "{", "}", "==", "!=", "#", '"', "'", "\\", "/"]
_CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)] + [chr(c) for c in range(0x3041, 0x3097)]
_EMOJI = ["\U0001f600", "\U0001f680", "\U0001f41b", "\U0001f525", "\u2705", "\U0001f4a1", "\U0001f9ea", "\u26a0\ufe0f"]
_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_TOOLS = ("read_file", "run_shell_command", "search_file_content", "glob", "write_file", "replace")

Message = tuple[str, dict[str, Any]]  # (recording kind, REST-JSON content)


@lru_cache(maxsize=4)
def corpus(seed: int = 1) -> str:
    """CORPUS_CHARS of code-like lines, CJK comment lines (~10% of the characters) and a few emoji, doubled
    so that any slice of up to CORPUS_CHARS characters can start anywhere in the first half."""
    r = random.Random(f"corpus-{seed}")
    lines: list[str] = []
    size = 0
    while size < CORPUS_CHARS:
        roll = r.random()
        if roll < 0.25:
            line = "# " + "".join(r.choices(_CJK, k=r.randint(8, 30)))
        else:
            words = r.choices(_WORDS, k=r.randint(3, 12))
            for _ in range(r.randint(0, 4)):
                words.insert(r.randrange(len(words) + 1), r.choice(_SYMBOLS))
            line = " " * (4 * r.randint(0, 3)) + " ".join(words)
            if roll > 0.98:
                line += " " + r.choice(_EMOJI)
        lines.append(line)
        size += len(line) + 1
    text = "\n".join(lines)[:CORPUS_CHARS]
    return text + text


class _Source:
    """Seeded slices of the corpus and seeded sizes."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(f"conversation-{seed}")
        self.text = corpus(seed % 4)
        self.calls = 0

    def cut(self, chars: int) -> str:
        chars = max(1, min(chars, CORPUS_CHARS))
        start = self.r.randrange(CORPUS_CHARS)
        return self.text[start : start + chars]

    def log_uniform(self, low: int, high: int) -> int:
        return round(math.exp(self.r.uniform(math.log(low), math.log(high))))

    def call_id(self) -> str:
        self.calls += 1
        return f"call-{self.calls}"


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": text}]}


def _tool_round(src: _Source, max_output: int) -> list[dict[str, Any]]:
    r = src.r
    tool = r.choice(_TOOLS)
    path = f"src/pkg{r.randrange(20)}/module_{r.randrange(500)}.py"
    args: dict[str, Any] = {
        "read_file": {"absolute_path": "/work/app/" + path},
        "run_shell_command": {"command": f"python -m pytest -x tests/test_{r.randrange(300)}.py", "timeout": 120},
        "search_file_content": {"pattern": r.choice(_WORDS) + r"\(", "path": "src", "max_matches": 200},
        "glob": {"pattern": f"src/**/*{r.choice(_WORDS)}*.py"},
        "write_file": {"file_path": "/work/app/" + path, "content": src.cut(r.randint(200, 3000))},
        "replace": {"file_path": "/work/app/" + path, "old_string": src.cut(80), "new_string": src.cut(90)},
    }[tool]
    call_id = src.call_id()
    call: dict[str, Any] = {"functionCall": {"name": tool, "args": args, "id": call_id}}
    if r.random() < 0.5:
        call["thoughtSignature"] = "".join(r.choices(_BASE64, k=344))
    parts: list[dict[str, Any]] = [call]
    if r.random() < 0.3:
        parts.insert(0, {"text": src.cut(r.randint(40, 400))})
    output = src.cut(min(src.log_uniform(MIN_OUTPUT, MAX_OUTPUT), max_output))
    response = {"functionResponse": {"name": tool, "id": call_id, "response": {"output": output}}}
    return [{"role": "model", "parts": parts}, {"role": "user", "parts": [response]}]


def turn(src: _Source, budget_chars: int | None = None, max_output: int = MAX_OUTPUT) -> list[dict[str, Any]]:
    """One user turn: a prompt, 0-3 tool rounds, a model reply; `budget_chars` caps its text roughly."""
    r = src.r
    budget = budget_chars if budget_chars is not None else 10**12
    prompt = src.cut(min(src.log_uniform(40, 1500), max(20, budget // 4)))
    contents = [_text("user", prompt)]
    budget -= len(prompt)
    for _ in range(r.choices((0, 1, 2, 3), weights=(3, 4, 2, 1))[0]):
        if budget < 2 * MIN_OUTPUT:
            break
        contents += _tool_round(src, min(max_output, budget - MIN_OUTPUT // 2))
        budget -= len(contents[-1]["parts"][0]["functionResponse"]["response"]["output"]) + 200
    contents.append(_text("model", src.cut(min(src.log_uniform(100, 4000), max(20, budget)))))
    return contents


def conversation(tokens: int, seed: int = 1) -> list[dict[str, Any]]:
    """A conversation of about `tokens` estimated tokens (within 0.5%), ending with a model reply."""
    src = _Source(seed)
    target = 4 * tokens  # in quarter tokens
    contents: list[dict[str, Any]] = []
    total = 0
    while target - total > _TOLERANCE * target:
        # Text costs about 1.5 quarters per character (10% CJK at 6), tool outputs 1.
        remaining_chars = int((target - total) / 1.6)
        new = turn(src, remaining_chars)
        quarters = sum(content_quarters(c) for c in new)
        if total + quarters > target * (1 + _TOLERANCE):
            continue  # too big for what is left: draw another, smaller turn
        contents += new
        total += quarters
    return contents


def kind_of(content: dict[str, Any]) -> str:
    """The recording kind of a generated content."""
    part = content["parts"][-1]
    if "functionCall" in part:
        return "toolCall"
    if "functionResponse" in part:
        return "toolResult"
    return "user" if content["role"] == "user" else "model"


def session_messages(count: int, seed: int = 2, max_output: int = 20_000) -> Iterator[Message]:
    """Exactly `count` messages of a long session, as (kind, content); tool outputs capped at `max_output`."""
    src = _Source(seed)
    emitted = 0
    while True:
        for content in turn(src, max_output=max_output):
            if emitted == count:
                return
            yield kind_of(content), content
            emitted += 1
