"""JSON-RPC error codes and the exceptions that carry them to the client (docs/protocol.md#errors)."""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.protocol import edge

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
    return SidecarError(INVALID_PARAMS, edge.bad_params(method, exc))
