"""Registering sidecar/* handlers: params decoded with msgspec, results encoded, failures answered in words."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec
from pygls.lsp.server import LanguageServer

from sidecar.protocol import errors
from sidecar.protocol.methods import Method
from sidecar.protocol.types import to_wire

log = logging.getLogger(__name__)

P = TypeVar("P", bound=msgspec.Struct)


def decode(method: str, raw: Any, kind: type[P], *, whole_unicode: bool = True) -> P:
    """The params of `method` as `kind`; InvalidParams naming the method and the field otherwise."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise errors.invalid_params(method, f"params must be an object, got {type(raw).__name__}")
    try:
        if whole_unicode:
            msgspec.json.encode(raw)  # JSON allows "\ud800"; text that is not valid Unicode must not get further
    except UnicodeEncodeError:
        raise errors.invalid_params(method, "a string holds a lone UTF-16 surrogate (not valid Unicode)") from None
    except (TypeError, OverflowError) as exc:
        raise errors.invalid_params(method, str(exc)) from None
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        raise errors.invalid_params(method, exc) from None


def request(server: LanguageServer, method: Method) -> Callable[[Callable[[Any], Awaitable[Any]]], None]:
    """Register `fn(params) -> result` for a sidecar/* request, with msgspec decoding and clean errors."""
    name, kind = method.name, method.params

    def register(fn: Callable[[Any], Awaitable[Any]]) -> None:
        async def handler(raw: Any) -> Any:
            params = decode(name, raw, kind)
            try:
                return to_wire(await fn(params))
            except (errors.SidecarError, asyncio.CancelledError):
                raise
            except Exception as exc:
                log.exception("%s failed", name)
                message = f"{name} failed: {type(exc).__name__}: {exc}"
                raise errors.SidecarError(errors.INTERNAL_ERROR, message) from None

        server.feature(name)(handler)

    return register


def notification(server: LanguageServer, method: Method) -> Callable[[Callable[[Any], None]], None]:
    """Register `fn(params)` for a sidecar/* notification; bad params are logged and the message dropped."""
    name, kind = method.name, method.params

    def register(fn: Callable[[Any], None]) -> None:
        def handler(raw: Any) -> None:
            try:
                params = decode(name, raw, kind, whole_unicode=False)  # notifications check their own parts
            except errors.SidecarError as exc:
                log.warning("dropping %s: %s", name, exc.message)
                return
            fn(params)

        server.feature(name)(handler)

    return register
