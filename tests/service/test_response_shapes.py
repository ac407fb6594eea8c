"""Every response shape the real API sends, against the fake over HTTP: checked, retried, named."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from sidecar.core.content_json import decode_contents
from sidecar.core.history import Content, text_content
from sidecar.core.reply_check import EMPTY_NUDGE, THINKING_NUDGE
from sidecar.protocol import errors
from tests.service.conftest import Rig, conversation
from tests.waiting import until


def chat_requests(rig: Rig) -> list[Any]:
    return [r for r in rig.fake.requests() if r.kind == "stream"]


def recorded(rig: Rig) -> list[Content]:
    """The model-facing history the recording replays to (what a resume would restore)."""
    rig.live.recorder.sync()
    return decode_contents(rig.live.recorder.reload().history_wire)


def transcript_kinds(rig: Rig) -> list[tuple[str, str]]:
    entries = rig.live.recorder.transcript(rig.live.conversation.session_id)
    return [(e.kind, e.text) for e in entries if hasattr(e, "kind")]


async def next_turn_works(rig: Rig, history: list[Content], loaded: int = 0) -> None:
    """The next turn answers and sends `history` first; the recording replays to the same (minus the first `loaded`
    contents, which a test put in place without recording them)."""
    rig.fake.reset_script()
    result = await rig.chat.send_message("and now?")
    assert "and now?" in result.text
    assert chat_requests(rig)[-1].contents() == [*history, text_content("user", "and now?")]
    turn = [text_content("user", "and now?"), text_content("model", result.text)]
    assert recorded(rig) == [*history[loaded:], *turn]


# -- retried shapes ------------------------------------------------------------------------------------

RETRIED = [
    pytest.param(
        {
            "kind": "finish",
            "finishReason": "MALFORMED_FUNCTION_CALL",
            "parts": "missing",
            "finishMessage": "Malformed function call: print(x",
        },
        "MALFORMED_FUNCTION_CALL",
        None,
        id="malformed",
    ),
    pytest.param(
        {"kind": "finish", "finishReason": "UNEXPECTED_TOOL_CALL", "parts": "empty"},
        "UNEXPECTED_TOOL_CALL",
        None,
        id="unexpected-tool-call",
    ),
    pytest.param(
        {"kind": "finish", "finishReason": "STOP", "text": ""}, "NO_RESPONSE_TEXT", EMPTY_NUDGE, id="empty-text"
    ),
    pytest.param(
        {"kind": "finish", "finishReason": "STOP", "parts": "missing"}, "NO_RESPONSE_TEXT", EMPTY_NUDGE, id="no-parts"
    ),
    pytest.param(
        {"kind": "finish", "finishReason": "STOP", "text": "\u200b <!-- nothing --> "},
        "NO_RESPONSE_TEXT",
        EMPTY_NUDGE,
        id="invisible-text",
    ),
    pytest.param(
        {"kind": "finish", "finishReason": "STOP", "thought": "I should answer."},
        "THINKING_ONLY_RESPONSE",
        THINKING_NUDGE,
        id="thoughts-only",
    ),
    pytest.param(
        {"kind": "finish", "finishReason": None, "text": "Half an ans"}, "NO_FINISH_REASON", None, id="no-finish-reason"
    ),
    pytest.param(
        {"kind": "finish", "finishReason": "MAX_TOKENS", "thought": "long thinking"},
        "MAX_TOKENS_EXCEEDED",
        None,
        id="max-tokens-without-text",
    ),
    pytest.param(
        {"kind": "finish", "finishReason": "SAFETY", "text": ""}, "SAFETY_BLOCKED", None, id="safety-without-text"
    ),
    pytest.param(
        {"kind": "finish", "finishReason": "RECITATION"}, "RECITATION_BLOCKED", None, id="recitation-without-text"
    ),
    pytest.param({"kind": "finish", "finishReason": "OTHER"}, "OTHER_BLOCKED", None, id="other-without-text"),
    pytest.param({"kind": "empty"}, "NO_RESPONSE_TEXT", EMPTY_NUDGE, id="empty-step"),
]


@pytest.mark.parametrize(("step", "reason", "nudge"), RETRIED)
async def test_a_bad_reply_is_retried_with_the_nudge_in_the_request_only(
    rig: Rig, step: dict[str, Any], reason: str, nudge: str | None
) -> None:
    rig.fake.script([{**step, "match": "chat"}])
    result = await rig.chat.send_message("please answer")
    first, second = chat_requests(rig)
    assert first.contents() == [text_content("user", "please answer")]
    if nudge is None:
        assert second.contents() == first.contents(), "no nudge for this type: the same request again"
    else:
        assert second.contents() == [
            Content(role="user", parts=[*first.contents()[0].parts, text_content("user", nudge).parts[0]])
        ], "the nudge joins the last user turn of the request"
    assert [(r.attempt, r.max_attempts, r.reason, r.text) for r in rig.rec.retries] == [(2, 4, reason, "")]
    assert rig.rec.retries[0].delay_ms == 1 and rig.rec.retries[0].message
    history = [text_content("user", "please answer"), text_content("model", result.text)]
    assert rig.live.conversation.history == history, "the nudge never enters the history"
    assert recorded(rig) == history
    assert result.finish_reason == "STOP" and result.text.startswith("Fake Gemini reply #1")
    await next_turn_works(rig, history)


async def test_a_stream_cut_mid_reply_is_retried_and_its_text_discarded(rig: Rig) -> None:
    rig.fake.script([{"kind": "cut", "match": "chat"}])
    result = await rig.chat.send_message("tell me a long story about the sea")
    assert len(chat_requests(rig)) == 2
    (retry,) = rig.rec.retries
    assert retry.reason == "stream" and "ended unexpectedly" in retry.message
    assert rig.live.conversation.history == [
        text_content("user", "tell me a long story about the sea"),
        text_content("model", result.text),
    ]


@pytest.mark.parametrize(
    ("step", "reason", "words"),
    [
        pytest.param(
            {"kind": "finish", "finishReason": "MALFORMED_FUNCTION_CALL", "parts": "missing"},
            "MALFORMED_FUNCTION_CALL",
            "malformed tool call",
            id="malformed",
        ),
        pytest.param(
            {"kind": "finish", "finishReason": "STOP", "thought": "hmm"},
            "THINKING_ONLY_RESPONSE",
            "only the model's thoughts",
            id="thoughts-only",
        ),
        pytest.param(
            {"kind": "empty", "variant": "no_candidates"},
            "NO_FINISH_REASON",
            "without a finish reason",
            id="no-candidates",
        ),
    ],
)
async def test_retries_exhausted_answer_an_error_naming_the_type_and_keep_the_users_message(
    rig: Rig, step: dict[str, Any], reason: str, words: str
) -> None:
    rig.load(conversation(1), prompt_tokens=100)
    before = rig.live.conversation.history
    rig.fake.script([{**step, "match": "chat", "times": 4}])
    with pytest.raises(errors.SidecarError) as caught:
        await rig.chat.send_message("answer, please")
    err = caught.value
    assert err.code == errors.MODEL_ERROR
    assert err.message.startswith("Gemini's reply could not be used after 4 attempts: ")
    assert words in err.message and f"({reason})" in err.message
    assert err.data.kind == "invalidReply" and err.data.reason == reason
    assert err.data.turn_id.startswith("turn-")
    assert len(chat_requests(rig)) == 4
    assert [r.attempt for r in rig.rec.retries] == [2, 3, 4]
    assert [r.delay_ms for r in rig.rec.retries] == [1, 2, 4], "1, 2, 4 × retryInitialDelayMs"
    assert rig.rec.errors == [err.message]
    history = [*before, text_content("user", "answer, please")]
    assert rig.live.conversation.history == history, "the user's message stays; no failed attempt is a reply"
    kinds = [kind for kind, _ in transcript_kinds(rig)]
    assert kinds == ["user", "error"], "nothing a failed attempt produced was recorded"
    await next_turn_works(rig, history, loaded=len(before))


async def test_a_failure_after_partial_text_records_nothing_of_it(rig: Rig) -> None:
    rig.fake.script(
        [{"kind": "finish", "finishReason": None, "text": "a partial reply that stops", "match": "chat", "times": 4}]
    )
    with pytest.raises(errors.SidecarError):
        await rig.chat.send_message("go")
    assert "".join(rig.rec.deltas).count("a partial reply") == 4, "each attempt was shown as it streamed"
    assert rig.live.conversation.history == [text_content("user", "go")]
    assert [k for k, _ in transcript_kinds(rig)] == ["user", "error"]


# -- not retried -----------------------------------------------------------------------------------------


async def test_a_blocked_prompt_is_not_retried_is_named_and_leaves_the_history_valid(rig: Rig) -> None:
    rig.load(conversation(1), prompt_tokens=100)
    before = rig.live.conversation.history
    rig.fake.script(
        [
            {
                "kind": "blocked",
                "blockReason": "PROHIBITED_CONTENT",
                "match": "chat",
                "blockReasonMessage": "The prompt may contain prohibited content.",
            }
        ]
    )
    with pytest.raises(errors.SidecarError) as caught:
        await rig.chat.send_message("something the policy refuses")
    err = caught.value
    assert len(chat_requests(rig)) == 1, "the same prompt would be blocked again: no retry"
    assert rig.rec.retries == []
    assert err.code == errors.MODEL_ERROR
    assert err.message == (
        "Gemini blocked the prompt: it was stopped by the prohibited-content policy (blockReason PROHIBITED_CONTENT) "
        "(The prompt may contain prohibited content.)."
    )
    assert err.data.kind == "blocked" and err.data.block_reason == "PROHIBITED_CONTENT"
    assert err.data.reason == "PROMPT_BLOCKED"
    assert rig.rec.errors == [err.message]
    # The refused prompt leaves the model-facing history (it would be refused again); the transcript keeps it.
    assert rig.live.conversation.history == before
    assert recorded(rig) == []
    assert ("user", "something the policy refuses") in transcript_kinds(rig)
    await next_turn_works(rig, before, loaded=len(before))


@pytest.mark.parametrize("finish", ["PROHIBITED_CONTENT", "SPII", "BLOCKLIST"])
async def test_a_reply_stopped_by_a_fixed_policy_is_named_not_retried(rig: Rig, finish: str) -> None:
    rig.fake.script([{"kind": "finish", "finishReason": finish, "match": "chat"}])
    with pytest.raises(errors.SidecarError) as caught:
        await rig.chat.send_message("hello")
    assert len(chat_requests(rig)) == 1
    assert caught.value.data.kind == "blocked" and caught.value.data.block_reason == finish
    assert f"finishReason {finish}" in caught.value.message
    assert rig.live.conversation.history == [text_content("user", "hello")]


@pytest.mark.parametrize(
    ("finish", "words"),
    [
        ("MAX_TOKENS", "maximum number of output tokens"),
        ("SAFETY", "safety filters"),
        ("RECITATION", "recitation"),
    ],
)
async def test_a_reply_cut_short_keeps_its_text_and_says_so(rig: Rig, finish: str, words: str) -> None:
    rig.fake.script(
        [
            {
                "kind": "finish",
                "finishReason": finish,
                "text": "The first half of the answer",
                "finishMessage": "stopped early",
                "match": "chat",
            }
        ]
    )
    result = await rig.chat.send_message("a long answer please")
    assert len(chat_requests(rig)) == 1, "text was shown: not retried"
    assert result.text == "The first half of the answer" and result.finish_reason == finish
    (warning,) = rig.rec.warnings
    assert warning.startswith("The reply is incomplete: ") and f"(finishReason {finish})" in warning
    assert words in warning
    assert "stopped early" in warning
    assert rig.live.conversation.history[-1] == text_content("model", "The first half of the answer")
    assert ("info", warning) in transcript_kinds(rig)


# -- real-shaped responses -------------------------------------------------------------------------------


async def test_usage_extras_citations_and_grounding_parse_and_cached_tokens_reach_the_status_bar(rig: Rig) -> None:
    rig.fake.script(
        [
            {
                "kind": "finish",
                "finishReason": "STOP",
                "text": "Grounded answer.",
                "thought": "checking",
                "extras": True,
                "match": "chat",
            },
        ]
    )
    result = await rig.chat.send_message("search something")
    assert result.text == "Grounded answer."
    rig.fake.script(
        [
            {
                "kind": "usage",
                "promptTokenCount": 5000,
                "cachedContentTokenCount": 4096,
                "thoughtsTokenCount": 12,
                "toolUsePromptTokenCount": 7,
                "match": "chat",
            }
        ]
    )
    await rig.chat.send_message("again")
    usage = rig.live.usage()
    assert usage.prompt_token_count == 5000 and usage.cached_token_count == 4096
    assert rig.rec.usages[-1].cached_token_count == 4096


# -- compaction ------------------------------------------------------------------------------------------


async def test_a_blocked_summary_fails_the_compaction_at_once_with_its_reason(rig: Rig) -> None:
    rig.load(conversation(20), prompt_tokens=60_000)
    before = rig.live.conversation.wire()
    rig.fake.script([{"kind": "blocked", "blockReason": "SAFETY", "match": "summary"}])
    with pytest.raises(errors.SidecarError) as caught:
        await rig.chat.compress(None)
    assert caught.value.message.startswith(
        "Compaction failed, the conversation is unchanged: Gemini blocked the "
        "prompt: it was stopped by the safety filters (blockReason SAFETY)"
    )
    assert caught.value.data.kind == "blocked"
    assert len(rig.summary_requests()) == 1
    assert rig.live.conversation.wire() is before


async def test_a_thoughts_only_summary_is_retried_with_the_nudge(rig: Rig) -> None:
    rig.load(conversation(20), prompt_tokens=60_000)
    rig.fake.script([{"kind": "finish", "thought": "thinking about it", "match": "summary"}])
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSED"
    first, second = rig.summary_requests()[:2]
    assert THINKING_NUDGE not in msgspec.json.encode(first.body).decode()
    assert second.body["contents"][-1]["parts"][-1] == {"text": THINKING_NUDGE}
    assert THINKING_NUDGE not in msgspec.json.encode(rig.live.conversation.history).decode()


async def test_an_automatic_compaction_with_a_blocked_summary_warns_and_the_turn_goes_on(rig: Rig) -> None:
    rig.load(conversation(20), prompt_tokens=60_000)
    rig.fake.script([{"kind": "blocked", "match": "summary"}])
    result = await rig.chat.send_message("next")
    assert result.text.startswith("Fake Gemini reply")
    (warning,) = rig.rec.warnings
    assert warning.startswith("Compaction failed, the conversation is unchanged: Gemini blocked the prompt")


async def test_a_round_failing_after_tool_responses_is_closed_so_roles_still_alternate(rig: Rig) -> None:
    from sidecar.core.history import FunctionCall, FunctionResponse, Part
    from sidecar.core.reply_check import INTERRUPTED
    from sidecar.gemini.client import ModelError

    call = Content(role="model", parts=[Part(function_call=FunctionCall(name="read_file", args={}, id="c1"))])
    answer = Content(
        role="user",
        parts=[Part(function_response=FunctionResponse(name="read_file", id="c1", response={"output": "x"}))],
    )
    rig.load([text_content("user", "read it"), call, answer], prompt_tokens=100)
    rig.chat._close_failed_round(ModelError("invalidReply", "unusable", reason="NO_RESPONSE_TEXT"), "t-1")
    assert rig.live.conversation.history[-1] == text_content("model", INTERRUPTED)
    await next_turn_works(
        rig, [text_content("user", "read it"), call, answer, text_content("model", INTERRUPTED)], loaded=3
    )


async def test_a_cancel_while_waiting_to_retry_keeps_nothing_of_the_failed_attempt(rig: Rig) -> None:
    import asyncio

    rig.set(retry_initial_delay_ms=60_000)  # the wait before attempt 2 outlasts the test: it is cancelled in it
    rig.fake.script([{"kind": "finish", "finishReason": None, "text": "partial words of a cut reply", "match": "chat"}])
    turn = asyncio.create_task(rig.chat.send_message("go on"))
    await until(lambda: rig.rec.retries or turn.done(), "the retry to be announced")
    assert not turn.done(), turn
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert rig.live.conversation.history == [text_content("user", "go on")]
    assert [k for k, _ in transcript_kinds(rig)] == ["user", "info"]  # "The turn was cancelled."
