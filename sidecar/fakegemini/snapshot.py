"""Deterministic <state_snapshot> summaries built from facts in a history (a pure, testable builder)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from sidecar.core.history import Content, content_text
from sidecar.core.prompts import SNAPSHOT_SECTIONS

SECTIONS = SNAPSHOT_SECTIONS

#: User texts starting with one of these are context, not requests (IDE context, environment).
CONTEXT_PREFIXES = (
    "Here is the user's editor context",
    "Here is a summary of changes",
    "<session_context>",
)
#: "Missing from the snapshot:" or "Missing from the snapshot (any note):", items on the line or below.
_MISSING_RE = re.compile(r"Missing from the snapshot\b[^\n:]*:")
#: Labels a checker may put before a missing item, and where the item then goes.
_LABELS = {
    "user constraint": "rule",
    "constraint": "rule",
    "file path": "path",
    "path": "path",
    "file": "path",
}
MAX_ACTIONS = 8
MAX_TASKS = 6
MAX_ITEM = 240
MAX_RULE = 1000  # constraint sentences are kept whole: checkers compare them verbatim
FOCUS = " (current focus)"
#: What an empty section says (never carried forward as a fact).
PLACEHOLDERS = {
    "overall_goal": "(no user goal stated yet)",
    "active_constraints": "(none stated)",
    "key_knowledge": "(nothing beyond the sections below)",
    "artifact_trail": "(no files touched by tools)",
    "file_system_state": "(no file paths mentioned)",
    "recent_actions": "(no tool calls yet)",
    "task_state": "(no pending request)",
}

_SNAPSHOT_RE = re.compile(r"<state_snapshot>(.*?)</state_snapshot>", re.S)
_SECTION_RE = re.compile(r"<(" + "|".join(SECTIONS) + r")>(.*?)</\1>", re.S)
_CONSTRAINT_RE = re.compile(r"\b(must|never|always|don't|don’t|do not)\b", re.I)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
_BULLET_RE = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
_PATH_RE = re.compile(
    r"(?<![\w/.:@~-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*\.[A-Za-z0-9]{1,8}\b"  # with a directory
    r"|(?<![\w/.-])[\w-]+(?:\.[\w-]+)*\.(?:py|pyi|js|jsx|ts|tsx|mjs|cjs|json|jsonl|toml|yaml|yml|md|rst"
    r"|txt|cfg|ini|lua|vim|rs|go|c|h|cc|cpp|hpp|java|kt|rb|sh|html|css|scss|sql|xml|lock|csv|log|env)\b"
)
_PATH_KEYS = ("path", "file_path", "filePath", "absolute_path", "file", "filename", "dir_path")


@dataclass
class Facts:
    """What the summarizer found, as single-line items (rendered as "- item" lines)."""

    goal: str = ""
    constraints: list[str] = field(default_factory=list)
    knowledge: list[str] = field(default_factory=list)
    artifacts: dict[str, list[str]] = field(default_factory=dict)  # path -> tools/notes
    files: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    turns: int = 0
    user_turns: int = 0
    tool_calls: int = 0
    carried: bool = False
    restored: int = 0


def one_line(text: str, limit: int = MAX_ITEM) -> str:
    """Collapse whitespace and truncate with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def find_paths(text: str) -> list[str]:
    """File paths (absolute or relative, with an extension) mentioned in a text; URLs ignored."""
    found = (m.rstrip(".") for m in _PATH_RE.findall(_URL_RE.sub(" ", text)))
    return [p for p in found if len(p) > 2]


def constraint_sentences(text: str) -> list[str]:
    """Sentences stating a rule: they contain must / never / always / don't / do not."""
    sentences = _SENTENCE_RE.split(text)
    return [one_line(s, MAX_RULE) for s in sentences if s.strip() and _CONSTRAINT_RE.search(s)]


def parse_snapshot(text: str) -> dict[str, str] | None:
    """The sections of the last <state_snapshot> in a text (raw bodies), or None if there is none."""
    blocks = _SNAPSHOT_RE.findall(text)
    if not blocks:
        return None
    return {name: body.strip() for name, body in _SECTION_RE.findall(blocks[-1])}


def section_items(body: str) -> list[str]:
    """The list items of a section body (bullets/numbers stripped, placeholders dropped)."""
    items = [one_line(_BULLET_RE.sub("", line.strip())) for line in body.splitlines()]
    return [it for it in items if it and it not in PLACEHOLDERS.values()]


def missing_items(text: str) -> list[str]:
    """Items listed after a "Missing from the snapshot[ (note)]:" line (same line or bullets below)."""
    out: list[str] = []
    for chunk in _MISSING_RE.split(text)[1:]:
        first, _, rest = chunk.partition("\n")
        if first.strip():
            out.append(one_line(first))
        for line in rest.splitlines():
            if not line.strip():
                break
            out.append(one_line(_BULLET_RE.sub("", line.strip())))
    return [o for o in out if o]


def _add(items: list[str], item: str) -> None:
    if item and item not in items:
        items.append(item)


def _add_path(f: Facts, path: str) -> None:
    if not any(path in existing for existing in f.files):
        f.files.append(path)


def _json(value: Any, limit: int) -> str:
    return one_line(msgspec.json.encode(value).decode(), limit)


def _merge_snapshot(f: Facts, sections: dict[str, str], *, draft: bool) -> None:
    """Carry a previous snapshot's facts forward (a verify-pass draft only fills gaps)."""
    f.carried = f.carried or not draft
    goal = one_line(sections.get("overall_goal", ""))
    if not f.goal and goal != PLACEHOLDERS["overall_goal"]:
        f.goal = goal
    for it in section_items(sections.get("active_constraints", "")):
        _add(f.constraints, it)
    for it in section_items(sections.get("key_knowledge", "")):
        _add(f.knowledge, it)
    for it in section_items(sections.get("artifact_trail", "")):
        key, sep, notes = it.partition(": ")
        trail = f.artifacts.setdefault(key if sep else it, [])
        for note in notes.split(", ") if sep else []:
            _add(trail, note)
    for it in section_items(sections.get("file_system_state", "")):
        _add_path(f, it)
    for it in section_items(sections.get("recent_actions", "")):
        _add(f.actions, it)
    if not draft:
        f.tasks = section_items(sections.get("task_state", ""))


def _restore(f: Facts, item: str) -> None:
    f.restored += 1
    label, sep, value = item.partition(": ")
    kind = _LABELS.get(label.strip().lower()) if sep else None
    if kind == "path":
        _add_path(f, value.strip())
        return
    if kind == "rule" or _CONSTRAINT_RE.search(item):
        _add(f.constraints, value.strip() if kind else item)
    else:
        _add(f.knowledge, item)
    for p in find_paths(item):
        _add_path(f, p)


def _is_instruction(text: str, *, last: bool) -> bool:
    if _MISSING_RE.search(text):
        return True
    if "<state_snapshot>" in text:
        return "<overall_goal>" not in text
    return last and "snapshot" in text.lower()


def _call_paths(args: dict[str, Any]) -> list[str]:
    found = [v for k, v in args.items() if k in _PATH_KEYS and isinstance(v, str) and v.strip()]
    found += find_paths(msgspec.json.encode(args).decode())
    return list(dict.fromkeys(found))


def extract_facts(contents: Sequence[Content]) -> Facts:
    """Walk a history in order and collect goal, constraints, paths, tool calls and requests."""
    f = Facts(turns=len(contents), user_turns=sum(1 for c in contents if c.role != "model"))
    requests: list[tuple[str, bool]] = []  # (request, answered by a later model turn)
    pending: list[int] = []  # action indexes awaiting a result
    ids: dict[str, int] = {}
    drafts: list[dict[str, str]] = []  # snapshots written by the model: they only fill gaps, at the end
    for n, c in enumerate(contents):
        text = content_text(c)
        last = n == len(contents) - 1
        sections: dict[str, str] | None = None
        if c.role == "model":
            if requests:
                requests[-1] = (requests[-1][0], True)
            sections = parse_snapshot(text)
            if sections is not None:
                drafts.append(sections)
        elif text.strip():
            sections = parse_snapshot(text)
            if sections is not None:
                _merge_snapshot(f, sections, draft=False)
                requests.clear()
            elif _is_instruction(text, last=last):
                for item in missing_items(text):
                    _restore(f, item)
                continue
            elif not text.lstrip().startswith(CONTEXT_PREFIXES):
                if not f.goal:
                    f.goal = one_line(text)
                for s in constraint_sentences(text):
                    _add(f.constraints, s)
                requests.append((one_line(text), False))
        if sections is None:
            for p in find_paths(text):
                _add_path(f, p)
        for part in c.parts:
            call, resp = part.function_call, part.function_response
            if call is not None:
                f.tool_calls += 1
                name, args = call.name or "unknown_tool", call.args or {}
                for p in _call_paths(args):
                    _add_path(f, p)
                    _add(f.artifacts.setdefault(p, []), name)
                f.actions.append(f"{name}({_json(args, 160)})")
                pending.append(len(f.actions) - 1)
                if call.id:
                    ids[call.id] = len(f.actions) - 1
            elif resp is not None:
                idx = ids.pop(resp.id, None) if resp.id else None
                if idx is None:
                    named = [i for i in pending if f.actions[i].startswith(f"{resp.name}(")]
                    idx = named[0] if named else (pending[0] if pending else None)
                for p in find_paths(_json(resp.response, 100_000)):
                    _add_path(f, p)
                if isinstance(resp.response, dict) and "error" in resp.response:
                    _add(f.knowledge, f"{resp.name} failed: {_json(resp.response['error'], 160)}")
                if idx is not None:
                    if idx in pending:
                        pending.remove(idx)
                    f.actions[idx] += f" -> {_json(resp.response, 160)}"
    for i in pending:
        f.actions[i] += " -> (no result yet)"
    f.actions = list(dict.fromkeys(f.actions))[-MAX_ACTIONS:]
    for sections in drafts:
        _merge_snapshot(f, sections, draft=True)
    f.actions = f.actions[-MAX_ACTIONS:]
    if requests:
        new = [f"[DONE] {r}" if done else f"[TODO] {r}" for r, done in requests[:-1]]
        new.append(f"[IN PROGRESS] {requests[-1][0]}{FOCUS}")
        older = [t.removesuffix(FOCUS) for t in f.tasks]
        f.tasks = [t for t in older if t not in new] + new
    f.tasks = f.tasks[-MAX_TASKS:]
    return f


def render_snapshot(f: Facts) -> str:
    """The <state_snapshot> block for these facts (every section present, placeholders when empty)."""

    def block(name: str, lines: list[str]) -> str:
        body = "\n".join(f"        {ln}" for ln in lines or [PLACEHOLDERS[name]])
        return f"    <{name}>\n{body}\n    </{name}>"

    arts = [f"- {p}: {', '.join(notes)}" if notes else f"- {p}" for p, notes in f.artifacts.items()]
    parts = [
        block("overall_goal", [f.goal] if f.goal else []),
        block("active_constraints", [f"- {c}" for c in f.constraints]),
        block("key_knowledge", [f"- {k}" for k in f.knowledge]),
        block("artifact_trail", arts),
        block("file_system_state", [f"- {p}" for p in f.files]),
        block("recent_actions", [f"- {a}" for a in f.actions]),
        block("task_state", [f"{i}. {t}" for i, t in enumerate(f.tasks, 1)]),
    ]
    return "<state_snapshot>\n" + "\n".join(parts) + "\n</state_snapshot>"


def _draft(contents: Sequence[Content]) -> str | None:
    """The verify pass: the snapshot in the last model turn, when only instructions follow it."""
    for c in reversed(contents):
        text = content_text(c)
        if c.role == "model":
            return text if parse_snapshot(text) is not None else None
        if not _is_instruction(text, last=True):
            return None
    return None


def build_summary(contents: Sequence[Content]) -> str:
    """The fake summarizer's whole reply: a <scratchpad> then a complete <state_snapshot>.

    Pass 1 (history + instruction) summarizes; pass 2 (… + model draft + critique request) returns
    the same snapshot when the draft was complete, or an improved one.
    """
    f = extract_facts(contents)
    snapshot = render_snapshot(f)
    draft = _draft(contents)
    stats = (
        f"Reviewed {f.turns} turns ({f.user_turns} user, {f.turns - f.user_turns} model), "
        f"{f.tool_calls} tool calls, {len(f.files)} file paths, {len(f.constraints)} constraints. "
        f"Previous snapshot: {'carried forward' if f.carried else 'none'}. Restored facts: {f.restored}."
    )
    if draft is None:
        note = "Summary pass."
    elif _SNAPSHOT_RE.findall(draft)[-1].strip() == _SNAPSHOT_RE.findall(snapshot)[-1].strip():
        note = "Verification pass: the draft is complete; repeating it."
    else:
        note = "Verification pass: the draft missed facts; emitting an improved snapshot."
    return f"<scratchpad>\n{note} {stats}\n</scratchpad>\n{snapshot}"
