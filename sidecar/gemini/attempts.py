"""One model call of a chat round or a compaction, checked and retried as Gemini CLI does (4 attempts, 1-2-4 s apart,
nudges in the request only), with blocked prompts named instead of retried."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sidecar.core.content_json import decode_content, encode_content
from sidecar.core.history import Content, Part, text_content
from sidecar.core.reply_check import MAX_ATTEMPTS, TOOL_DONE, ReplyProblem, check_reply
from sidecar.gemini.client import MID_STREAM_RETRYABLE, ModelError
from sidecar.gemini.stream import Chunk, Usage

if TYPE_CHECKING:
    from sidecar.gemini.client import ModelClient, Reply

log = logging.getLogger(__name__)


@dataclass
class RoundReply:
    """A reply that passed the check: its parts (all chunks), finish reason and message, and the last usage."""

    parts: list[Part]
    finish_reason: str | None
    finish_message: str | None
    usage: Usage | None


@dataclass(frozen=True)
class Retry:
    """What the editor is told before another attempt: discard the failed attempt's text, and why."""

    attempt: int  # the attempt about to start (2..MAX_ATTEMPTS)
    max_attempts: int
    reason: str  # the failure type (NO_RESPONSE_TEXT, MALFORMED_FUNCTION_CALL, stream, …)
    message: str  # the cause in words
    delay_ms: int


@dataclass
class Attempts:
    """The retry policy: `initial_delay_ms` doubles per retry (1 s, 2 s, 4 s by default)."""

    initial_delay_ms: int
    max_attempts: int = MAX_ATTEMPTS
    on_retry: Callable[[Retry], None] = field(default=lambda _retry: None)

    def delay_ms(self, failed_attempt: int) -> int:
        return int(self.initial_delay_ms * 2 ** (failed_attempt - 1))

    async def before_retry(self, failed_attempt: int, reason: str, message: str) -> None:
        delay = self.delay_ms(failed_attempt)
        log.info("attempt %d failed (%s: %s); retrying in %d ms", failed_attempt, reason, message, delay)
        self.on_retry(Retry(failed_attempt + 1, self.max_attempts, reason, message, delay))
        await asyncio.sleep(delay / 1000.0)


def _nudged_tail(last: Content | None, nudge: str) -> tuple[int, list[Content]]:
    """(how many trailing contents to replace, what goes at the end instead): the nudge joins the last user turn;
    after function responses a "[Tool execution completed.]" model turn comes first, so roles alternate."""
    if last is not None and last.role == "user" and not is_function_response(last):
        return 1, [Content(role="user", parts=[*last.parts, Part(text=nudge)])]
    tail = [text_content("user", nudge)]
    if last is not None and last.role != "model":
        tail.insert(0, text_content("model", TOOL_DONE))
    return 0, tail


def with_nudge(wire: Sequence[bytes], last: Content | None, nudge: str) -> list[bytes]:
    """The request contents (JSON) with the nudge: a copy, the history is not touched."""
    drop, tail = _nudged_tail(last, nudge)
    return [*wire[: len(wire) - drop], *(encode_content(c) for c in tail)]


def contents_with_nudge(contents: Sequence[Content], nudge: str) -> list[Content]:
    drop, tail = _nudged_tail(contents[-1] if contents else None, nudge)
    return [*contents[: len(contents) - drop], *tail]


def is_function_response(content: Content | None) -> bool:
    return content is not None and any(p.function_response is not None for p in content.parts)


def failure(problem: ReplyProblem, attempts: int) -> ModelError:
    """The ModelError for a reply that cannot be used: blocked (named at once) or still bad after every attempt."""
    if not problem.retryable:
        return ModelError(
            "blocked",
            f"{problem.words[0].upper()}{problem.words[1:]}.",
            reason=problem.type,
            block_reason=problem.block_reason,
        )
    tries = f"{attempts} attempts" if attempts > 1 else "1 attempt"
    return ModelError(
        "invalidReply",
        f"Gemini's reply could not be used after {tries}: {problem.words} ({problem.type}).",
        reason=problem.type,
    )


async def stream_checked(
    client: ModelClient,
    model: str,
    wire: Sequence[bytes],
    *,
    system_instruction: str | None,
    tools: list[dict[str, Any]] | None,
    attempts: Attempts,
    on_chunk: Callable[[Chunk], None],
    current: list[Part],
    tool_config: dict[str, Any] | None = None,
) -> RoundReply:
    """Stream a reply to `wire` until one passes the check. `current` holds the parts of the attempt under way
    (what a cancellation keeps). Raises ModelError: blocked, invalidReply, or the last attempt's HTTP failure."""
    last: Content | None = None  # decoded only when a check or a nudge needs it (not on the measured path)
    nudge: str | None = None
    for attempt in range(1, attempts.max_attempts + 1):
        current.clear()
        finish: str | None = None
        finish_message: str | None = None
        block: tuple[str | None, str | None] = (None, None)
        usage: Usage | None = None
        contents: Sequence[bytes] = wire
        if nudge is not None:
            contents = with_nudge(wire, last, nudge)
        try:
            stream = client.stream(
                model, contents, system_instruction=system_instruction, tools=tools, tool_config=tool_config
            )
            async for chunk in stream:
                on_chunk(chunk)
                current.extend(chunk.parts)
                finish = chunk.finish_reason or finish
                finish_message = chunk.finish_message or finish_message
                if chunk.block_reason:
                    block = (chunk.block_reason, chunk.block_message)
                if chunk.usage is not None:
                    usage = chunk.usage
        except ModelError as exc:
            if not (exc.mid_stream and exc.kind in MID_STREAM_RETRYABLE) or attempt == attempts.max_attempts:
                if exc.mid_stream and attempt > 1:
                    exc.message = f"{exc.message} (after {attempt} attempts)"
                    exc.args = (exc.message,)
                raise
            current.clear()  # the failed attempt's parts: never kept, not even by a cancellation during the wait
            await attempts.before_retry(attempt, exc.kind, exc.message)
            continue
        if last is None and wire:
            last = decode_content(wire[-1])
        problem = check_reply(
            current,
            finish,
            finish_message=finish_message,
            block_reason=block[0],
            block_message=block[1],
            after_function_response=is_function_response(last),
        )
        if problem is None:
            return RoundReply(list(current), finish, finish_message, usage)
        current.clear()
        if not problem.retryable or attempt == attempts.max_attempts:
            raise failure(problem, attempt)
        nudge = problem.nudge
        await attempts.before_retry(attempt, problem.type, problem.words)
    raise AssertionError("unreachable: the last attempt returns or raises")


async def generate_checked(
    client: ModelClient,
    model: str,
    contents: Sequence[Content],
    *,
    system_instruction: str | None,
    attempts: Attempts,
) -> Reply:
    """A whole (non-streamed) reply that passed the same check, for compaction's summary passes."""
    nudge: str | None = None
    for attempt in range(1, attempts.max_attempts + 1):
        request = list(contents) if nudge is None else contents_with_nudge(contents, nudge)
        reply = await client.generate(model, request, system_instruction=system_instruction)
        problem = check_reply(
            reply.parts,
            reply.finish_reason,
            finish_message=reply.finish_message,
            block_reason=reply.block_reason,
            block_message=reply.block_message,
            after_function_response=is_function_response(contents[-1] if contents else None),
        )
        if problem is None:
            return reply
        if not problem.retryable or attempt == attempts.max_attempts:
            raise failure(problem, attempt)
        nudge = problem.nudge
        await attempts.before_retry(attempt, problem.type, problem.words)
    raise AssertionError("unreachable: the last attempt returns or raises")
