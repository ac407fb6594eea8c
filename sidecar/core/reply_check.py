"""Checking a finished model reply as Gemini CLI does (empty, thoughts only, bad call, no finish reason), and better."""

# The reference (geminiChat.js, processStreamResponse) throws InvalidStreamError with one of these types and retries
# every one of them. We retry the same ones, but a prompt blocked by policy (promptFeedback.blockReason) and a reply
# stopped by a fixed policy (blocklist, prohibited content, personal data) are not retried: the same request would
# be blocked again. They are named to the user instead.

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sidecar.core.history import Part

#: Attempts in total for a reply that fails the check (the reference's 4: one call and three retries).
MAX_ATTEMPTS = 4

THINKING_NUDGE = (
    "[System: You previously generated thoughts but failed to provide a final user-facing response. "
    "Please ensure you provide your final answer or call a tool now.]"
)
EMPTY_NUDGE = (
    "[System: You previously returned an empty response with no text or thoughts. "
    "Please ensure you provide your final answer or call a tool now.]"
)
#: The model turn inserted before a nudge when the request ends with function responses (roles must alternate).
TOOL_DONE = "[Tool execution completed.]"
#: The model turn closing a round that failed after tool responses, so the next user message stays its own turn.
INTERRUPTED = "[The previous response was interrupted before it completed.]"

FINISH_WORDS: dict[str, str] = {
    "MAX_TOKENS": "it reached the maximum number of output tokens",
    "SAFETY": "the safety filters stopped it",
    "RECITATION": "it was too close to existing material (recitation)",
    "LANGUAGE": "it used a language the model does not support",
    "OTHER": "the model stopped for an unspecified reason",
    "BLOCKLIST": "it contained terms on a blocklist",
    "PROHIBITED_CONTENT": "it may contain prohibited content",
    "SPII": "it may contain sensitive personal information",
    "IMAGE_SAFETY": "a generated image was stopped by the safety filters",
    "TOO_MANY_TOOL_CALLS": "the model made too many tool calls",
}
BLOCK_WORDS: dict[str, str] = {
    "SAFETY": "the safety filters",
    "OTHER": "an unspecified policy",
    "BLOCKLIST": "a blocklist of terms",
    "PROHIBITED_CONTENT": "the prohibited-content policy",
    "IMAGE_SAFETY": "the image safety filters",
    "BLOCK_REASON_UNSPECIFIED": "an unspecified policy",
}
#: Finish reasons of a policy that will stop the same request again: named, not retried.
POLICY_FINISH = frozenset({"BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"})
#: Empty visible text with one of these: the reference's XXX_BLOCKED / MAX_TOKENS_EXCEEDED types (retried).
_EMPTY_WITH_REASON = {
    "MAX_TOKENS": "MAX_TOKENS_EXCEEDED",
    "SAFETY": "SAFETY_BLOCKED",
    "RECITATION": "RECITATION_BLOCKED",
    "OTHER": "OTHER_BLOCKED",
}
#: Finish reasons that cut a reply short: the text already shown is kept, and the user is told.
CUT_SHORT = frozenset({"MAX_TOKENS", "SAFETY", "RECITATION", "OTHER", *POLICY_FINISH})

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True)
class ReplyProblem:
    """Why a finished reply cannot be used: the reference's type name, the cause in words, what to do."""

    type: str
    words: str
    retryable: bool
    nudge: str | None = None
    block_reason: str | None = None


def visible_text(parts: Sequence[Part]) -> str:
    """The user-facing text: non-thought text without zero-width characters and HTML comments, trimmed."""
    text = "".join(p.text for p in parts if p.text and not p.thought)
    return _HTML_COMMENT.sub("", _ZERO_WIDTH.sub("", text)).strip()


def _with_message(words: str, message: str | None) -> str:
    return f"{words} ({message.strip()})" if message and message.strip() else words


def prompt_blocked(block_reason: str, block_message: str | None = None) -> ReplyProblem:
    """A request refused before any candidate (promptFeedback.blockReason)."""
    policy = BLOCK_WORDS.get(block_reason, f"the {block_reason} policy")
    words = _with_message(
        f"Gemini blocked the prompt: it was stopped by {policy} (blockReason {block_reason})", block_message
    )
    return ReplyProblem("PROMPT_BLOCKED", words, retryable=False, block_reason=block_reason)


def check_reply(
    parts: Sequence[Part],
    finish_reason: str | None,
    *,
    finish_message: str | None = None,
    block_reason: str | None = None,
    block_message: str | None = None,
    after_function_response: bool = False,
) -> ReplyProblem | None:
    """None when the finished reply can be used, else what is wrong with it."""
    if block_reason:
        return prompt_blocked(block_reason, block_message)
    if any(p.function_call is not None for p in parts):
        return None  # a reply with a tool call is used as it is (as the reference does)
    if finish_reason is None:
        if after_function_response:
            return None  # the reference skips this check after a function response
        return ReplyProblem(
            "NO_FINISH_REASON", "the reply stream ended without a finish reason (it was cut short)", retryable=True
        )
    if finish_reason == "MALFORMED_FUNCTION_CALL":
        words = _with_message("the model produced a malformed tool call", finish_message)
        return ReplyProblem("MALFORMED_FUNCTION_CALL", words, retryable=True)
    if finish_reason == "UNEXPECTED_TOOL_CALL":
        words = _with_message("the model called a tool it was not offered", finish_message)
        return ReplyProblem("UNEXPECTED_TOOL_CALL", words, retryable=True)
    if visible_text(parts):
        return None
    if finish_reason in POLICY_FINISH:
        words = _with_message(
            f"Gemini stopped the reply without any text: {FINISH_WORDS[finish_reason]} (finishReason {finish_reason})",
            finish_message,
        )
        return ReplyProblem("RESPONSE_BLOCKED", words, retryable=False, block_reason=finish_reason)
    if finish_reason in _EMPTY_WITH_REASON:
        words = _with_message(
            f"the reply had no text: {FINISH_WORDS[finish_reason]} (finishReason {finish_reason})", finish_message
        )
        return ReplyProblem(_EMPTY_WITH_REASON[finish_reason], words, retryable=True)
    if any(p.thought and p.text for p in parts):
        return ReplyProblem(
            "THINKING_ONLY_RESPONSE", "the reply held only the model's thoughts, no answer", True, THINKING_NUDGE
        )
    return ReplyProblem("NO_RESPONSE_TEXT", "the reply was empty (no text, no tool call)", True, EMPTY_NUDGE)


def cut_short_notice(finish_reason: str | None, finish_message: str | None = None) -> str | None:
    """For a reply with text that stopped early: a sentence saying so (None for a normal stop)."""
    if finish_reason not in CUT_SHORT:
        return None
    words = FINISH_WORDS[str(finish_reason)]
    return _with_message(f"The reply is incomplete: {words} (finishReason {finish_reason})", finish_message) + "."
