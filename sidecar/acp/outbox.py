"""Session updates to the client, in order: synchronous ports enqueue, one task sends, prompts answer after a flush."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from acp.agent.connection import AgentSideConnection
from acp.schema import SessionNotification

from sidecar.acp.rpc import NdjsonStdio

log = logging.getLogger(__name__)

Update = Any  # an acp.schema session update model, or a raw dict for updates the SDK has no type for


class Outbox:
    """One ordered queue per ACP session. Typed updates go through the SDK; raw dicts (the unstable
    compaction_update) are written as they are, on the same queue so that nothing overtakes anything."""

    def __init__(self, conn: AgentSideConnection, transport: NdjsonStdio, session_id: str) -> None:
        self._conn = conn
        self._transport = transport
        self.session_id = session_id
        self._queue: asyncio.Queue[Update] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._held = False

    def hold(self) -> None:
        """Queue without sending until release() (session/new: the client must first learn the session id)."""
        self._held = True

    def release(self) -> None:
        self._held = False
        if not self._queue.empty():
            self._start()

    def put(self, update: Update) -> None:
        self._queue.put_nowait(update)
        if not self._held:
            self._start()

    def _start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain(), name="acp-outbox")

    async def flush(self) -> None:
        """Return once everything queued so far has been written."""
        await self._queue.join()

    async def _drain(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                if isinstance(update, dict):
                    params = {"sessionId": self.session_id, "update": update}
                    await self._transport.send({"jsonrpc": "2.0", "method": "session/update", "params": params})
                else:
                    await self._conn.session_update(session_id=self.session_id, update=update)
            except Exception as exc:  # the client went away, or a value could not be encoded: keep going
                log.warning("could not send a session update: %s", exc)
            finally:
                self._queue.task_done()

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()


def notification(session_id: str, update: Update) -> dict[str, Any]:
    """A whole session/update notification as JSON (for benchmarks and tests of the builders)."""
    if isinstance(update, dict):
        return {"sessionId": session_id, "update": update}
    return SessionNotification(session_id=session_id, update=update).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
