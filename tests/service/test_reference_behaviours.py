"""Gemini CLI's compression behaviours (gemini-cli.md §9), ported one test per behaviour, against the fake over HTTP."""

from __future__ import annotations

import pytest

from sidecar.compaction.service import ALIAS_MODELS, compression_model
from sidecar.config.settings import Settings
from sidecar.core.history import text_content
from sidecar.core.models import compression_model_alias
from sidecar.core.outcome import Status
from sidecar.core.prompts import ACKNOWLEDGEMENT
from sidecar.core.tokens import estimate_history_tokens
from sidecar.protocol import errors
from tests.service.conftest import Rig, conversation, exchange, snapshot_text, tool_exchange


def chat_history_over_threshold(rig: Rig, n: int = 20) -> None:
    rig.load(conversation(n), prompt_tokens=60_000)


# 9–10: model aliases
def test_unknown_model_maps_to_default_alias() -> None:
    assert compression_model_alias("my-own-model") == "chat-compression-default"
    assert compression_model(Settings(model="my-own-model")) == ALIAS_MODELS["chat-compression-default"]


@pytest.mark.parametrize(
    ("model", "alias"),
    [
        ("gemini-3-pro-preview", "chat-compression-3-pro"),
        ("gemini-2.5-pro", "chat-compression-2.5-pro"),
        ("gemini-2.5-flash", "chat-compression-2.5-flash"),
        ("gemini-2.5-flash-lite", "chat-compression-2.5-flash-lite"),
    ],
)
def test_known_models_map_to_their_compression_alias(model: str, alias: str) -> None:
    assert compression_model_alias(model) == alias
    assert compression_model(Settings(model=model)) == ALIAS_MODELS[alias]


def test_compression_model_setting_wins() -> None:
    assert (
        compression_model(Settings(model="gemini-2.5-pro", compression_model="gemini-2.5-flash")) == "gemini-2.5-flash"
    )


# 11–13
async def test_empty_history_is_noop_without_model_call(rig: Rig) -> None:
    result = await rig.chat.compress(None)
    assert (result.status, result.original_token_count, result.new_token_count) == ("NOOP", 0, 0)
    assert rig.fake.requests() == []
    assert result.message == "Nothing to compress."


async def test_single_user_message_is_noop(rig: Rig) -> None:
    rig.load([text_content("user", "hello " * 5000)], prompt_tokens=60_000)
    result = await rig.chat.compress(None)
    assert result.status == "NOOP"
    assert rig.summary_requests() == []


async def test_under_threshold_not_forced_is_noop(rig: Rig) -> None:
    rig.set(compression_threshold=0.7, token_limit=1000)
    rig.load(conversation(4), prompt_tokens=600)
    outcome = await rig.chat.compactor.compress(rig.live.conversation, force=False, trigger="auto")
    assert (outcome.status, outcome.new_history) == (Status.NOOP, None)
    assert rig.summary_requests() == []


# 14–16
async def test_over_threshold_compresses_with_two_model_calls_using_the_verified_summary(rig: Rig) -> None:
    chat_history_over_threshold(rig)
    rig.fake.script(
        [
            {"kind": "text", "text": snapshot_text("first draft"), "match": "summary"},
            {"kind": "text", "text": snapshot_text("verified goal"), "match": "summary"},
        ]
    )
    outcome = await rig.chat.compactor.compress(rig.live.conversation, force=False, trigger="auto")
    assert outcome.status is Status.COMPRESSED
    assert len(rig.summary_requests()) == 2
    assert outcome.new_history is not None
    assert outcome.new_history[0].parts[0].text.startswith("<session_context>")  # type: ignore[union-attr]
    assert "verified goal" in (outcome.new_history[1].parts[0].text or "")
    assert outcome.new_history[2].parts[0].text == ACKNOWLEDGEMENT


async def test_blank_verification_falls_back_to_first_summary(rig: Rig) -> None:
    chat_history_over_threshold(rig)
    rig.fake.script(
        [
            {"kind": "text", "text": snapshot_text("first draft"), "match": "summary"},
            {"kind": "text", "text": "   \n ", "match": "summary", "times": 4},
        ]
    )
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSED"
    assert "first draft" in (rig.live.conversation.history[1].parts[0].text or "")
    assert len(rig.summary_requests()) == 5, "the blank verification was retried 3 times (4 attempts) first"


async def test_previous_snapshot_triggers_the_anchor_instruction(rig: Rig) -> None:
    history = [
        text_content("user", snapshot_text("old goal")),
        text_content("model", ACKNOWLEDGEMENT),
        *conversation(20),
    ]
    rig.load(history, prompt_tokens=60_000)
    await rig.chat.compress(None)
    first = rig.summary_requests()[0].body
    assert "A previous <state_snapshot> exists" in first["contents"][-1]["parts"][-1]["text"]


async def test_no_previous_snapshot_asks_for_a_new_one(rig: Rig) -> None:
    chat_history_over_threshold(rig)
    await rig.chat.compress(None)
    text = rig.summary_requests()[0].body["contents"][-1]["parts"][-1]["text"]
    assert text.startswith("Generate a new <state_snapshot> based on the provided history.")


# 17–18
async def test_approved_plan_path_adds_plan_preservation_section(rig: Rig) -> None:
    rig.set(approved_plan_path="/ws/plans/plan.md")
    chat_history_over_threshold(rig)
    await rig.chat.compress(None)
    prompt = rig.summary_requests()[0].body["contents"][-1]["parts"][0]["text"]  # the compression prompt's part
    assert "### APPROVED PLAN PRESERVATION" in prompt and "/ws/plans/plan.md" in prompt


async def test_no_approved_plan_no_plan_section(rig: Rig) -> None:
    chat_history_over_threshold(rig)
    await rig.chat.compress(None)
    assert "APPROVED PLAN PRESERVATION" not in str(rig.summary_requests()[0].body)


# 19–21
async def test_force_compresses_far_below_threshold(rig: Rig) -> None:
    rig.load(conversation(20), prompt_tokens=10)
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSED"


async def test_inflated_count_fails_with_no_new_history(rig: Rig) -> None:
    chat_history_over_threshold(rig, n=6)
    huge = snapshot_text("goal", extra="x " * 40_000)
    rig.fake.script([{"kind": "text", "text": huge, "match": "summary", "times": 2}])
    before = list(rig.live.conversation.history)
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT"
    assert result.new_token_count > result.original_token_count
    assert rig.live.conversation.history == before


async def test_a_summary_blank_on_every_attempt_fails_the_compaction_with_its_reason(rig: Rig) -> None:
    # Better than the reference (which takes a blank pass 1 as an empty summary at once): a blank reply is retried
    # like a chat reply, and when every attempt is blank the compaction fails naming why; the history is untouched.
    chat_history_over_threshold(rig)
    before = rig.live.conversation.wire()
    rig.fake.script([{"kind": "text", "text": "  ", "match": "summary", "times": 4}])
    with pytest.raises(errors.SidecarError) as caught:
        await rig.chat.compress(None)
    assert caught.value.code == errors.MODEL_ERROR
    assert caught.value.message == (
        "Compaction failed, the conversation is unchanged: Gemini's reply could not be used after 4 attempts: "
        "the reply was empty (no text, no tool call) (NO_RESPONSE_TEXT)."
    )
    assert caught.value.data.kind == "invalidReply" and caught.value.data.reason == "NO_RESPONSE_TEXT"
    assert len(rig.summary_requests()) == 4
    assert rig.live.conversation.wire() is before


async def test_a_summary_that_is_blank_and_then_fine_compacts(rig: Rig) -> None:
    chat_history_over_threshold(rig)
    rig.fake.script([{"kind": "text", "text": "  ", "match": "summary", "times": 2}])
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSED"
    assert len(rig.summary_requests()) == 4  # pass 1 on its third attempt, then pass 2


# 22–27
async def test_older_over_budget_tool_output_in_kept_window_is_saved_and_replaced(rig: Rig) -> None:
    big = "match line\n" * 10_000  # 110k characters, 27.5k tokens each: the two together exceed the 50k budget
    # 70% of the characters lie before the two grep runs, so both land in the kept window.
    history = [*conversation(40, size=7_000), *tool_exchange("grep", big, "g1"), *tool_exchange("grep", big, "g2")]
    rig.load(history, prompt_tokens=60_000)
    outcome = await rig.chat.compactor.compress(rig.live.conversation, force=True, trigger="manual")
    assert outcome.status is Status.COMPRESSED and outcome.new_history is not None
    responses = [p.function_response for c in outcome.new_history for p in c.parts if p.function_response]
    assert [r.id for r in responses] == ["g1", "g2"]
    assert responses[0].response["output"].startswith("Output too large.")
    assert responses[1].response == {"output": big}
    assert list((rig.tmp / "tool-outputs").glob("grep_*.txt"))


async def test_placeholder_shows_first_20_and_last_80_percent_of_threshold(rig: Rig) -> None:
    big = "y" * 400_000
    history = [*conversation(60, size=14_000), *tool_exchange("cat", big, "a"), *tool_exchange("cat", big, "b")]
    rig.load(history, prompt_tokens=0)
    rig.set(token_limit=1_048_576)
    outcome = await rig.chat.compactor.compress(rig.live.conversation, force=True, trigger="manual")
    assert outcome.new_history is not None
    first = next(p.function_response for c in outcome.new_history for p in c.parts if p.function_response)
    assert "Showing first 8,000 and last 32,000 characters" in first.response["output"]


async def test_summarizer_gets_the_original_when_it_fits_the_model_limit(rig: Rig) -> None:
    big = "z" * 170_000
    history = [*tool_exchange("grep", big, "g0"), *tool_exchange("grep", big, "g1"), *conversation(3)]
    rig.load(history, prompt_tokens=95_000)
    rig.set(token_limit=1_048_576)
    await rig.chat.compress(None)
    sent = rig.summary_requests()[0].body["contents"]
    outputs = [p["functionResponse"]["response"]["output"] for c in sent for p in c["parts"] if "functionResponse" in p]
    assert big in outputs, "the summarizer saw the untruncated output"


async def test_summarizer_gets_the_truncated_slice_when_the_original_exceeds_the_limit(rig: Rig) -> None:
    big = "z" * 170_000
    history = [*tool_exchange("grep", big, "g0"), *tool_exchange("grep", big, "g1"), *conversation(3)]
    rig.load(history, prompt_tokens=95_000)
    rig.set(token_limit=60_000)  # the to-compress slice (~85k tokens) no longer fits
    await rig.chat.compress(None)
    sent = rig.summary_requests()[0].body["contents"]
    outputs = [p["functionResponse"]["response"]["output"] for c in sent for p in c["parts"] if "functionResponse" in p]
    assert any(o.startswith("Output too large.") for o in outputs)


# 33–38
async def test_forced_compress_succeeds_after_an_auto_inflated_failure(rig: Rig) -> None:
    rig.load_just_over_threshold(conversation(6))
    rig.fake.script([{"kind": "text", "text": snapshot_text("g", "x " * 40_000), "match": "summary", "times": 2}])
    await rig.chat._compact(force=False, trigger="auto")
    assert rig.live.conversation.has_failed_compression_attempt
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSED"
    assert not rig.live.conversation.has_failed_compression_attempt


async def test_inflated_result_does_not_update_the_token_count(rig: Rig) -> None:
    chat_history_over_threshold(rig, n=6)
    rig.fake.script([{"kind": "text", "text": snapshot_text("g", "x " * 40_000), "match": "summary", "times": 2}])
    await rig.chat.compress(None)
    assert rig.live.conversation.last_prompt_tokens == 60_000


async def test_inflated_result_leaves_the_history_in_place(rig: Rig) -> None:
    chat_history_over_threshold(rig, n=6)
    history = rig.live.conversation.wire()
    rig.fake.script([{"kind": "text", "text": snapshot_text("g", "x " * 40_000), "match": "summary", "times": 2}])
    await rig.chat.compress(None)
    assert rig.live.conversation.wire() is history


async def test_auto_inflated_latches_and_forced_inflated_keeps_the_latch(rig: Rig) -> None:
    rig.load_just_over_threshold(conversation(6))
    rig.fake.script([{"kind": "text", "text": snapshot_text("g", "x " * 40_000), "match": "summary", "times": 4}])
    await rig.chat._compact(force=False, trigger="auto")
    assert rig.live.conversation.has_failed_compression_attempt
    await rig.chat.compress(None)
    assert rig.live.conversation.has_failed_compression_attempt


async def test_latched_auto_attempt_only_truncates(rig: Rig) -> None:
    big = "q" * 400_000
    history = [*tool_exchange("cat", big, "a"), *tool_exchange("cat", big, "b"), *conversation(2)]
    rig.load(history, prompt_tokens=220_000)
    rig.set(token_limit=1_048_576, compression_threshold=0.2)
    rig.live.conversation.has_failed_compression_attempt = True
    outcome = await rig.chat._compact(force=False, trigger="auto")
    assert outcome is not None and outcome.status is Status.CONTENT_TRUNCATED
    assert rig.summary_requests() == []
    assert len(rig.live.conversation.history) == len(history)


async def test_below_threshold_noop_keeps_the_history_object(rig: Rig) -> None:
    rig.load(conversation(4), prompt_tokens=100)
    history = rig.live.conversation.wire()
    await rig.chat._compact(force=False, trigger="auto")
    assert rig.live.conversation.wire() is history


async def test_too_short_history_noop_has_equal_counts(rig: Rig) -> None:
    rig.load(exchange(0)[:1], prompt_tokens=70_000)
    result = await rig.chat.compress(None)
    assert (result.status, result.original_token_count) == ("NOOP", result.new_token_count)


# 40–41 (ours: every non-NOOP attempt is announced, so the editor can show failures too)
async def test_auto_compression_announces_compressed(rig: Rig) -> None:
    chat_history_over_threshold(rig)
    await rig.chat._compact(force=False, trigger="auto")
    (notice,) = rig.rec.notices
    assert (notice.status, notice.trigger) == ("COMPRESSED", "auto")
    before, after = (round(100 * n / 100_000) for n in (notice.original_token_count, notice.new_token_count))
    # the same wording as a manual compaction, tokens and shares of the window
    original, new = notice.original_token_count, notice.new_token_count
    assert notice.message == (
        f"Chat history compressed from {original:,} to {new:,} tokens ({before}% → {after}% of the context window)."
    )
    assert rig.rec.usages[-1].prompt_token_count == notice.new_token_count


async def test_noop_is_not_announced(rig: Rig) -> None:
    rig.load(conversation(2), prompt_tokens=10)
    await rig.chat._compact(force=False, trigger="auto")
    assert rig.rec.notices == []


# 50–53: the overflow guard
async def test_overflow_refuses_the_message_without_calling_the_model(rig: Rig) -> None:
    rig.set(token_limit=1000, compression_threshold=1.0)
    rig.load(conversation(1, size=100), prompt_tokens=900)
    with pytest.raises(errors.SidecarError) as caught:
        await rig.chat.send_message("a" * 404)
    assert caught.value.code == errors.CONTEXT_OVERFLOW
    assert caught.value.message.startswith(
        "Sending this message (101 tokens) might exceed the context window limit (100 tokens left)."
    )
    assert rig.fake.requests() == []


async def test_overflow_uses_the_configured_token_limit(rig: Rig) -> None:
    rig.set(token_limit=2000, compression_threshold=1.0)
    rig.load(conversation(1, size=100), prompt_tokens=900)
    reply = await rig.chat.send_message("a" * 404)
    assert reply.usage.token_limit == 2000


async def test_compression_runs_before_the_overflow_check_and_frees_space(rig: Rig) -> None:
    rig.set(token_limit=100_000, compression_threshold=0.5)
    rig.load(conversation(20), prompt_tokens=95_000)
    reply = await rig.chat.send_message("b" * 24_000)
    assert [n.status for n in rig.rec.notices] == ["COMPRESSED"]
    assert reply.text


async def test_a_message_no_compaction_could_fit_is_refused_before_compacting(rig: Rig) -> None:
    # Beyond the reference, which compacts first: a message as large as the window cannot fit whatever
    # compaction does, so it is refused at once, with nothing sent and the history left alone.
    rig.set(token_limit=100_000, compression_threshold=0.5)
    rig.load(conversation(20), prompt_tokens=95_000)
    with pytest.raises(errors.SidecarError) as caught:
        await rig.chat.send_message("c" * 400_000)
    assert caught.value.code == errors.CONTEXT_OVERFLOW
    assert rig.rec.notices == [] and rig.fake.requests() == []


# 39: the compacted session keeps its session file (re-attached, not forked)
async def test_compression_keeps_recording_into_the_same_session_file(rig: Rig) -> None:
    await rig.chat.send_message("start recording")
    path = rig.live.recorder.path
    assert path is not None and path.exists()
    rig.load(conversation(20), prompt_tokens=60_000)
    await rig.chat.compress(None)
    await rig.chat.send_message("after")
    assert rig.live.recorder.path == path
    kinds = [line.split('"type":"', 1)[1].split('"', 1)[0] for line in path.read_text().splitlines()]
    assert "compaction" in kinds and kinds.index("compaction") < len(kinds) - 1


async def test_auto_notice_percentages_are_of_the_count_the_status_shows(rig: Rig) -> None:
    """An estimated usage (after a resume or cancel) counts system prompt and tools: the notice's "from X%" is the
    percentage the status bar showed, and its "to Y%" the one it shows next (not 49% -> 10% against 94% -> 59%)."""
    history = conversation(20)
    overhead = 20_000  # system prompt and tool declarations, as fresh_estimate adds them
    rig.set(token_limit=60_000, compression_threshold=0.5)
    rig.load(history, prompt_tokens=estimate_history_tokens(history) + overhead, source="estimate")
    shown_before = rig.live.usage().prompt_token_count
    await rig.chat._compact(force=False, trigger="auto")
    (notice,) = rig.rec.notices
    assert notice.status == "COMPRESSED", notice
    shown_after = rig.rec.usages[-1].prompt_token_count
    assert (notice.original_token_count, notice.new_token_count) == (shown_before, shown_after)
    before, after = (round(100 * n / 60_000) for n in (shown_before, shown_after))
    assert notice.message == (
        f"Chat history compressed from {shown_before:,} to {shown_after:,} tokens "
        f"({before}% → {after}% of the context window)."
    )


async def test_a_latched_auto_attempt_that_does_nothing_shows_no_progress(rig: Rig) -> None:
    """After "not beneficial" latched automatic compaction, a turn over the threshold must not show "Compressing
    conversation" that never finishes: no work, no progress."""
    rig.load_just_over_threshold(conversation(6))
    rig.live.conversation.has_failed_compression_attempt = True
    outcome = await rig.chat._compact(force=False, trigger="auto")
    assert outcome is not None and outcome.status is Status.NOOP
    assert rig.rec.progress_log == []
    assert rig.summary_requests() == [] and rig.rec.notices == []


async def test_an_auto_compaction_that_works_shows_its_progress_in_order(rig: Rig) -> None:
    chat_history_over_threshold(rig)
    await rig.chat._compact(force=False, trigger="auto")
    log = rig.rec.progress_log
    assert log[0] == "begin:Compressing conversation" and log[-1].startswith("end:Chat history compressed from"), log
    assert [e for e in log if e.startswith("begin:")] == log[:1] and len(log) >= 3, log
