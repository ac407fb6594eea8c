"""Planted facts of known types: what each one says, where it goes, and the exact-match rules that find it again."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

#: The fact types, in the order the tables show them.
FACT_TYPES = (
    "constraint",
    "decision",
    "file_path",
    "error_message",
    "number",
    "name",
    "superseded",
    "memory_instruction",
    "pin",
    "todo",
)
#: Types whose survival is ours to guarantee whatever the summarizer does (they travel outside the summary).
GUARANTEED = frozenset({"memory_instruction", "pin", "todo"})
#: Types with no shipped mechanism yet: listed in every table as "not shipped", with what would plant them.
NOT_SHIPPED: dict[str, str] = {}

Where = Literal["user", "tool_call", "tool_output", "memory_file", "pin", "todo"]


@dataclass(frozen=True)
class Fact:
    """One planted fact and its exact-match rules (all lower-cased comparisons).

    `text` is what was planted, word for word. `required`: every token must be in the request for the fact to be
    there (verbatim, or restated with its exact values). `stale`: a superseded value; a line of the request naming
    it without the current value means the stale value was carried as current. `question`/`answer`: what the real
    model is asked, and the tokens its answer line must hold.
    """

    id: str
    type: str
    text: str
    required: tuple[str, ...]
    question: str
    answer: tuple[str, ...]
    where: Where = "user"
    stale: tuple[str, ...] = ()
    #: The segment (0 = before the first compaction) the fact is planted in.
    segment: int = 0


@dataclass
class Planted:
    """What a planter adds to a session: facts, and how each enters (messages, memory file lines, pins)."""

    facts: list[Fact] = field(default_factory=list)
    #: (segment, position in the segment as a fraction 0..1, kind, payload): kind "user" (text), "tool" (a
    #: (tool name, args, output) triple).
    messages: list[tuple[int, float, str, Any]] = field(default_factory=list)
    memory_lines: list[str] = field(default_factory=list)
    pins: list[str] = field(default_factory=list)
    #: The model's todo list (write_todos' items: description, status), set once before the session's first turn.
    todos: list[dict[str, str]] = field(default_factory=list)


_FIRST = ("Ilse", "Tomasz", "Amara", "Kenji", "Oluwaseun", "Mireille", "Dagny", "Rafael", "Yevgenia", "Bartholomew")
_LAST = ("Varkonyi", "Okonkwo", "Lindqvist", "Achterberg", "Szymanska", "Quintero", "Haraldsen", "Mbeki", "Castellanos")
_NOUNS = ("loader", "indexer", "scheduler", "exporter", "tokenizer", "watcher", "resolver", "uploader")


def _hex(r: random.Random, n: int = 4) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _plant_constraint(r: random.Random, seg: int, n: int) -> Planted:
    fn = f"parse_{r.choice(_NOUNS)}_{_hex(r)}"
    text = f"Never change the signature of {fn}(): the plugin host calls it positionally."
    fact = Fact(
        f"constraint-{n}",
        "constraint",
        text,
        (fn, "signature"),
        "Which function's signature must never change?",
        (fn,),
        segment=seg,
    )
    return Planted([fact], [(seg, 0.1, "user", text)])


def _plant_decision(r: random.Random, seg: int, n: int) -> Planted:
    lib = f"ringq-{_hex(r)}"
    text = f"Let's go with {lib} for the event queue instead of asyncio.Queue; it is decided."
    fact = Fact(
        f"decision-{n}",
        "decision",
        text,
        (lib, "event queue"),
        "Which library did we decide to use for the event queue?",
        (lib,),
        segment=seg,
    )
    return Planted([fact], [(seg, 0.2, "user", text)])


def _plant_file_path(r: random.Random, seg: int, n: int) -> Planted:
    path = f"src/{r.choice(_NOUNS)}_{_hex(r)}/{r.choice(_NOUNS)}_core.py"
    fact = Fact(
        f"file_path-{n}",
        "file_path",
        path,
        (path,),
        "Which file under src/ holds the core module we read and edited first?",
        (path,),
        where="tool_call",
        segment=seg,
    )
    body = "\n".join(f"    line_{i} = compute({i})" for i in range(40))
    return Planted([fact], [(seg, 0.3, "tool", ("read_file", {"absolute_path": f"/work/app/{path}"}, body))])


def _plant_error(r: random.Random, seg: int, n: int) -> Planted:
    offset = r.randrange(10_000, 99_999)
    test = f"test_{r.choice(_NOUNS)}_{_hex(r)}"
    error = f"ValueError: checksum mismatch at offset {offset}"
    line = f"FAILED tests/test_pipeline.py::{test} - {error}"
    output = "\n".join(
        [
            "============ test session starts ============",
            "collected 212 items",
            "",
            *(f"tests/test_pipeline.py::test_ok_{i} PASSED" for i in range(12)),
            line,
            "============ 1 failed, 211 passed in 4.21s ============",
        ]
    )
    fact = Fact(
        f"error_message-{n}",
        "error_message",
        error,
        (f"checksum mismatch at offset {offset}",),
        "What exact error did the failing test report?",
        (str(offset),),
        where="tool_output",
        segment=seg,
    )
    args = {"command": "python -m pytest -x tests/test_pipeline.py", "timeout": 120}
    return Planted([fact], [(seg, 0.4, "tool", ("run_shell_command", args, output))])


def _plant_number(r: random.Random, seg: int, n: int) -> Planted:
    value = r.randrange(10_000, 99_999)
    text = f"The upload size limit for the importer is {value} KB; use exactly that number."
    fact = Fact(
        f"number-{n}",
        "number",
        text,
        (str(value), "upload"),
        "What is the importer's upload size limit in KB?",
        (str(value),),
        segment=seg,
    )
    return Planted([fact], [(seg, 0.5, "user", text)])


def _plant_name(r: random.Random, seg: int, n: int) -> Planted:
    who = f"{r.choice(_FIRST)} {r.choice(_LAST)}"
    text = f"The reviewer for the exporter change is {who}; tag them on the pull request."
    fact = Fact(
        f"name-{n}",
        "name",
        text,
        (who.lower(),),
        "Who is the reviewer for the exporter change?",
        (who.lower(),),
        segment=seg,
    )
    return Planted([fact], [(seg, 0.15, "user", text)])


def _plant_superseded(r: random.Random, seg: int, n: int) -> Planted:
    old, new = r.randrange(11, 49), r.randrange(51, 99)
    first = f"Set the fetcher's retry budget to {old} attempts."
    later = f"Change of plan: the fetcher's retry budget is now {new} attempts."
    fact = Fact(
        f"superseded-{n}",
        "superseded",
        later,
        (f"{new} attempts", "retry budget"),
        "What is the fetcher's retry budget now (a number of attempts)?",
        (str(new),),
        stale=(f"{old} attempts",),
        segment=seg,
    )
    return Planted([fact], [(seg, 0.05, "user", first), (seg, 0.45, "user", later)])


def _plant_memory(r: random.Random, seg: int, n: int) -> Planted:
    target = f"make verify-{_hex(r)}"
    text = f"Always run `{target}` before you commit."
    fact = Fact(
        f"memory_instruction-{n}",
        "memory_instruction",
        text,
        (target,),
        "Which make target must run before every commit?",
        (target,),
        where="memory_file",
        segment=seg,
    )
    return Planted([fact], memory_lines=[text])


def _plant_pin(r: random.Random, seg: int, n: int) -> Planted:
    host = f"db-{_hex(r, 6)}.internal"
    text = f"The staging database host is {host}:5433."
    fact = Fact(
        f"pin-{n}", "pin", text, (host,), "What is the staging database host?", (host,), where="pin", segment=seg
    )
    return Planted([fact], pins=[text])


def _plant_todo(r: random.Random, seg: int, n: int) -> Planted:
    step = f"migrate the {r.choice(_NOUNS)} to schema v{r.randrange(3, 9)}-{_hex(r)}"
    text = f"Next: {step}"
    fact = Fact(
        f"todo-{n}", "todo", text, (step,), "Which todo item is in progress?", (step,), where="todo", segment=seg
    )
    todos = [
        {"description": "read the importer and its tests", "status": "completed"},
        {"description": text, "status": "in_progress"},
        {"description": "run the whole test suite", "status": "pending"},
    ]
    return Planted([fact], todos=todos)


Planter = Callable[[random.Random, int, int], Planted]
#: One planter per type; None marks a type not shipped yet (see NOT_SHIPPED): its slot stays in every report.
PLANTERS: dict[str, Planter | None] = {
    "constraint": _plant_constraint,
    "decision": _plant_decision,
    "file_path": _plant_file_path,
    "error_message": _plant_error,
    "number": _plant_number,
    "name": _plant_name,
    "superseded": _plant_superseded,
    "memory_instruction": _plant_memory,
    "pin": _plant_pin,
    "todo": _plant_todo,
}


def plant(seed: int, segments: tuple[int, ...] = (0,)) -> Planted:
    """One fact of every shipped type in each of `segments` (the memory file, pins and todo list only once, at the
    start: they are set up before the session starts), with seeded, unguessable values."""
    r = random.Random(f"eval-facts-{seed}")
    out = Planted()
    for number, seg in enumerate(segments):
        for kind in FACT_TYPES:
            planter = PLANTERS[kind]
            if planter is None or (kind in ("memory_instruction", "pin", "todo") and number > 0):
                continue
            got = planter(r, seg, number)
            out.facts += got.facts
            out.messages += got.messages
            out.memory_lines += got.memory_lines
            out.pins += got.pins
            out.todos += got.todos
    return out
