"""The long-session benchmark: its session is deterministic and shaped like a coding agent's, its cost arithmetic
(cacheable prefix, billed equivalent) is right on a tiny session, and the reference gets full re-reads."""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import asdict
from typing import Any

import msgspec

from bench.long_session import replay
from bench.prompt_metrics import (
    MIN_CACHEABLE,
    Request,
    Totals,
    asks_for_snapshot,
    billed,
    cacheable_tokens,
    common_prefix,
    request_items,
    shared_prefix_bytes,
)
from bench.session_plan import Plan, Round, Turn, session_plan
from sidecar.fakegemini import prompt_tokens


def digest(plan: Plan) -> str:
    return hashlib.sha256(msgspec.json.encode([plan.files, [asdict(t) for t in plan.turns]])).hexdigest()


def test_the_same_turns_and_seed_give_the_same_session() -> None:
    assert digest(session_plan(30)) == digest(session_plan(30))
    assert digest(session_plan(30, seed=8)) != digest(session_plan(30))
    assert session_plan(30).turns == session_plan(60).turns[:30], "a longer session starts like a shorter one"


def test_the_session_has_the_generator_shapes() -> None:
    plan = session_plan(200)
    sizes = [len(text.encode()) for text in plan.files.values()]
    assert min(sizes) >= 1_000 and max(sizes) <= 260_000 and max(sizes) > 100_000
    text = "".join(plan.files.values())
    cjk = sum(1 for ch in text if unicodedata.east_asian_width(ch) == "W") / len(text)
    assert 0.05 < cjk < 0.15, cjk
    names = [r.name for t in plan.turns for r in t.rounds]
    assert {"read_file", "run_shell_command", "replace", "write_file"} <= set(names)
    assert plan.re_reads > plan.reads // 4, "many reads come back to files read lately"
    assert len(plan.script(0)) == plan.steps_per_turn[0] and plan.script(0)[-1]["kind"] == "text"


def body(*contents: str, system: str = "You are an agent. " * 600) -> dict[str, Any]:
    return {
        "contents": [{"role": "user", "parts": [{"text": c}]} for c in contents],
        "systemInstruction": {"parts": [{"text": system}]},
        "tools": [{"functionDeclarations": [{"name": "read_file"}]}],
    }


def test_the_cacheable_prefix_and_the_billed_equivalent_of_a_tiny_session() -> None:
    assert common_prefix(b"abcdef", b"abcxyz") == 3 and common_prefix(b"abc", b"abc") == 3
    first = body("hello " * 100)
    second = body("hello " * 100, "next")  # the whole first prompt again, then more
    third = body("bye", system="another system prompt")  # nothing in common
    items = [request_items(b) for b in (first, second, third)]
    shared = shared_prefix_bytes(items[0], items[1])
    assert shared == sum(len(i) for i in items[0]), "every item of the first request"
    assert shared_prefix_bytes(items[1], items[2]) < 40, "only the opening bytes of the system instruction"
    prompts = [prompt_tokens(b) for b in (first, second, third)]
    cached = cacheable_tokens(shared, prompts[1])
    assert cached == shared // 4 >= MIN_CACHEABLE
    assert cacheable_tokens(MIN_CACHEABLE * 4 - 4, 10**6) == 0, "below the minimum nothing is cached"
    assert cacheable_tokens(10**9, prompts[1]) == prompts[1], "never more than the prompt"
    assert billed(1000, 400) == 600 + 100
    session = [Request("chat", prompts[0], 0), Request("chat", prompts[1], cached), Request("summary", 5000, 0)]
    totals = Totals.of(session)
    assert totals.prompt == prompts[0] + prompts[1] + 5000 and totals.cached == cached
    assert totals.billed == prompts[0] + (prompts[1] - cached) + 0.25 * cached + 5000
    assert (totals.peak, totals.summary_calls, totals.summary_prompt, totals.chat_requests) == (5000, 1, 5000, 2)


WHOLE = "the whole file\n" * 40


def result(output: str, call_id: str) -> dict[str, Any]:
    response = {"name": "read_file", "id": call_id, "response": {"output": output}}
    return {"role": "user", "parts": [{"functionResponse": response}]}


def test_the_reference_gets_a_full_re_read_where_the_sidecar_sent_a_note() -> None:
    read = Round("read_file", {"path": "a.py"})
    plan = Plan(files={}, turns=[Turn("go", [read, read, Round("replace", {"path": "a.py"}), read], "done")])
    plan.steps_per_turn = [5]
    head = {"role": "user", "parts": [{"text": "<session_context>"}]}
    tails = [
        [head, {"role": "user", "parts": [{"text": "go"}]}],
        [{}, result(WHOLE, "c1")],
        [{}, result("a.py is unchanged since the result of call c1", "c2")],
        [{}, result("ok", "c3")],
        [{}, result("the edited file", "c4")],
    ]
    session = replay(plan, [Request("chat", 1, 0, tail) for tail in tails], [head])
    users = [step["user"] for step in session["steps"]]
    assert session["head"] == [head]
    assert users[2] == result(WHOLE, "c2"), "the re-read, in full, under its own call id"
    assert users[4] == result("the edited file", "c4"), "after an edit a read is new"
    assert session["re_reads"]["count"] == 1
    assert session["re_reads"]["sidecar_tokens"] < session["re_reads"]["reference_tokens"]
    assert session["steps"][1]["model"] == {"role": "model", "parts": [{"functionCall": read_call()}]}


def read_call() -> dict[str, Any]:
    return {"name": "read_file", "args": {"path": "a.py"}}


def test_a_summary_request_is_known_by_its_last_turn_whatever_its_system_instruction() -> None:
    assert asks_for_snapshot(body("history", "Generate a new <state_snapshot> based on the provided history."))
    assert not asks_for_snapshot(body("<state_snapshot>old summary</state_snapshot>", "a new message"))
