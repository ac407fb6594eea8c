"""The reply check (sidecar/core/reply_check.py): Gemini CLI's InvalidStreamError types, and where we do better."""

from __future__ import annotations

import pytest

from sidecar.core.content_json import decode_content, encode_content
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.reply_check import (
    EMPTY_NUDGE,
    THINKING_NUDGE,
    TOOL_DONE,
    check_reply,
    cut_short_notice,
    visible_text,
)
from sidecar.gemini.attempts import contents_with_nudge, with_nudge

TEXT = [Part(text="An answer.")]
THOUGHT = [Part(text="thinking", thought=True)]
CALL = [Part(function_call=FunctionCall(name="read_file", args={}))]


@pytest.mark.parametrize(
    ("parts", "finish", "after_tools", "expected"),
    [
        (TEXT, "STOP", False, None),
        (CALL, None, False, None),  # a tool call is used as it is
        (CALL, "MALFORMED_FUNCTION_CALL", False, None),
        (TEXT, None, False, "NO_FINISH_REASON"),
        (TEXT, None, True, None),  # as the reference: not checked after a function response
        ([], "MALFORMED_FUNCTION_CALL", False, "MALFORMED_FUNCTION_CALL"),
        (TEXT, "UNEXPECTED_TOOL_CALL", False, "UNEXPECTED_TOOL_CALL"),
        ([], "MAX_TOKENS", False, "MAX_TOKENS_EXCEEDED"),
        (THOUGHT, "SAFETY", False, "SAFETY_BLOCKED"),
        ([Part(text="")], "RECITATION", False, "RECITATION_BLOCKED"),
        ([], "OTHER", False, "OTHER_BLOCKED"),
        (THOUGHT, "STOP", False, "THINKING_ONLY_RESPONSE"),
        ([], "STOP", False, "NO_RESPONSE_TEXT"),
        ([Part(text=" \u200b\ufeff <!-- hidden\n--> ")], "STOP", False, "NO_RESPONSE_TEXT"),
        ([], "PROHIBITED_CONTENT", False, "RESPONSE_BLOCKED"),
        ([], "SPII", False, "RESPONSE_BLOCKED"),
        (TEXT, "MAX_TOKENS", False, None),  # text kept; cut_short_notice says so
    ],
)
def test_types_as_the_reference_names_them(
    parts: list[Part], finish: str | None, after_tools: bool, expected: str | None
) -> None:
    problem = check_reply(parts, finish, after_function_response=after_tools)
    assert (problem.type if problem else None) == expected


def test_nudges_and_what_is_retried() -> None:
    thinking = check_reply(THOUGHT, "STOP")
    empty = check_reply([], "STOP")
    assert thinking is not None and thinking.nudge == THINKING_NUDGE and thinking.retryable
    assert empty is not None and empty.nudge == EMPTY_NUDGE and empty.retryable
    blocked = check_reply([], None, block_reason="SAFETY", block_message="Unsafe.")
    assert blocked is not None and not blocked.retryable and blocked.type == "PROMPT_BLOCKED"
    assert blocked.words == (
        "Gemini blocked the prompt: it was stopped by the safety filters (blockReason SAFETY) (Unsafe.)"
    )
    policy = check_reply([], "BLOCKLIST", finish_message="Terms.")
    assert policy is not None and not policy.retryable and policy.block_reason == "BLOCKLIST"


def test_visible_text_and_cut_short_notices() -> None:
    assert visible_text([Part(text="a<!-- x -->b\u200b", thought=None), Part(text="t", thought=True)]) == "ab"
    assert cut_short_notice("STOP") is None and cut_short_notice(None) is None
    assert cut_short_notice("MAX_TOKENS") == (
        "The reply is incomplete: it reached the maximum number of output tokens (finishReason MAX_TOKENS)."
    )
    notice = cut_short_notice("SAFETY", "Blocked for safety.")
    assert notice == (
        "The reply is incomplete: the safety filters stopped it (finishReason SAFETY) (Blocked for safety.)."
    )


def test_the_nudge_joins_the_request_never_the_history() -> None:
    user = text_content("user", "question")
    wire = [encode_content(text_content("model", "hi")), encode_content(user)]
    nudged = [decode_content(b) for b in with_nudge(wire, user, EMPTY_NUDGE)]
    assert nudged[-1] == Content(role="user", parts=[Part(text="question"), Part(text=EMPTY_NUDGE)])
    assert decode_content(wire[-1]) == user, "the cached JSON of the history is untouched"
    responses = Content(role="user", parts=[Part(function_response=FunctionResponse(name="f", response={}))])
    after_tools = contents_with_nudge(
        [text_content("user", "q"), Content(role="model", parts=CALL), responses], THINKING_NUDGE
    )
    assert after_tools[-3:] == [responses, text_content("model", TOOL_DONE), text_content("user", THINKING_NUDGE)]
