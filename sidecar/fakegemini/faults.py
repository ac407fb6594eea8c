"""Fault scripting for the fake Gemini: step types, the FIFO script queue and real-API error bodies."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import msgspec

Match = Literal["any", "chat", "summary", "stream", "generate", "count", "token", "list"]
RequestKind = Literal["generate", "stream", "count", "token", "list"]

#: HTTP status -> google.rpc status name, as the real API reports them.
STATUS_NAMES: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

DEFAULT_MESSAGES: dict[int, str] = {
    400: "Request contains an invalid argument.",
    403: "The caller does not have permission",
    404: "Requested entity was not found.",
    429: "Resource has been exhausted (e.g. check quota).",
    500: "An internal error has occurred. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting",
    503: "The model is overloaded. Please try again later.",
    504: "Deadline expired before operation could complete.",
}


def error_body(
    code: int,
    message: str | None = None,
    *,
    retry_delay: str | None = None,
    details: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The real API's error JSON: {"error": {"code", "message", "status"[, "details"]}}."""
    err: dict[str, Any] = {
        "code": code,
        "message": message or DEFAULT_MESSAGES.get(code, f"Fake Gemini error {code}."),
        "status": STATUS_NAMES.get(code, "UNKNOWN"),
    }
    extra = list(details or [])
    if retry_delay is not None:
        extra.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay})
    if extra:
        err["details"] = extra
    return {"error": err}


class _Step(msgspec.Struct, tag_field="kind", rename="camel", omit_defaults=True, kw_only=True):
    """Common fields: which requests the step applies to, and how many of them (-1 = forever)."""

    match: Match = "any"
    times: int = 1

    def __post_init__(self) -> None:
        if self.times == 0 or self.times < -1:
            raise ValueError("times must be a positive count or -1 (forever)")


class Status(_Step, tag="status"):
    """Answer with an HTTP error in the real API's shape."""

    status: int
    message: str | None = None
    retry_delay: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 400 <= self.status <= 599:
            raise ValueError("status must be an HTTP error code (400..599)")


class Delay(_Step, tag="delay"):
    """Sleep, then reply normally (chunk_delay also sleeps between stream chunks)."""

    seconds: float = 0.0
    chunk_delay: float = 0.0


class Hold(_Step, tag="hold"):
    """Wait until the test calls FakeGemini.release() (or the fake stops, or is reset), then reply normally."""


class Cut(_Step, tag="cut"):
    """Stream: send the first chunk, then drop the connection. Non-stream: drop it without a response."""


class MidstreamError(_Step, tag="midstream_error"):
    """Stream: an SSE event holding an error object after the first chunk. Non-stream: a plain error."""

    status: int = 500
    message: str | None = None


class Empty(_Step, tag="empty"):
    """A reply without text: one STOP candidate with "" ("empty_text") or no candidates at all."""

    variant: Literal["empty_text", "no_candidates"] = "empty_text"


class Text(_Step, tag="text"):
    """Reply with this exact text (e.g. a malformed summary); `thought`: a thought summary streamed before it."""

    text: str
    thought: str | None = None


class MalformedSnapshot(_Step, tag="malformed_snapshot"):
    """Reply with prose that has no <state_snapshot> block."""

    text: str = "I reviewed the conversation and will describe it informally: the user edited some files."


class Call(msgspec.Struct, omit_defaults=True):
    """One functionCall part."""

    name: str
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    id: str | None = None


class FunctionCall(_Step, tag="function_call"):
    """Reply with functionCall parts: one (name/args/id) or several in parallel (calls)."""

    name: str | None = None
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    id: str | None = None
    calls: list[Call] | None = None
    text: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.name is None) == (self.calls is None):
            raise ValueError("function_call needs exactly one of `name` or `calls`")
        if self.calls is not None and not self.calls:
            raise ValueError("function_call `calls` must not be empty")

    def all_calls(self) -> list[Call]:
        if self.calls is not None:
            return list(self.calls)
        assert self.name is not None
        return [Call(name=self.name, args=self.args, id=self.id)]


class Usage(_Step, tag="usage"):
    """Reply normally but report these token counts (countTokens: totalTokens = promptTokenCount). The extra
    counts appear in usageMetadata as the real API reports them."""

    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    cached_content_token_count: int | None = None
    thoughts_token_count: int | None = None
    tool_use_prompt_token_count: int | None = None


class Blocked(_Step, tag="blocked"):
    """The prompt is refused: no candidates, promptFeedback.blockReason (and blockReasonMessage)."""

    block_reason: str = "SAFETY"
    block_reason_message: str | None = None


FINISH_REASONS = (
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL",
    "IMAGE_SAFETY",
    "TOO_MANY_TOOL_CALLS",
)


class Finish(_Step, tag="finish"):
    """A reply of the given shape: `finishReason` (null: none at all, as in a stream that was cut), optional `text`
    and `thought` (a thought summary part), `finishMessage`, and how the candidate's parts look: "given" (the
    thought and text parts), "missing" (no `parts` key) or "empty" (`parts: []`). `extras` adds what real responses
    also carry: citationMetadata, groundingMetadata, safetyRatings, avgLogprobs and promptTokensDetails."""

    finish_reason: str | None = "STOP"
    text: str | None = None
    thought: str | None = None
    finish_message: str | None = None
    parts: Literal["given", "missing", "empty"] = "given"
    extras: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.finish_reason is not None and self.finish_reason not in FINISH_REASONS:
            raise ValueError(f"finishReason must be one of {', '.join(FINISH_REASONS)} or null")


Step = (
    Status
    | Delay
    | Hold
    | Cut
    | MidstreamError
    | Empty
    | Text
    | MalformedSnapshot
    | FunctionCall
    | Usage
    | Blocked
    | Finish
)

#: Step kinds that only make sense for requests producing content (never applied to countTokens).
_CONTENT_ONLY = (MidstreamError, Empty, Text, MalformedSnapshot, FunctionCall, Blocked, Finish)


def parse_steps(obj: Any) -> list[Step]:
    """Validate steps given as Step values, dicts, a list of them, or {"steps": [...]}.

    Raises msgspec.ValidationError naming the bad field.
    """
    if isinstance(obj, dict) and "steps" in obj:
        obj = obj["steps"]
    if isinstance(obj, dict | _Step):
        obj = [obj]
    items: list[Any] = list(obj)
    return [it if isinstance(it, _Step) else msgspec.convert(it, Step) for it in items]  # type: ignore[misc]


def step_to_dict(step: Step) -> dict[str, Any]:
    """A step as JSON-ready dict (camelCase, with its "kind")."""
    return msgspec.to_builtins(step)  # type: ignore[no-any-return]


def step_matches(step: Step, kind: RequestKind, summary: bool) -> bool:
    """Whether `step` applies to a request of this kind (summary = compaction request)."""
    m = step.match
    if kind == "token" or m == "token":  # token requests take only steps meant for them (status errors)
        return kind == "token" and m == "token" and isinstance(step, Status)
    if kind == "list" or m == "list":  # the model list likewise: only status errors meant for it
        return kind == "list" and m == "list" and isinstance(step, Status)
    if kind == "count" and isinstance(step, _CONTENT_ONLY):
        return False
    if m == "any" or m == kind:
        return True
    if kind == "count":
        return False
    if m == "chat":
        return not summary
    return m == "summary" and summary


class Script:
    """A FIFO queue of steps; each request takes the first step that matches it. Not locked itself."""

    def __init__(self) -> None:
        self._queue: list[list[Any]] = []  # [step, remaining uses (-1 = forever)]

    def extend(self, steps: Iterable[Step]) -> None:
        self._queue.extend([s, s.times] for s in steps)

    def take(self, kind: RequestKind, summary: bool) -> Step | None:
        for i, entry in enumerate(self._queue):
            step: Step = entry[0]
            if step_matches(step, kind, summary):
                if entry[1] > 0:
                    entry[1] -= 1
                    if entry[1] == 0:
                        del self._queue[i]
                return step
        return None

    def pending(self) -> list[dict[str, Any]]:
        out = []
        for step, left in self._queue:
            d = step_to_dict(step)
            d["remaining"] = left
            out.append(d)
        return out

    def clear(self) -> None:
        self._queue.clear()
