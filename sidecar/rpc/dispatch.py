"""Registering sidecar/* handlers: params decoded with msgspec, results encoded, failures answered in words."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec
from pygls.lsp.server import LanguageServer

from sidecar.protocol import edge, errors
from sidecar.protocol.methods import Method
from sidecar.protocol.types import to_wire

log = logging.getLogger(__name__)

P = TypeVar("P", bound=msgspec.Struct)
R = TypeVar("R")

#: Set (to 1) by the end-to-end tests: every result is checked against its method's declared type before it is sent.
CHECK_RESULTS_ENV = "SIDECAR_CHECK_RESULTS"


def decode(method: str, raw: Any, kind: type[P], *, whole_unicode: bool = True) -> P:
    """The params of `method` as `kind`; InvalidParams naming the method and the field otherwise."""
    if raw is None:
        raw = {}
    problem = edge.not_an_object(raw) or (edge.unicode_problem(raw) if whole_unicode else None)
    if problem is not None:
        raise errors.invalid_params(method, problem)
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        raise errors.invalid_params(method, exc) from None


def check_result(method: Method[Any, Any], wire: Any) -> None:
    """Raise TypeError unless `wire` (as sent) converts to the method's declared result type."""
    try:
        msgspec.json.decode(msgspec.json.encode(wire), type=method.result)
    except msgspec.ValidationError as exc:
        raise TypeError(f"the result of {method.name} is not a {method.result}: {exc}") from None


def request(server: LanguageServer, method: Method[P, R]) -> Callable[[Callable[[P], Awaitable[R]]], None]:
    """Register `fn(params) -> result` for a sidecar/* request, with msgspec decoding and clean errors. mypy checks
    `fn` against the method's declared params and result types."""
    name, kind = method.name, method.params
    checked = os.environ.get(CHECK_RESULTS_ENV) == "1"

    def register(fn: Callable[[P], Awaitable[R]]) -> None:
        async def handler(raw: Any) -> Any:
            params = decode(name, raw, kind)
            try:
                wire = to_wire(await fn(params))
                if checked:
                    check_result(method, wire)
                return wire
            except (errors.SidecarError, asyncio.CancelledError):
                raise
            except Exception as exc:
                log.exception("%s failed", name)
                raise errors.SidecarError(errors.INTERNAL_ERROR, edge.internal_error(name, exc)) from None

        server.feature(name)(handler)

    return register


def notification(server: LanguageServer, method: Method[P, None]) -> Callable[[Callable[[P], None]], None]:
    """Register `fn(params)` for a sidecar/* notification; bad params are logged and the message dropped."""
    name, kind = method.name, method.params

    def register(fn: Callable[[P], None]) -> None:
        def handler(raw: Any) -> None:
            try:
                params = decode(name, raw, kind, whole_unicode=False)  # notifications check their own parts
            except errors.SidecarError as exc:
                log.warning("dropping %s: %s", name, exc.message)
                return
            fn(params)

        server.feature(name)(handler)

    return register
