"""Background compaction: a summary prepared while the user chats, applied when the threshold is crossed.

The fake Gemini holds a summary call until the test releases it, so "still preparing" and "ready" are states the
tests wait for (usage pushes, progress reports), never durations.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from sidecar.core.ide_context import FULL_HEADER
from sidecar.core.tokens import estimate_history_tokens
from sidecar.protocol.ide import Cursor, OpenFile
from sidecar.protocol.sessions import TranscriptCompaction, TranscriptMessage
from tests.service.conftest import Rig, conversation, snapshot_text
from tests.waiting import until

WAITING = "report:Waiting for the summary being prepared in the background"


def pushed(rig: Rig, state: str, start: int = 0) -> Callable[[], bool]:
    return lambda: any(u.summary_preparation == state for u in rig.rec.usages[start:])


def aim(rig: Rig, fraction: float) -> None:
    """Make the fake count the current history at `fraction` of the threshold (its counts are scaled)."""
    estimate = max(1, estimate_history_tokens(rig.live.conversation.history))
    threshold = rig.settings.compression_threshold * rig.settings.effective_token_limit()
    rig.fake.set_token_multiplier(fraction * threshold / estimate)


def near_threshold(rig: Rig, n: int = 20) -> None:
    """A history that the next turn's API count puts past the preparation point, under the threshold."""
    rig.load(conversation(n), prompt_tokens=0, source="estimate")
    aim(rig, 0.88)


async def recorded_near_threshold(rig: Rig, n: int = 12) -> None:
    """As near_threshold, but every message was sent (and recorded) through the chat service."""
    rig.set(background_compaction=False)
    for i in range(n):
        await rig.chat.send_message(f"Step {i}: please work on src/mod_{i}.py." + f" detail-{i}" * 800)
    rig.set(background_compaction=True)
    aim(rig, 0.88)


async def start_preparation(rig: Rig, hold: bool = True) -> int:
    """A turn whose count crosses the preparation point; returns once the summarizer is being asked: the
    'preparing' push was sent and the fake has the summary request (so counts of summary requests taken after this
    include it, whatever the machine's speed)."""
    if hold:
        rig.fake.script([{"kind": "hold", "match": "summary"}])
    mark = len(rig.rec.usages)
    asked = len(rig.summary_requests())
    await rig.chat.send_message("this turn crosses the preparation point")
    await until(pushed(rig, "preparing", mark), "a 'preparing summary' usage push")
    await until(lambda: len(rig.summary_requests()) > asked, "the summary request at the fake")
    return mark


def user_texts(rig: Rig) -> list[str]:
    return [p.text or "" for c in rig.live.conversation.history if c.role == "user" for p in c.parts]


def transcript_texts(rig: Rig) -> list[str]:
    entries = rig.live.recorder.transcript(rig.live.conversation.session_id)
    return [e.text for e in entries if isinstance(e, TranscriptMessage) and e.role == "user"]


async def test_prepared_summary_is_applied_and_keeps_every_message_sent_during_preparation(rig: Rig) -> None:
    await recorded_near_threshold(rig)
    prefix = len(rig.live.conversation) + 2  # the turn that starts it adds its message and the reply
    await start_preparation(rig)
    assert rig.rec.hooks == ["auto"]  # PreCompress fires when the preparation starts
    during = [f"sent while the summary is prepared #{i}" for i in range(3)]
    for text in during:
        await rig.chat.send_message(text)  # nobody waits for the held summary call
    assert rig.live.usage().summary_preparation == "preparing"
    mark = len(rig.rec.usages)
    rig.fake.release()
    await until(pushed(rig, "ready", mark), "a 'summary ready' usage push")
    aim(rig, 1.05)
    await rig.chat.send_message("this turn crosses the threshold")
    assert rig.rec.notices == []
    rig.live.set_ide_context([OpenFile(path="/ws/a.py", timestamp=1, is_active=True, cursor=Cursor(3, 1))], True)
    await rig.chat.send_message("the next step")  # applies the prepared summary at once

    assert [(n.status, n.trigger) for n in rig.rec.notices] == [("COMPRESSED", "auto")]
    summaries = rig.summary_requests()
    assert len(summaries) == 2  # the preparation's two passes, nothing in the compacting turn
    asked = json.dumps([r.body["contents"] for r in summaries])
    assert not any(text in asked for text in during)  # the prefix was fixed when the preparation started
    assert all(len(r.body["contents"]) <= prefix for r in summaries)
    history = user_texts(rig)
    assert history[1].startswith("<state_snapshot>")
    for text in [*during, "this turn crosses the threshold", "the next step"]:
        assert text in history  # verbatim, after the snapshot
    assert rig.rec.hooks == ["auto"]  # once per compaction, not again when applied
    chats = [r for r in rig.fake.requests() if r.kind == "stream"]
    context = [c["parts"][0].get("text", "") for c in chats[-1].body["contents"]]
    assert any(t.startswith(FULL_HEADER) for t in context)  # the full IDE context after the replacement
    for text in ["this turn crosses the preparation point", *during, "the next step"]:
        assert text in transcript_texts(rig)
    entries = rig.live.recorder.transcript(rig.live.conversation.session_id)
    assert [(e.trigger, e.status) for e in entries if isinstance(e, TranscriptCompaction)] == [("auto", "COMPRESSED")]
    assert rig.live.usage().summary_preparation == "none"
    # Recorded like any compaction: resume gives the same history, undo brings every recorded message back.
    sessions = rig.services.sessions
    compacted = rig.live.conversation.history
    await sessions.resume(rig.live.conversation.session_id)
    assert rig.live.conversation.history == compacted
    assert (await sessions.undo_compaction()).restored
    restored = user_texts(rig)
    for text in ["this turn crosses the preparation point", *during, "this turn crosses the threshold"]:
        assert text in restored
    assert "the next step" in restored
    assert not any(t.startswith("<state_snapshot>") for t in restored)


async def test_a_turn_before_the_preparation_finishes_waits_for_it_and_starts_no_second(rig: Rig) -> None:
    near_threshold(rig)
    await start_preparation(rig)
    aim(rig, 1.05)
    await rig.chat.send_message("crosses the threshold while the summary is held")
    compacting = asyncio.create_task(rig.chat.send_message("the turn that needs the summary"))
    await until(lambda: WAITING in rig.rec.progress_log, "the turn to wait for the preparation")
    assert rig.rec.progress_log[-2:] == ["begin:Compressing conversation", WAITING]
    rig.fake.release()
    reply = await compacting
    assert reply.text
    assert [n.status for n in rig.rec.notices] == ["COMPRESSED"]
    assert len(rig.summary_requests()) == 2
    assert "the turn that needs the summary" in user_texts(rig)
    assert "the turn that needs the summary" in transcript_texts(rig)


async def test_cancelling_the_waiting_turn_never_cancels_the_preparation(rig: Rig) -> None:
    near_threshold(rig)
    await start_preparation(rig)
    aim(rig, 1.05)
    await rig.chat.send_message("crosses the threshold")
    waiting = asyncio.create_task(rig.chat.send_message("to be cancelled"))
    await until(lambda: WAITING in rig.rec.progress_log, "the turn to wait for the preparation")
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert rig.live.background.in_flight
    mark = len(rig.rec.usages)
    rig.fake.release()
    await until(pushed(rig, "ready", mark), "a 'summary ready' usage push")
    await rig.chat.send_message("after the cancel")
    assert [n.status for n in rig.rec.notices] == ["COMPRESSED"]
    assert len(rig.summary_requests()) == 2


async def _undo_setup(rig: Rig) -> None:
    """A compaction to undo, then a history back at the preparation point."""
    history = conversation(20)
    rig.load(history, prompt_tokens=estimate_history_tokens(history), source="estimate")
    assert (await rig.chat.compress(None)).status == "COMPRESSED"
    # A smaller window, so that the (smaller) history is again most of a prompt at the preparation point.
    rig.set(token_limit=4 * estimate_history_tokens(rig.live.conversation.history))
    aim(rig, 0.88)


async def _new(rig: Rig) -> None:
    await rig.services.sessions.new()


async def _resume(rig: Rig) -> None:
    await rig.services.sessions.resume(rig.live.conversation.session_id)


async def _undo(rig: Rig) -> None:
    assert (await rig.services.sessions.undo_compaction()).restored


async def _fork(rig: Rig) -> None:
    await rig.services.actions.fork(None, None)


async def _pin(rig: Rig) -> None:
    rig.services.actions.pin("the parser keeps byte offsets")


async def _model(rig: Rig) -> None:
    rig.set(model="gemini-2.5-pro")
    rig.live.background.check(rig.live.conversation)  # what the server does after every settings change


@pytest.mark.parametrize(
    "action", [_new, _resume, _undo, _fork, _pin, _model], ids=["new-session", "resume", "undo", "fork", "pin", "model"]
)
async def test_a_preparation_is_discarded_when_its_prefix_or_model_changes(rig: Rig, action: Any) -> None:
    if action is _undo:
        await _undo_setup(rig)
    else:
        near_threshold(rig)
    await start_preparation(rig)
    before = len(rig.summary_requests())
    await action(rig)
    assert not rig.live.background.in_flight  # cancelled, not left running
    assert rig.live.usage().summary_preparation == "none"
    rig.fake.release()  # the held call goes on at the fake; nobody is listening
    if action is _model:
        aim(rig, 1.05)
        await rig.chat.send_message("crosses the threshold")
        await rig.chat.send_message("compacts afresh")
        assert [n.status for n in rig.rec.notices][-1] == "COMPRESSED"
        assert len(rig.summary_requests()) == before + 2  # a new summary, for the new model
        assert {r.model for r in rig.summary_requests()[before:]} == {"gemini-2.5-pro"}


async def test_a_failed_preparation_is_only_logged_and_the_turn_compacts_itself_with_the_latch(rig: Rig) -> None:
    near_threshold(rig)
    rig.fake.script([{"kind": "status", "status": 500, "match": "summary"}])
    await rig.chat.send_message("crosses the preparation point")
    await until(lambda: not rig.live.background.in_flight and len(rig.summary_requests()) == 1, "the failure")
    assert (rig.rec.warnings, rig.rec.errors) == ([], [])  # logged, not shown
    assert rig.live.usage().summary_preparation == "none"
    aim(rig, 1.05)
    await rig.chat.send_message("crosses the threshold")
    assert len(rig.summary_requests()) == 1  # no second preparation after a failure
    # The turn's own (synchronous) attempt inflates: latched, as today.
    rig.fake.script([{"kind": "text", "text": snapshot_text("g", "x " * 60_000), "match": "summary", "times": 2}])
    await rig.chat.send_message("compacts in the turn")
    assert [n.status for n in rig.rec.notices] == ["COMPRESSION_FAILED_INFLATED_TOKEN_COUNT"]
    assert rig.live.conversation.has_failed_compression_attempt
    assert len(rig.summary_requests()) == 3
    await rig.chat.send_message("latched: no preparation either")
    assert not rig.live.background.in_flight and len(rig.summary_requests()) == 3
    for text in ["crosses the threshold", "compacts in the turn", "latched: no preparation either"]:
        assert text in transcript_texts(rig)


async def test_a_prepared_summary_that_saves_too_little_falls_back_to_the_normal_path(rig: Rig) -> None:
    near_threshold(rig)
    big = snapshot_text("g", "y " * 40_000)
    rig.fake.script([{"kind": "text", "text": big, "match": "summary", "times": 2}])
    mark = len(rig.rec.usages)
    await rig.chat.send_message("crosses the preparation point")
    await until(pushed(rig, "ready", mark), "a 'summary ready' usage push")
    aim(rig, 1.05)
    await rig.chat.send_message("crosses the threshold")
    await rig.chat.send_message("compacts")
    assert [n.status for n in rig.rec.notices] == ["COMPRESSED"]  # the fresh summary, not the bloated one
    assert len(rig.summary_requests()) == 4
    assert "y y y" not in (user_texts(rig)[1])
    assert not rig.live.conversation.has_failed_compression_attempt


async def test_shutdown_during_a_preparation_cancels_it_and_records_nothing(rig: Rig) -> None:
    near_threshold(rig)
    await start_preparation(rig)
    await rig.live.background.aclose()
    assert not rig.live.background.in_flight
    assert rig.live.usage().summary_preparation == "none"
    entries = rig.live.recorder.transcript(rig.live.conversation.session_id)
    assert [e for e in entries if isinstance(e, TranscriptCompaction)] == []
    assert rig.rec.notices == []


async def test_manual_compaction_with_focus_text_summarizes_afresh(rig: Rig) -> None:
    near_threshold(rig)
    mark = len(rig.rec.usages)
    await rig.chat.send_message("crosses the preparation point")
    await until(pushed(rig, "ready", mark), "a 'summary ready' usage push")
    result = await rig.chat.compress("keep the parser decisions")
    assert result.status == "COMPRESSED"
    summaries = rig.summary_requests()
    assert len(summaries) == 4  # the preparation's two, then two fresh ones with the focus text
    assert "keep the parser decisions" in summaries[2].body["contents"][-1]["parts"][-1]["text"]
    assert rig.live.usage().summary_preparation == "none"


async def test_manual_compaction_without_focus_text_uses_the_ready_summary(rig: Rig) -> None:
    near_threshold(rig)
    mark = len(rig.rec.usages)
    await rig.chat.send_message("crosses the preparation point")
    await until(pushed(rig, "ready", mark), "a 'summary ready' usage push")
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSED"
    assert result.message.startswith("Chat history compressed from ")
    assert len(rig.summary_requests()) == 2


async def test_background_compaction_off_is_todays_synchronous_flow(rig: Rig) -> None:
    rig.set(background_compaction=False)
    near_threshold(rig)
    await rig.chat.send_message("past the preparation point, but nothing is prepared")
    assert not rig.live.background.in_flight and rig.summary_requests() == []
    aim(rig, 1.05)
    await rig.chat.send_message("crosses the threshold")
    await rig.chat.send_message("compacts in this turn")
    assert [n.status for n in rig.rec.notices] == ["COMPRESSED"]
    assert len(rig.summary_requests()) == 2
    assert all(u.summary_preparation == "none" for u in rig.rec.usages)
    assert rig.rec.progress_log[1].startswith("report:Summarizing")


async def test_the_preparation_point_follows_the_setting(rig: Rig) -> None:
    rig.set(compression_prepare_ratio=0.95)
    near_threshold(rig)  # 88% of the threshold: under 95%
    await rig.chat.send_message("not yet")
    assert not rig.live.background.in_flight and rig.summary_requests() == []
    aim(rig, 0.97)
    await start_preparation(rig, hold=False)


async def test_after_an_undo_auto_compaction_waits_a_tenth_of_the_window_and_then_does_not_wait(rig: Rig) -> None:
    """The turn after "Undo Last Compaction" does not compact again; automatic compaction holds off until
    the prompt grows by a further 10% of the window, and the summary prepared meanwhile is applied without waiting."""
    rig.set(background_compaction=False)
    for i in range(12):
        await rig.chat.send_message(f"Step {i}: please work on src/mod_{i}.py." + f" detail-{i}" * 800)
    history = estimate_history_tokens(rig.live.conversation.history)
    limit = int(history / 0.55)  # the whole history is 110% of the 50% threshold
    rig.set(token_limit=limit, compression_threshold=0.5)
    assert (await rig.chat.compress(None)).status == "COMPRESSED"
    undone = await rig.services.sessions.undo_compaction()
    at_undo = rig.live.conversation.last_prompt_tokens
    assert at_undo >= 0.5 * limit, "the restored history is over the threshold"
    paused = rig.live.usage().auto_compaction_paused_until
    assert paused == at_undo + limit // 10
    assert f"paused until the conversation reaches {paused:,} tokens" in undone.message
    assert rig.rec.usages[-1].auto_compaction_paused_until == paused, "the status bar is told"
    rig.set(background_compaction=True)
    summaries = len(rig.summary_requests())
    aim(rig, 1.1)
    await rig.chat.send_message("the first message after the undo")
    await rig.chat.send_message("still under the pause")
    assert rig.rec.notices[-1].trigger == "manual", "no automatic compaction during the pause"
    await until(lambda: rig.live.usage().summary_preparation == "ready", "the summary prepared in the background")
    assert len(rig.summary_requests()) == summaries + 2
    aim(rig, 1.35)
    await rig.chat.send_message("this one grows past the pause")
    assert rig.live.conversation.last_prompt_tokens >= paused
    assert rig.rec.notices[-1].trigger == "manual"
    mark = len(rig.rec.progress_log)
    await rig.chat.send_message("compacts with the prepared summary")
    assert [(n.trigger, n.status) for n in rig.rec.notices][-1] == ("auto", "COMPRESSED")
    assert WAITING not in rig.rec.progress_log[mark:] and len(rig.summary_requests()) == summaries + 2
    assert rig.live.usage().auto_compaction_paused_until is None


async def test_compressing_by_hand_ends_the_pause_after_an_undo(rig: Rig) -> None:
    rig.set(background_compaction=False)
    for i in range(6):
        await rig.chat.send_message(f"Step {i}: please work on src/mod_{i}.py." + f" detail-{i}" * 800)
    assert (await rig.chat.compress(None)).status == "COMPRESSED"
    await rig.services.sessions.undo_compaction()
    assert rig.live.usage().auto_compaction_paused_until is not None
    await rig.chat.compress(None)
    assert rig.live.usage().auto_compaction_paused_until is None


async def test_the_pause_after_an_undo_survives_a_resume_and_a_turn(rig: Rig) -> None:
    """The pause is recorded (with the undo and with each count while it holds), so resuming the session
    — as a restart of the editor does — does not compact at the next message."""
    rig.set(background_compaction=False)
    for i in range(6):
        await rig.chat.send_message(f"Step {i}: please work on src/mod_{i}.py." + f" detail-{i}" * 800)
    assert (await rig.chat.compress(None)).status == "COMPRESSED"
    await rig.services.sessions.undo_compaction()
    paused = rig.live.usage().auto_compaction_paused_until
    assert paused is not None
    session_id = rig.live.conversation.session_id
    await rig.services.sessions.new()
    assert rig.live.usage().auto_compaction_paused_until is None, "a new session has no pause"
    await rig.services.sessions.resume(session_id)
    assert rig.live.usage().auto_compaction_paused_until == paused, "resume restores the undo's pause"
    await rig.chat.send_message("after the resume")
    await rig.services.sessions.new()
    await rig.services.sessions.resume(session_id)
    assert rig.live.usage().auto_compaction_paused_until == paused, "a turn under the pause records it again"
