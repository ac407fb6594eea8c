"""Deterministic probes of what the model is sent: is each planted fact there verbatim, restated, stale or lost?"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import msgspec

from eval.facts import Fact

Verdict = Literal["verbatim", "restated", "stale", "lost"]
#: Verdicts that count as "the model is sent the fact".
SURVIVED: frozenset[str] = frozenset({"verbatim", "restated"})

_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Lower case, every run of white space one space (so a fact re-wrapped over lines still matches)."""
    return _SPACE.sub(" ", text).strip().lower()


def _part_texts(part: Mapping[str, Any]) -> Iterable[str]:
    text = part.get("text")
    if isinstance(text, str):
        yield text
    for key in ("functionCall", "function_call", "functionResponse", "function_response"):
        value = part.get(key)
        if value is not None:
            yield _json_strings(value)


def _json_strings(value: Any) -> str:
    """Every string inside a JSON value, one per line (so escapes like \\n in a tool output read as text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(_json_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_json_strings(v) for v in value)
    return msgspec.json.encode(value).decode()


def request_text(body: Mapping[str, Any]) -> str:
    """All the text a generateContent request body sends: system instruction, then every content's parts
    (text, function call arguments, function responses)."""
    chunks: list[str] = []
    system = body.get("systemInstruction", body.get("system_instruction"))
    if isinstance(system, Mapping):
        for part in system.get("parts") or []:
            if isinstance(part, Mapping):
                chunks += _part_texts(part)
    elif isinstance(system, str):
        chunks.append(system)
    for content in body.get("contents") or []:
        if isinstance(content, Mapping):
            for part in content.get("parts") or []:
                if isinstance(part, Mapping):
                    chunks += _part_texts(part)
    return "\n".join(chunks)


def probe(fact: Fact, text: str) -> Verdict:
    """The fact's verdict in a request's text: `verbatim` (the planted words are there), `restated` (every
    required token is there), `stale` (a superseded value is named after the last mention of the current one, or
    with no current one at all: the model would take it as current), else `lost`."""
    lines = [normalize(line) for line in text.splitlines()]
    flat = normalize(text)
    if fact.stale:

        def current(line: str) -> bool:
            return all(normalize(t) in line for t in fact.required)

        stale_at = [
            i for i, line in enumerate(lines) if any(normalize(s) in line for s in fact.stale) and not current(line)
        ]
        current_at = [i for i, line in enumerate(lines) if current(line)]
        # The latest mention wins, as the model reads the request: a stale value after the last current one (or
        # with no current one) is carried as current.
        if stale_at and (not current_at or stale_at[-1] > current_at[-1]):
            return "stale"
    if normalize(fact.text) in flat:
        return "verbatim"
    if all(normalize(t) in flat for t in fact.required):
        return "restated"
    return "lost"


def probe_all(facts: Sequence[Fact], text: str) -> dict[str, Verdict]:
    """Verdicts by fact id."""
    return {f.id: probe(f, text) for f in facts}


def answer_lines(reply: str) -> dict[int, str]:
    """A model's numbered answers ("3: ..." / "3. ..." / "3) ..."), by number; later lines of one answer join it."""
    found: dict[int, str] = {}
    current: int | None = None
    for raw in reply.splitlines():
        match = re.match(r"\s*\**\s*(\d+)\s*[:.)]\**\s*(.*)", raw)
        if match:
            current = int(match.group(1))
            found[current] = match.group(2)
        elif current is not None and raw.strip():
            found[current] += " " + raw.strip()
    return found


def score_answer(fact: Fact, answer: str | None) -> bool:
    """Exact-match rule: the answer holds every answer token (case and spacing ignored) and, for a superseded
    value, not the stale one."""
    if answer is None:
        return False
    flat = normalize(answer)
    if any(normalize(s.split()[0]) in flat.split() for s in fact.stale):
        return False
    return all(normalize(t) in flat for t in fact.answer)
