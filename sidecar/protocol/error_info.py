"""How each error code is named and explained (for the mirrors and docs), and the `data` some errors carry."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from sidecar.protocol.errors import (
    BUSY,
    CONTEXT_OVERFLOW,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MODEL_ERROR,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    SESSION_ERROR,
)


@dataclass(frozen=True)
class Code:
    """An error code as the editors' tables and docs/protocol.md name and explain it."""

    code: int
    name: str
    when: str

    @property
    def key(self) -> str:
        """camelCase: the constant's name in the editors' tables (`sessionError`)."""
        return self.name[0].lower() + self.name[1:]


CODES = (
    Code(
        PARSE_ERROR,
        "ParseError",
        "a frame's body is not JSON, or a header block has no valid `Content-Length` (`id: null`)",
    ),
    Code(
        INVALID_REQUEST,
        "InvalidRequest",
        "JSON that is not a JSON-RPC 2.0 message (not an object, wrong `jsonrpc`, bad `id`/`method`)",
    ),
    Code(METHOD_NOT_FOUND, "MethodNotFound", "unknown request method (unknown notifications are logged and dropped)"),
    Code(
        INVALID_PARAMS,
        "InvalidParams",
        "params of the wrong shape; the message names the method and the field, e.g. ``Invalid params for "
        "sidecar/sendMessage: Expected `str`, got `int` - at `$.text` ``",
    ),
    Code(INTERNAL_ERROR, "InternalError", "a bug; the message names the method and the exception (never the API key)"),
    Code(REQUEST_CANCELLED, "RequestCancelled", "the request was cancelled with `$/cancelRequest`"),
    Code(
        MODEL_ERROR,
        "ModelError",
        "the model call failed after retries; `data = {kind, status, turnId}` (plus `reason` and `blockReason` "
        "below) with `kind` one of `rateLimit`, `auth`, `notFound`, `badRequest`, `server`, `timeout`, "
        "`unreachable`, `stream`, `credentials` (Vertex AI's Application Default Credentials are missing or "
        'refused), `config` (a backend that cannot work, e.g. `backend: "gemini"` without a key), `blocked` (a '
        "blocked prompt or reply; `data.blockReason`), `invalidReply` (every attempt was unusable; `data.reason` is "
        "the type)",
    ),
    Code(
        CONTEXT_OVERFLOW,
        "ContextOverflow",
        "the message cannot fit in the context window; `data = {estimatedRequestTokenCount, remainingTokenCount}`",
    ),
    Code(BUSY, "Busy", "a compaction is already running"),
    Code(
        SESSION_ERROR,
        "SessionError",
        "a session cannot be resumed, read, imported or undone (unknown, damaged, newer format); nothing was changed",
    ),
)


class ModelErrorData(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """`data` of a ModelError: what failed (ModelError kinds of sidecar.gemini.client) and the HTTP status."""

    kind: str
    status: int | None
    #: The turn whose model call failed (absent for a compaction's).
    turn_id: str | None = None
    #: kind "invalidReply" / "blocked": the failure type (NO_RESPONSE_TEXT, PROMPT_BLOCKED, …).
    reason: str | None = None
    #: kind "blocked": promptFeedback.blockReason, or the finish reason of the policy that stopped the reply.
    block_reason: str | None = None


class ContextOverflowData(msgspec.Struct, rename="camel", kw_only=True):
    """`data` of a ContextOverflow: the message's estimated size and what is left of the context window."""

    estimated_request_token_count: int
    remaining_token_count: int


#: The `data` types of errors, for the editors' mirrors.
DATA_TYPES = (ModelErrorData, ContextOverflowData)
