"""Wire types of the sidecar/* JSON-RPC methods and notifications (docs/protocol.md), as msgspec Structs."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

UsageSource = Literal["api", "estimate"]


class _Wire(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=False):
    """camelCase on the wire; optional fields left out when unset."""


# -- requests (client -> server) ----------------------------------------------------------------
class SendMessageParams(_Wire, kw_only=True):
    text: str


class CompressParams(_Wire, kw_only=True):
    instructions: str | None = None


class SessionParams(_Wire, kw_only=True):
    session_id: str


class ImportParams(_Wire, kw_only=True):
    path: str


class TranscriptParams(_Wire, kw_only=True):
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
    #: With source "estimate": why a fresh estimate (newSession, undo, resume); None = the history grew since
    #: the last reply. Fresh estimates count the system instruction and tool declarations, as the next request will.
    estimate_reason: str | None = None


class SendMessageResult(_Wire, kw_only=True, omit_defaults=False):
    turn_id: str
    text: str
    finish_reason: str | None
    usage: TokenUsage


class CompressResult(_Wire, kw_only=True, omit_defaults=False):
    status: str
    original_token_count: int
    new_token_count: int
    message: str


class CompressedNotice(_Wire, kw_only=True, omit_defaults=False):
    session_id: str
    status: str
    original_token_count: int
    new_token_count: int
    trigger: str
    message: str


class MessageDelta(_Wire, kw_only=True):
    turn_id: str
    text: str


class RetryNotice(_Wire, kw_only=True, omit_defaults=False):
    """sidecar/retry: the attempt that just failed is discarded; the turn's text restarts from `text`."""

    turn_id: str
    attempt: int
    max_attempts: int
    reason: str
    message: str
    delay_ms: int
    text: str


def to_wire(value: Any) -> Any:
    """Plain JSON-ready builtins for a wire value (what pygls sends)."""
    return msgspec.to_builtins(value)
