"""The retention check's scan is cached per content: computed when a content enters the conversation, found again by
its bytes at compaction time, with the same facts as a full scan of the history."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest

from bench import generator
from sidecar.core.conversation import Conversation
from sidecar.core.history import Content, FunctionResponse, Part, text_content
from sidecar.core.snapshot import (
    FACT_CACHE,
    FactCache,
    content_facts,
    error_lines,
    mentioned_paths,
    missing_facts,
    user_constraints,
    user_decisions,
)


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    FACT_CACHE.clear()
    yield
    FACT_CACHE.clear()


def shell(output: str, call_id: str = "c1") -> Content:
    response = FunctionResponse(name="run_shell_command", id=call_id, response={"output": output})
    return Content(role="user", parts=[Part(function_response=response)])


def history() -> list[Content]:
    """A generated coding-agent conversation with planted facts of every kind, some repeated across contents."""
    contents = msgspec.json.decode(msgspec.json.encode(generator.conversation(20_000, seed=3)), type=list[Content])
    planted = [
        text_content("user", "Edit src/app/main.py. You must never touch vendor/lib.js. Let's go with option B."),
        shell("ok\nFAILED tests/test_x.py::test_add - assert 1 == 2\nValueError: bad value\n"),
        text_content("model", "I will read src/app/main.py and docs/notes.md next."),
        shell("again\nValueError: bad value\nerror[E0308]: mismatched types\n", "c2"),
        text_content("user", "We'll go with option B. Always run make lint before a commit."),
    ]
    return contents[:10] + planted + contents[10:]


def full_scan(contents: list[Content], snapshot: str) -> list[str]:
    """missing_facts as it was before the cache: each finder over the whole history."""
    normal = " ".join(snapshot.lower().split()).rstrip(".!")

    def kept(text: str) -> bool:
        return " ".join(text.lower().split()).rstrip(".!") in normal

    return (
        [f"file path: {p}" for p in [p for p in mentioned_paths(contents) if p not in snapshot][:40]]
        + [f"user constraint: {c}" for c in [c for c in user_constraints(contents) if not kept(c)][:20]]
        + [f"error: {e}" for e in [e for e in error_lines(contents) if not kept(e)][-20:]]
        + [f"user decision: {d}" for d in [d for d in user_decisions(contents) if not kept(d)][:20]]
    )


def test_the_cached_facts_are_those_of_a_full_scan() -> None:
    contents = history()
    snapshot = "<state_snapshot>src/app/main.py; valueerror: bad value</state_snapshot>"
    expected = full_scan(contents, snapshot)
    assert any(m.startswith("error: FAILED") for m in expected) and any("decision" in m for m in expected)
    assert missing_facts(contents, snapshot) == expected, "cold: every content scanned now"
    assert missing_facts(contents, snapshot) == expected, "warm: every content's facts from the cache"


def test_a_conversation_scans_each_content_once_and_the_compaction_finds_them_by_their_bytes() -> None:
    contents = history()
    conv = Conversation("s", contents[:5])
    for content in contents[5:]:
        conv.append(content)
    assert FACT_CACHE.misses == len(contents) and FACT_CACHE.hits == 0, "scanned as they entered"
    decoded = conv.history  # what a compaction works on: fresh structs decoded from the held bytes
    snapshot = "<state_snapshot></state_snapshot>"
    assert missing_facts(decoded, snapshot) == full_scan(decoded, snapshot)
    assert FACT_CACHE.misses == len(contents), "no content scanned again"
    assert FACT_CACHE.hits == len(contents)


def test_a_replaced_history_keeps_the_facts_of_its_kept_contents() -> None:
    contents = history()
    conv = Conversation("s", contents)
    scanned = FACT_CACHE.misses
    summary = text_content("user", "<state_snapshot>short</state_snapshot>")
    conv.replace([summary, *conv.history[-6:]])
    assert FACT_CACHE.misses == scanned + 1, "only the new summary turn is scanned"


def test_the_cache_holds_at_most_its_budget_oldest_out_first() -> None:
    cache = FactCache(max_bytes=300)
    first, second = shell("ValueError: one " + "x" * 150), shell("ValueError: two " + "y" * 150)
    assert cache.facts(first).errors == ("ValueError: one " + "x" * 150,)
    cache.facts(second)
    assert cache.facts(second) == content_facts(second) and cache.hits == 1
    cache.facts(first)
    assert cache.misses == 3, "the first content was dropped to make room for the second"
