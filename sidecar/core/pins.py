"""Pinned facts: the block that carries them to the model (system instruction) and to the summarizer."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from sidecar.core.history import Part
from sidecar.core.todos import TodoItem, summarizer_note
from sidecar.core.tokens import estimate_tokens

PIN_MAX_CHARS = 20_000


class Pin(msgspec.Struct, rename="camel", frozen=True):
    """One pinned fact of a session (its id as recorded, its text exactly as the user gave it)."""

    id: str
    text: str


def pinned_block(pins: Sequence[Pin]) -> str | None:
    """The pinned facts as the model gets them (each one verbatim); None when there are none."""
    if not pins:
        return None
    listed = "\n".join(f"- {pin.text}" for pin in pins)
    return (
        "<pinned_facts>\nThe user pinned these facts. They hold for the whole conversation, whatever the history "
        f"below says or no longer says:\n{listed}\n</pinned_facts>"
    )


def with_pins(system_instruction: str | None, pins: Sequence[Pin]) -> str | None:
    """The system instruction of a chat request: the base one, then the pinned facts (one mechanism for every
    request, so no history rewrite — compaction, truncation, undo, rewind, resume, fork — can lose them)."""
    block = pinned_block(pins)
    if block is None:
        return system_instruction
    return block if not system_instruction else f"{system_instruction}\n\n{block}"


def summarizer_facts(pins: Sequence[Pin], todos: Sequence[TodoItem] = ()) -> str | None:
    """What the summarizer is told about pins (facts the snapshot must keep, word for word) and about the todo
    list (that it exists and is kept apart)."""
    note = summarizer_note(todos)
    if not pins:
        return note
    listed = "\n".join(f"- {pin.text}" for pin in pins)
    facts = (
        "The user pinned the following facts. The snapshot must keep each of them, word for word, in "
        f"<key_knowledge>:\n{listed}"
    )
    return facts if note is None else f"{facts}\n\n{note}"


def pins_tokens(pins: Sequence[Pin]) -> int:
    """The local token estimate of the pinned block a request carries (0 without pins)."""
    block = pinned_block(pins)
    return 0 if block is None else estimate_tokens([Part(text=block)])


def check_pin_text(text: str) -> str | None:
    """Why a pin text is refused, or None when it is fine."""
    if not text.strip():
        return "a pin needs some text"
    if len(text) > PIN_MAX_CHARS:
        return f"a pin holds at most {PIN_MAX_CHARS:,} characters (this one has {len(text):,})"
    return None
