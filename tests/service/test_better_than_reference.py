"""Where the sidecar's compaction goes beyond Gemini CLI: one test per improvement (and the hooks)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import msgspec
import pytest

from sidecar.config.settings import Hooks, HookSpec, Settings
from sidecar.core.history import text_content
from sidecar.core.outcome import Status
from sidecar.hooks.service import HookService
from sidecar.protocol import errors
from sidecar.session import Session
from tests.service.conftest import Rig, conversation, snapshot_text
from tests.waiting import until


def over_threshold(rig: Rig, n: int = 20, source: str = "api") -> None:
    rig.load(conversation(n), prompt_tokens=60_000, source=source)


# 1. focus instructions
async def test_focus_instructions_reach_both_passes(rig: Rig) -> None:
    over_threshold(rig)
    await rig.chat.compress("the database migration and its rollback plan")
    first, second = rig.summary_requests()
    for request in (first, second):
        assert "the database migration and its rollback plan" in request.body["contents"][-1]["parts"][-1]["text"]


# 2. like with like
async def test_recount_uses_count_tokens_for_both_sides_when_the_api_counted(rig: Rig) -> None:
    over_threshold(rig, source="api")
    result = await rig.chat.compress(None)
    counts = [r for r in rig.fake.requests() if r.kind == "count"]
    assert len(counts) == 2
    from sidecar.fakegemini import count_tokens

    new, old = sorted(count_tokens(c.body["contents"]) for c in counts)  # sent at once: in either order
    beyond_history = 60_000 - old  # what the API counted besides the history: system prompt, tools
    assert (result.original_token_count, result.new_token_count) == (60_000, new + beyond_history)
    assert rig.live.conversation.last_prompt_tokens == new + beyond_history
    assert rig.live.conversation.usage_source == "api"


async def test_recount_uses_the_estimate_for_both_sides_without_api_counts(rig: Rig) -> None:
    over_threshold(rig, source="estimate")
    estimate_before = rig.live.conversation.estimated_tokens()
    result = await rig.chat.compress(None)
    assert [r for r in rig.fake.requests() if r.kind == "count"] == []
    # Both sides are estimates of the history; the counts reported add back what the status showed beyond the
    # history (60,000 here), so that they are of the count the status bar shows.
    saved = estimate_before - rig.live.conversation.estimated_tokens()
    assert result.original_token_count == 60_000
    assert result.original_token_count - result.new_token_count == saved


async def test_failed_count_gives_token_count_error_and_keeps_history(rig: Rig) -> None:
    over_threshold(rig)
    before = rig.live.conversation.wire()
    rig.fake.script([{"kind": "status", "status": 500, "match": "count"}])
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSION_FAILED_TOKEN_COUNT_ERROR"
    assert result.message == "Could not compress chat history due to a token counting error."
    assert rig.live.conversation.wire() is before


# 3. no loops
async def test_at_most_one_automatic_compaction_per_turn(rig: Rig) -> None:
    over_threshold(rig)
    rig.fake.script([{"kind": "text", "text": snapshot_text("g", "x " * 40_000), "match": "summary", "times": 10}])
    await rig.chat.send_message("next step please")
    assert len(rig.summary_requests()) == 2
    assert [n.status for n in rig.rec.notices] == ["COMPRESSION_FAILED_INFLATED_TOKEN_COUNT"]


async def test_auto_compaction_that_saves_too_little_is_named_for_that_and_latches(rig: Rig) -> None:
    """A smaller history that saves under 10% is not "inflated": its own status and words."""
    rig.load_just_over_threshold(conversation(6))
    rig.fake.script([{"kind": "text", "text": snapshot_text("g"), "match": "summary", "times": 2}])
    baseline = await rig.chat.compactor.compress(rig.live.conversation, force=True, trigger="manual")
    assert baseline.status is Status.COMPRESSED
    padding = 4 * max(0, int(0.95 * baseline.original) - baseline.new)  # ASCII: 4 characters per fake token
    rig.fake.script([{"kind": "text", "text": snapshot_text("g", "p" * padding), "match": "summary", "times": 4}])
    auto = await rig.chat.compactor.compress(rig.live.conversation, force=False, trigger="auto")
    manual = await rig.chat.compactor.compress(rig.live.conversation, force=True, trigger="manual")
    assert 0.9 * auto.original < auto.new <= auto.original
    assert auto.status is Status.COMPRESSION_FAILED_INSUFFICIENT_REDUCTION
    assert "too little" in auto.message(100_000) and "not beneficial" not in auto.message(100_000)
    assert manual.status is Status.COMPRESSED
    rig.chat._apply(auto, force=False)  # as a turn's automatic attempt: latched like an inflated one
    assert rig.live.conversation.has_failed_compression_attempt


# 4. the summary is validated
async def test_scratchpad_is_stripped_before_the_summary_enters_history(rig: Rig) -> None:
    over_threshold(rig)
    reply = "<scratchpad>private reasoning</scratchpad>\n" + snapshot_text("kept goal")
    rig.fake.script([{"kind": "text", "text": reply, "match": "summary", "times": 2}])
    await rig.chat.compress(None)
    summary = rig.live.conversation.history[1].parts[0].text or ""
    assert summary.startswith("<state_snapshot>") and "private reasoning" not in summary


@pytest.mark.parametrize(
    "reply",
    [
        snapshot_text().replace("<task_state>1. [TODO] continue</task_state>", ""),
        snapshot_text() + snapshot_text(),
        "I summarised it for you: everything is fine.",
        "<state_snapshot><overall_goal>unclosed",
    ],
    ids=["missing-section", "two-snapshots", "prose", "unclosed"],
)
async def test_invalid_summaries_count_as_empty(rig: Rig, reply: str) -> None:
    over_threshold(rig)
    rig.fake.script([{"kind": "text", "text": reply, "match": "summary", "times": 2}])
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSION_FAILED_EMPTY_SUMMARY"
    assert len(rig.live.conversation.history) == 40


async def test_a_function_call_in_the_summary_is_never_executed(rig: Rig) -> None:
    """The summary is asked in the chat's own request, tools declared: a call is not run, and the same request goes
    again with function calling off (toolConfig mode NONE), which the fake, like the API, answers in text."""
    over_threshold(rig)
    call = {"kind": "function_call", "name": "run_shell_command", "args": {"command": "rm -rf /"}, "match": "summary"}
    rig.fake.script([{**call, "times": 2}])
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSED"
    asked = rig.summary_requests()
    assert "toolConfig" not in asked[0].body  # the first ask is byte for byte the chat's frame
    assert asked[1].body["contents"] == asked[0].body["contents"]  # the same request again ...
    assert asked[1].body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}  # ... with calls forbidden
    assert asked[2].body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}  # and so is the verify pass
    assert not any(p.function_call for c in rig.live.conversation.history for p in c.parts)


# 5. the deterministic retention check
async def test_facts_the_first_snapshot_dropped_are_listed_in_the_verify_pass(rig: Rig) -> None:
    history = [
        text_content("user", "Edit lib/storage/engine.rs. You must never change the on-disk format."),
        text_content("model", "Understood."),
        *conversation(20),
    ]
    rig.load(history, prompt_tokens=60_000)
    rig.fake.script([{"kind": "text", "text": snapshot_text("storage"), "match": "summary"}])
    result = await rig.chat.compress(None)
    verify = rig.summary_requests()[1].body["contents"][-1]["parts"][0]["text"]
    assert "file path: lib/storage/engine.rs" in verify
    assert "user constraint: You must never change the on-disk format." in verify
    assert result.status == "COMPRESSED"
    summary = rig.live.conversation.history[1].parts[0].text or ""
    assert "lib/storage/engine.rs" in summary, "the fake's verify pass added the missing path"


# 6. hooks fire only when a compaction runs
async def test_pre_compress_hook_does_not_fire_for_noop(rig: Rig) -> None:
    rig.load(conversation(3), prompt_tokens=10)
    await rig.chat._compact(force=False, trigger="auto")
    await rig.chat.send_message("hello")
    assert rig.rec.hooks == []


async def test_pre_compress_hook_fires_for_a_running_compaction(rig: Rig) -> None:
    over_threshold(rig)
    await rig.chat.compress(None)
    assert rig.rec.hooks == ["manual"]


class _Recording:
    def __init__(self, path: Path) -> None:
        self.path = path


def _hook_service(tmp_path: Path, specs: list[HookSpec], told: list[str]) -> tuple[HookService, Session]:
    session = Session(workspace_folders=[str(tmp_path)])
    session.settings = msgspec.structs.replace(Settings(), hooks=Hooks(pre_compress=specs))
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    return HookService(session, _Recording(transcript), told.append), session


async def test_hook_command_gets_the_documented_stdin(tmp_path: Path) -> None:
    out = tmp_path / "payload.json"
    service, session = _hook_service(tmp_path, [HookSpec(command=f"cat > {out}")], told := [])
    await service.pre_compress("auto")
    payload = json.loads(out.read_text())
    assert {k: payload[k] for k in ("session_id", "transcript_path", "cwd", "hook_event_name", "trigger")} == {
        "session_id": session.conversation.session_id,
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "PreCompress",
        "trigger": "auto",
    }
    assert payload["timestamp"].endswith("Z") and told == []


async def test_hook_matcher_and_failures_are_advisory(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    specs = [
        HookSpec(command=f"echo manual >> {ran}; exit 3", matcher="manual"),
        HookSpec(command=f"echo auto >> {ran}", matcher="auto"),
        HookSpec(command=f"{sys.executable} -c 'import time; time.sleep(30)'", timeout=300, matcher="*"),
    ]
    service, _ = _hook_service(tmp_path, specs, told := [])
    await service.pre_compress("manual")  # returns: neither failure stops the compaction
    assert ran.read_text() == "manual\n"
    assert [t.split("`")[1] for t in told] == [specs[0].command, specs[2].command]
    assert "exited with code 3" in told[0] and "timed out after 300 ms" in told[1]


# 7. model errors never alter history
async def test_model_error_during_manual_compaction_is_named_and_history_unchanged(rig: Rig) -> None:
    over_threshold(rig)
    before = list(rig.live.conversation.history)
    rig.fake.script([{"kind": "status", "status": 503, "match": "summary"}])
    with pytest.raises(errors.SidecarError) as caught:
        await rig.chat.compress(None)
    assert caught.value.code == errors.MODEL_ERROR
    assert "503" in caught.value.message and "unchanged" in caught.value.message
    assert rig.live.conversation.history == before
    assert rig.rec.progress_log[-1] == "end:None"


async def test_model_error_during_auto_compaction_warns_and_the_turn_goes_on(rig: Rig) -> None:
    over_threshold(rig)
    rig.fake.script([{"kind": "status", "status": 500, "match": "summary"}])
    reply = await rig.chat.send_message("carry on")
    assert reply.text
    assert any("Compaction failed" in w for w in rig.rec.warnings)
    assert len(rig.live.conversation.history) == 42


async def test_cancelled_compaction_leaves_history_unchanged(rig: Rig) -> None:
    over_threshold(rig)
    before = list(rig.live.conversation.history)
    rig.fake.script([{"kind": "delay", "seconds": 5, "match": "summary"}])
    task = asyncio.create_task(rig.chat.compress(None))
    await until(lambda: not rig.fake.pending(), "the summary call to reach the fake (its delay step is taken)")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert rig.live.conversation.history == before
    assert not rig.live.compressing


async def test_second_compress_while_one_runs_is_refused(rig: Rig) -> None:
    over_threshold(rig)
    rig.fake.script([{"kind": "delay", "seconds": 1, "match": "summary"}])
    first = asyncio.create_task(rig.chat.compress(None))
    await until(lambda: rig.live.compressing, "the first compaction to be running")
    with pytest.raises(errors.SidecarError) as caught:
        await rig.chat.compress(None)
    assert caught.value.code == errors.BUSY
    assert caught.value.message.startswith("Already compressing")
    assert (await first).status == "COMPRESSED"


async def test_no_summary_calls_when_the_history_is_a_small_part_of_the_prompt(rig: Rig) -> None:
    # The prompt is mostly system prompt and tool declarations: compacting the history could not help.
    rig.load(conversation(2), prompt_tokens=60_000)
    outcome = await rig.chat.compactor.compress(rig.live.conversation, force=False, trigger="auto")
    assert outcome.status is Status.NOOP
    assert rig.summary_requests() == []


async def test_latched_truncation_with_nothing_to_truncate_is_noop(rig: Rig) -> None:
    rig.load_just_over_threshold(conversation(10))
    rig.live.conversation.has_failed_compression_attempt = True
    outcome = await rig.chat._compact(force=False, trigger="auto")
    assert outcome is not None and outcome.status is Status.NOOP
    assert rig.rec.notices == []
