"""Background compaction through the real sidecar process: prepared while the user chats, applied without waiting."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.harness import EditorClient, notes, request, wait_for
from tests.e2e.test_compaction_and_ide_context import editor, latest_context, next_prompt
from tests.waiting import until

PADDING = " ".join(f"word{i}" for i in range(120))
LIMIT, THRESHOLD = 12_000, 0.5  # compaction at 6,000 tokens; preparation from 0.8 x that = 4,800
#: A summary call the fake holds while the test chats must still be that one call when the test releases it. The
#: harness's requestTimeoutMs (10 s) can be shorter than those turns take on a loaded machine: the sidecar then gives
#: the held call up and retries it (a third summary request, not held). So this test runs the shipped 120 s.
HELD_CALL_TIMEOUT_MS = 120_000


async def say(client: EditorClient, text: str) -> dict[str, Any]:
    return await request(client, "sidecar/sendMessage", {"text": f"{text} {PADDING}"})  # type: ignore[no-any-return]


async def say_until(client: EditorClient, tokens: float, label: str, *, checked: bool = False) -> list[str]:
    """Send messages until the reported prompt reaches `tokens` (`checked`: until the size the next turn's
    compaction check sees does, tests.e2e.test_compaction_and_ide_context.next_prompt); the texts sent."""
    sent: list[str] = []
    for i in range(40):
        text = f"{label} {i} about src/app/module_{i}.py:"
        reply = await say(client, text)
        sent.append(text)
        if (next_prompt(reply) if checked else reply["usage"]["promptTokenCount"]) >= tokens:
            return sent
    raise AssertionError(f"the prompt never reached {tokens} tokens")


def preparation_states(client: EditorClient, start: int = 0) -> list[str]:
    states = [u["summaryPreparation"] for u in notes(client, "sidecar/tokenUsage")[start:]]
    return [s for i, s in enumerate(states) if i == 0 or s != states[i - 1]]


def summary_requests(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.summary]


@pytest.mark.settings(tokenLimit=LIMIT, compressionThreshold=THRESHOLD, requestTimeoutMs=HELD_CALL_TIMEOUT_MS)
async def test_a_summary_prepared_in_the_background_is_applied_without_waiting(client: EditorClient, fake: Any) -> None:
    client.notify("sidecar/ideContext", editor())
    fake.script([{"kind": "hold", "match": "summary"}])
    mark = len(notes(client, "sidecar/tokenUsage"))
    early = await say_until(client, 0.8 * THRESHOLD * LIMIT, "before")
    await wait_for(client, "sidecar/tokenUsage", lambda u: u["summaryPreparation"] == "preparing", start=mark)
    # The turns below run while the summarizer is being asked: its call is at the fake, held.
    await until(lambda: summary_requests(fake), "the preparation's summary call at the fake")
    during = await say_until(client, 0.9 * THRESHOLD * LIMIT, "during")
    assert len(summary_requests(fake)) == 1, "the held summary call was given up and made again"
    fake.release()
    await wait_for(client, "sidecar/tokenUsage", lambda u: u["summaryPreparation"] == "ready", start=mark)
    after = await say_until(client, THRESHOLD * LIMIT, "after", checked=True)
    assert notes(client, "sidecar/compressed") == []
    client.notify("sidecar/ideContext", editor(line=9))
    await say(client, "the compacting turn")

    notice = await wait_for(client, "sidecar/compressed")
    assert (notice["status"], notice["trigger"]) == ("COMPRESSED", "auto")
    requests = fake.requests()
    compacting = next(r.index for r in requests if r.kind == "stream" and "the compacting turn" in str(r.body))
    # The preparation's two passes, and none in the compacting turn. (In so small a window the history is soon
    # past the preparation point again: a new preparation may start after that turn.)
    assert len([r for r in requests if r.summary and r.index < compacting]) == 2
    assert preparation_states(client, mark)[:4] == ["none", "preparing", "ready", "none"]  # "none": applied
    kind, payload = latest_context(fake) or ("", {})
    assert kind == "full" and payload["activeFile"]["cursor"] == {"line": 9, "character": 10}
    last_chat = next(r for r in requests if r.index == compacting)
    sent_to_model = [p.get("text", "") for c in last_chat.body["contents"] for p in c["parts"]]
    for text in [*during, *after, "the compacting turn"]:
        assert any(t.startswith(text) for t in sent_to_model)  # verbatim after the snapshot
    assert not any(t.startswith(early[0]) for t in sent_to_model)  # summarised
    assert sent_to_model[1].startswith("<state_snapshot>")
    transcript = await request(client, "sidecar/getTranscript", {})
    said = [e["text"] for e in transcript["entries"] if e["type"] == "message" and e["role"] == "user"]
    for text in [*early, *during, *after, "the compacting turn"]:
        assert any(s.startswith(text) for s in said)
    assert [e["status"] for e in transcript["entries"] if e["type"] == "compaction"] == ["COMPRESSED"]
    assert client.messages(1) == [] and client.messages(2) == []  # no MessageType.Error / Warning
    titles = [r.get("title") for rs in client.progress().values() for r in rs]
    assert titles.count("Compressing conversation") <= 1  # only the compacting turn; the preparation shows none


@pytest.mark.settings(tokenLimit=LIMIT, compressionThreshold=THRESHOLD)
async def test_a_model_change_discards_the_prepared_summary(client: EditorClient, fake: Any) -> None:
    mark = len(notes(client, "sidecar/tokenUsage"))
    await say_until(client, 0.8 * THRESHOLD * LIMIT, "before")
    await wait_for(client, "sidecar/tokenUsage", lambda u: u["summaryPreparation"] == "ready", start=mark)
    mark = len(notes(client, "sidecar/tokenUsage"))
    client.notify("workspace/didChangeConfiguration", {"settings": {"sidecar": {"model": "gemini-2.5-pro"}}})
    usage = await wait_for(client, "sidecar/tokenUsage", lambda u: u["model"] == "gemini-2.5-pro", start=mark)
    assert usage["summaryPreparation"] == "none"
    before = len([r for r in fake.requests() if r.summary])
    await say_until(client, THRESHOLD * LIMIT, "after")
    await say(client, "the compacting turn")
    notice = await wait_for(client, "sidecar/compressed")
    assert notice["status"] == "COMPRESSED"
    fresh = [r for r in fake.requests() if r.summary][before:]
    assert fresh and {r.model for r in fresh} == {"gemini-2.5-pro"}


@pytest.mark.parametrize("action", ["sidecar/newSession", "sidecar/resumeSession", "sidecar/undoCompaction"])
@pytest.mark.settings(tokenLimit=LIMIT, compressionThreshold=THRESHOLD)
async def test_new_session_resume_and_undo_discard_the_prepared_summary(
    client: EditorClient, fake: Any, action: str
) -> None:
    if action == "sidecar/undoCompaction":  # something to undo first
        await say_until(client, 0.6 * THRESHOLD * LIMIT, "first")
        assert (await request(client, "sidecar/compress", {}))["status"] == "COMPRESSED"
    mark = len(notes(client, "sidecar/tokenUsage"))
    await say_until(client, 0.8 * THRESHOLD * LIMIT, "before")
    ready = await wait_for(client, "sidecar/tokenUsage", lambda u: u["summaryPreparation"] == "ready", start=mark)
    mark = len(notes(client, "sidecar/tokenUsage"))
    params = {"sessionId": ready["sessionId"]} if action == "sidecar/resumeSession" else {}
    result = await request(client, action, params)
    assert result.get("restored", True)
    # The action pushes its usage before it answers: every push since the mark is about the replaced history.
    pushed = notes(client, "sidecar/tokenUsage")[mark:]
    assert pushed and [u["summaryPreparation"] for u in pushed] == ["none"] * len(pushed)
    assert (await request(client, "sidecar/getTokenUsage", {}))["summaryPreparation"] == "none"
