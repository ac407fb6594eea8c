"""Pinned facts through the chat service and the real HTTP client: the truncation fallback, and token counts."""

from __future__ import annotations

import json

from sidecar.core.outcome import Status
from sidecar.core.pins import Pin, pins_tokens
from sidecar.core.tokens import estimate_history_tokens
from tests.service.conftest import Rig, conversation, tool_exchange

PIN = Pin("p1", "PINNED: the staging database is read-only")


def chat_requests(rig: Rig) -> list[object]:
    return [r for r in rig.fake.requests() if r.kind == "stream" and not r.summary]


async def test_a_pin_reaches_the_model_after_the_truncation_fallback(rig: Rig) -> None:
    big = "q" * 400_000
    history = [*tool_exchange("cat", big, "a"), *tool_exchange("cat", big, "b"), *conversation(2)]
    rig.load(history, prompt_tokens=220_000)
    rig.set(token_limit=1_048_576, compression_threshold=0.2)
    rig.live.conversation.has_failed_compression_attempt = True  # only truncation is tried now
    rig.live.conversation.set_pins([PIN])
    await rig.chat.send_message("what now?")
    assert [n.status for n in rig.rec.notices] == [Status.CONTENT_TRUNCATED.value]
    last = chat_requests(rig)[-1]
    assert PIN.text in json.dumps(last.body["systemInstruction"])  # type: ignore[attr-defined]
    assert rig.summary_requests() == []


async def test_pins_count_in_the_estimate_and_after_an_estimated_compaction(rig: Rig) -> None:
    rig.load(conversation(20), prompt_tokens=60_000, source="estimate")
    conv = rig.live.conversation
    estimate = conv.last_prompt_tokens
    conv.set_pins([PIN])
    assert conv.pinned_tokens == pins_tokens([PIN]) > 0
    assert conv.last_prompt_tokens == estimate + conv.pinned_tokens
    conv.replace(conv.history)  # any history replacement re-estimates, pins included
    assert conv.last_prompt_tokens == conv.estimated_tokens() + conv.pinned_tokens
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSED"
    assert result.new_token_count == estimate_history_tokens(conv.history) + conv.pinned_tokens
    asked = rig.summary_requests()
    assert asked and all(PIN.text in json.dumps(r.body["contents"][-1]) for r in asked)
    conv.set_pins([])
    assert conv.last_prompt_tokens == result.new_token_count - pins_tokens([PIN])
