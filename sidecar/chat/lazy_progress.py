"""A work-done progress that begins at its first report: an automatic compaction that does nothing shows none."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from sidecar.core.progress import Progress


class LazyProgress:
    """Begins the editor's progress (`start`) on the first `report`; `end` before any report sends nothing.

    Calls keep their order: each waits for the one before it. `settle()` waits until all of them were sent; `end`
    after it is sent at once."""

    def __init__(self, start: Callable[[], Awaitable[Progress]]) -> None:
        self._start = start
        self._last: asyncio.Future[Progress] | None = None

    def _then(self, step: Callable[[Progress], None]) -> None:
        previous = self._last

        async def run() -> Progress:
            progress = await previous if previous is not None else await self._start()
            step(progress)
            return progress

        self._last = asyncio.ensure_future(run())

    def report(self, message: str) -> None:
        """Show a step (once the progress has begun)."""
        self._then(lambda progress: progress.report(message))

    def end(self, message: str | None = None) -> None:
        """Synchronous once every earlier call was sent (see settle()): a client may announce the outcome that
        follows end() in the same step of the event loop (sidecar.acp.bridge does)."""
        last = self._last
        if last is None:
            return
        if last.done():
            if not last.cancelled() and last.exception() is None:
                last.result().end(message)
            return
        self._then(lambda progress: progress.end(message))

    async def settle(self) -> None:
        """Wait until what was sent to the editor has gone out, so end() follows it."""
        if self._last is not None:
            await asyncio.wait([self._last])  # its failure is the editor's progress failing: not the compaction's
