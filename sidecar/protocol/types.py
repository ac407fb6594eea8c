"""Wire types of the sidecar/* JSON-RPC methods and notifications (docs/protocol.md), as msgspec Structs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

UsageSource = Literal["api", "estimate"]
CompressionStatus = Literal[
    "COMPRESSED",
    "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT",
    "COMPRESSION_FAILED_INSUFFICIENT_REDUCTION",
    "COMPRESSION_FAILED_TOKEN_COUNT_ERROR",
    "COMPRESSION_FAILED_EMPTY_SUMMARY",
    "NOOP",
    "CONTENT_TRUNCATED",
]
CompactionTrigger = Literal["auto", "manual"]
EstimateReason = Literal["newSession", "undo", "resume", "fork", "rewind"]
#: Background compaction's state: nothing prepared, a summary being prepared, a summary ready to apply.
SummaryPreparation = Literal["none", "preparing", "ready"]


def shown_as(kind: Any) -> msgspec.Meta:
    """For the editors' mirrors (sidecar/export/): a field typed `str` here that always holds a `kind`."""
    return msgspec.Meta(extra={"wire": kind})


Status = Annotated[str, shown_as(CompressionStatus)]
Trigger = Annotated[str, shown_as(CompactionTrigger)]


class _Wire(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=False):
    """camelCase on the wire; optional fields left out when unset."""


# -- requests (client -> server) ----------------------------------------------------------------
class SendMessageParams(_Wire, kw_only=True):
    text: str


class CompressParams(_Wire, kw_only=True):
    instructions: str | None = None
    #: Summarise everything before this user message (a transcript id); it and all after it stay verbatim.
    up_to_message_id: str | None = None


class ResumeSessionParams(_Wire, kw_only=True):
    session_id: str


class ImportParams(_Wire, kw_only=True):
    path: str


class GetTranscriptParams(_Wire, kw_only=True):
    session_id: str | None = None


class Empty(_Wire):
    """Params of methods that take none (an absent or empty object)."""


# -- results and notifications (server -> client) -----------------------------------------------
class TokenUsage(_Wire, kw_only=True, omit_defaults=False):
    """The status bar's numbers. `seq` grows by one with every change of state (never for a repeat of the same
    state), so a client keeps the push with the highest `seq` and drops any older one that arrives late."""

    seq: int
    session_id: str
    model: str
    prompt_token_count: int
    token_limit: int
    percent_used: float
    compression_threshold: float
    source: UsageSource
    #: Where requests go: "Gemini API", "Vertex AI (project, location)", "embedded fake Gemini".
    backend: str = ""
    #: usageMetadata.cachedContentTokenCount of the last reply, when the API reported one.
    cached_token_count: int | None = None
    #: With source "estimate": why a fresh estimate (newSession, undo, resume, fork, rewind); None = the history grew
    #: since the last reply. Fresh estimates count the system instruction and tool declarations, as the next request
    #: will.
    estimate_reason: Annotated[str | None, shown_as(EstimateReason | None)] = None
    #: Background compaction: a summary being prepared, or ready to apply at the threshold (docs/compaction.md).
    summary_preparation: SummaryPreparation = "none"
    #: After "Undo Last Compaction": automatic compaction is paused until the prompt reaches this many tokens (or
    #: the user compresses); None when no pause holds.
    auto_compaction_paused_until: int | None = None
    #: The next message compacts the conversation before it is sent (the prompt is at the threshold and no pause
    #: or postponement holds): the status bar says "compacts at the next message".
    compacts_at_next_message: bool = False
    #: The user postponed the automatic compaction that was due: the next message is sent without it (once).
    compaction_postponed: bool = False


class SendMessageResult(_Wire, kw_only=True, omit_defaults=False):
    turn_id: str
    text: str
    finish_reason: str | None
    usage: TokenUsage


class CompressResult(_Wire, kw_only=True, omit_defaults=False):
    status: Status
    original_token_count: int
    new_token_count: int
    message: str
    #: The recorded compaction, for sidecar/rateCompaction (None: nothing was recorded, e.g. NOOP).
    compaction_id: str | None = None


class CompressedParams(_Wire, kw_only=True, omit_defaults=False):
    """Params of sidecar/compressed; `message` is the text to show the user."""

    session_id: str
    status: Status
    original_token_count: int
    new_token_count: int
    trigger: Trigger
    message: str
    #: The recorded compaction, for sidecar/rateCompaction (None when it could not be recorded).
    compaction_id: str | None = None
    #: The user edited the summary before it was applied (sidecar/applyCompaction with a snapshot).
    edited: bool = False


class ToolOutputsMaskedParams(_Wire, kw_only=True, omit_defaults=False):
    """Params of sidecar/toolOutputsMasked: old tool outputs were masked before a request (once per masking);
    `message` is the text to show in the chat."""

    session_id: str
    turn_id: str
    masked_count: int
    tokens_saved: int
    message: str


class MessageDeltaParams(_Wire, kw_only=True):
    turn_id: str
    text: str


class RetryParams(_Wire, kw_only=True, omit_defaults=False):
    """sidecar/retry: the attempt that just failed is discarded; the turn's text restarts from `text`."""

    turn_id: str
    #: The attempt about to start, 2..maxAttempts.
    attempt: int
    max_attempts: int
    #: The failure type, e.g. THINKING_ONLY_RESPONSE, MALFORMED_FUNCTION_CALL, stream.
    reason: str
    #: The cause in words.
    message: str
    delay_ms: int
    #: The turn's text from earlier rounds: what stays shown.
    text: str


def to_wire(value: Any) -> Any:
    """Plain JSON-ready builtins for a wire value (what pygls sends)."""
    return msgspec.to_builtins(value)


# -- sessions: branches, rewind, names, trash, search, pins (docs/protocol.md) -----------------------
class ListSessionsParams(_Wire, kw_only=True):
    query: str | None = None
    limit: int | None = None
    cursor: str | None = None

    @property
    def paged(self) -> bool:
        """Any of the paging fields given: answer {sessions, nextCursor?} (else the bare list, as before)."""
        return self.query is not None or self.limit is not None or self.cursor is not None


class ForkParams(_Wire, kw_only=True):
    session_id: str | None = None
    before_message_id: str | None = None


class RewindParams(_Wire, kw_only=True):
    message_id: str
    #: Also put back the files the agent changed from that message on (docs/checkpoints.md); false: the conversation
    #: only, as before.
    restore_files: bool = False
    #: With restoreFiles: overwrite files changed since the agent's last edit too (else they are left as they are
    #: and listed under `conflicts`).
    force: bool = False


class PreviewRewindParams(_Wire, kw_only=True):
    message_id: str


class ListCheckpointsParams(_Wire, kw_only=True):
    session_id: str | None = None


class RenameParams(_Wire, kw_only=True):
    session_id: str
    title: str


class PinParams(_Wire, kw_only=True):
    text: str


class UnpinParams(_Wire, kw_only=True):
    pin_id: str
