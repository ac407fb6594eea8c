"""JSON-RPC error codes and the exceptions that carry them to the client (docs/protocol.md#errors)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
REQUEST_CANCELLED = -32800
INTERNAL_ERROR = -32603

MODEL_ERROR = -32001
CONTEXT_OVERFLOW = -32002
BUSY = -32003
SESSION_ERROR = -32004



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
        PARSE_ERROR, "ParseError",
        "a frame's body is not JSON, or a header block has no valid `Content-Length` (`id: null`)",
    ),
    Code(
        INVALID_REQUEST, "InvalidRequest",
        "JSON that is not a JSON-RPC 2.0 message (not an object, wrong `jsonrpc`, bad `id`/`method`)",
    ),
    Code(METHOD_NOT_FOUND, "MethodNotFound", "unknown request method (unknown notifications are logged and dropped)"),
    Code(
        INVALID_PARAMS, "InvalidParams",
        "params of the wrong shape; the message names the method and the field, e.g. ``Invalid params for "
        "sidecar/sendMessage: Expected `str`, got `int` - at `$.text` ``",
    ),
    Code(INTERNAL_ERROR, "InternalError", "a bug; the message names the method and the exception (never the API key)"),
    Code(REQUEST_CANCELLED, "RequestCancelled", "the request was cancelled with `$/cancelRequest`"),
    Code(
        MODEL_ERROR, "ModelError",
        "the model call failed after retries; `data = {kind, status, turnId}` with `kind` one of `rateLimit`, "
        "`auth`, `notFound`, `badRequest`, `server`, `timeout`, `unreachable`, `stream`",
    ),
    Code(
        CONTEXT_OVERFLOW, "ContextOverflow",
        "the message cannot fit in the context window; `data = {estimatedRequestTokenCount, remainingTokenCount}`",
    ),
    Code(BUSY, "Busy", "a compaction is already running"),
    Code(
        SESSION_ERROR, "SessionError",
        "a session cannot be resumed, read, imported or undone (unknown, damaged, newer format); nothing was changed",
    ),
)


class ModelErrorData(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """`data` of a ModelError: what failed (ModelError kinds of sidecar.gemini.client) and the HTTP status."""

    kind: str
    status: int | None
    #: The turn whose model call failed (absent for a compaction's).
    turn_id: str | None = None


class ContextOverflowData(msgspec.Struct, rename="camel", kw_only=True):
    """`data` of a ContextOverflow: the message's estimated size and what is left of the context window."""

    estimated_request_token_count: int
    remaining_token_count: int


#: The `data` types of errors, for the editors' mirrors.
DATA_TYPES = (ModelErrorData, ContextOverflowData)


class SidecarError(Exception):
    """An error answered to a request: a code from this module, a message a user can act on, optional data.

    Services raise it; the JSON-RPC layer (sidecar.rpc) turns it into the error response."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def invalid_params(method: str, exc: msgspec.ValidationError | str) -> SidecarError:
    """InvalidParams whose message names the method and the offending field."""
    return SidecarError(INVALID_PARAMS, f"Invalid params for {method}: {exc}")
