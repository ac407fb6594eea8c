"""The byte-identical prefix share of two requests, in the order the model reads them."""

from __future__ import annotations

from sidecar.core.request_prefix import common_prefix_length, prefix_share


def body(system: str, *texts: str) -> dict[str, object]:
    return {
        "contents": [{"role": "user", "parts": [{"text": t}]} for t in texts],
        "systemInstruction": {"parts": [{"text": system}]},
        "generationConfig": {},
    }


def test_common_prefix_length_across_blocks() -> None:
    a = b"x" * 10_000 + b"abc"
    assert common_prefix_length(a, a + b"more") == len(a)
    assert common_prefix_length(a, b"x" * 9_000 + b"y") == 9_000
    assert common_prefix_length(b"", a) == 0


def test_a_request_extending_the_previous_one_shares_its_whole_prompt() -> None:
    chat = body("agent", "one " * 500, "two " * 500)
    summary = body("agent", "one " * 500, "two " * 500, "summarise")
    assert 0.9 < prefix_share(summary, chat) < 1.0
    assert prefix_share(chat, summary) == 1.0


def test_another_system_instruction_shares_almost_nothing() -> None:
    chat = body("agent", "one " * 500)
    summary = body("summarizer", "one " * 500, "summarise")
    assert prefix_share(summary, chat) < 0.01
