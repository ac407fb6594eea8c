"""Background compaction and the process's life: a shutdown during a preparation ends it cleanly, records nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reliability.conftest import Spawn
from tests.reliability.proc import RpcError, Sidecar, records

PADDING = " ".join(f"word{i}" for i in range(120))
#: The summary call the fake holds while a test chats must stay that one call however slow the machine: the suite's
#: requestTimeoutMs (10 s) would have the sidecar give it up and retry it. The shipped default does not.
HELD_CALL_TIMEOUT_MS = 120_000


async def to_preparation(side: Sidecar, fake: Any) -> list[str]:
    """Chat until a preparation starts; the summary call is held at the fake. Returns the texts sent."""
    fake.script([{"kind": "hold", "match": "summary"}])
    sent = []
    for i in range(40):
        sent.append(f"step {i}: change lib/unit_{i}.py {PADDING}")
        reply = await side.say(sent[-1])
        if reply["usage"]["promptTokenCount"] >= 0.8 * 0.5 * 12_000:
            break
    await side.wait_note("sidecar/tokenUsage", lambda u: u["summaryPreparation"] == "preparing")
    return sent


async def test_shutdown_during_a_preparation_cancels_it_cleanly_and_records_nothing(spawn: Spawn, fake: Any) -> None:
    side = await spawn(tokenLimit=12_000, requestTimeoutMs=HELD_CALL_TIMEOUT_MS)
    sent = await to_preparation(side, fake)
    path = side.session_path()
    mark = len(side.stderr)
    assert await side.client.close() == 0  # shutdown answers at once: the held summary call is abandoned
    fake.release()
    await side.wait_log("the summary being prepared in the background was cancelled", start=mark)
    recorded = records(path)
    assert [r for r in recorded if r["type"] == "compaction"] == []
    texts = [p.get("text", "") for r in recorded if r["type"] == "message" for p in r["content"]["parts"]]
    for text in sent:
        assert text in texts


async def test_cancelling_the_turn_that_waits_for_the_preparation_leaves_it_running(spawn: Spawn, fake: Any) -> None:
    side = await spawn(tokenLimit=12_000, requestTimeoutMs=HELD_CALL_TIMEOUT_MS)
    await to_preparation(side, fake)
    for i in range(40):  # past the threshold, while the summary call is still held
        reply = await side.say(f"more {i} {PADDING}")
        if reply["usage"]["promptTokenCount"] >= 0.5 * 12_000:
            break
    mark = len(side.stderr)
    msg_id = 9_999  # a known id, so that it can be cancelled by id
    answer = side.client.request_now("sidecar/sendMessage", {"text": "cancel me"}, msg_id=msg_id)
    await side.wait_log("the turn waits for the summary being prepared in the background", start=mark)
    side.notify("$/cancelRequest", {"id": msg_id})
    with pytest.raises(RpcError) as caught:
        await answer
    assert caught.value.code == -32800  # RequestCancelled
    assert (await side.ping())["summaryPreparation"] == "preparing"
    fake.release()
    await side.wait_note("sidecar/tokenUsage", lambda u: u["summaryPreparation"] == "ready")
    await side.say("the next turn applies it")
    notice = await side.wait_note("sidecar/compressed")
    assert (notice["status"], notice["trigger"]) == ("COMPRESSED", "auto")
    assert len([r for r in fake.requests() if r.summary]) == 2
