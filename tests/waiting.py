"""Wait for a state, never for a length of time: the one polling helper the suites share."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def until(check: Callable[[], Any], what: str, timeout: float = 15) -> Any:
    """Poll `check` (plain or async) until it returns something truthy, and return that; fail naming `what`.

    The timeout only bounds a broken run: a passing run returns as soon as the state is there.
    """
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.01)


async def settled(future: Awaitable[T]) -> None:
    """Wait until `future` has finished, however it finished (result, error or cancellation)."""
    await asyncio.wait([asyncio.ensure_future(future)])
