"""Session updates to the client, in order and at once: each is written when it happens, as the editor protocol's
notifications are (no task hop: a turn that streams, records and fsyncs before it next yields must not hold the
first chunk back until then)."""

from __future__ import annotations

import logging
from typing import Any

from acp.schema import SessionNotification

from sidecar.acp.rpc import NdjsonStdio

log = logging.getLogger(__name__)

Update = Any  # an acp.schema session update model, or a raw dict for updates the SDK has no type for


class Outbox:
    """One per ACP session. Typed updates are validated and serialised by the SDK's models; raw dicts
    (compaction_update, which the SDK has no type for) are written as they are. Writes are synchronous, so the order
    is the call order."""

    def __init__(self, transport: NdjsonStdio, session_id: str) -> None:
        self._transport = transport
        self.session_id = session_id
        self._held: list[Update] | None = None

    def hold(self) -> None:
        """Keep updates until release() (session/new: the client must first learn the session id)."""
        self._held = []

    def release(self) -> None:
        """Send what was held, now that the client has the response naming the session."""
        held, self._held = self._held or [], None
        for update in held:
            self._write(update)

    def put(self, update: Update) -> None:
        """Queue one session update (sent in order; held while the session is not yet announced)."""
        if self._held is not None:
            self._held.append(update)
        else:
            self._write(update)

    async def flush(self) -> None:
        """Return once what was written has left for the client (flow control: a client that stops reading
        holds the turn here, not in an ever-growing buffer)."""
        await self._transport.drain()

    def _write(self, update: Update) -> None:
        message = {"jsonrpc": "2.0", "method": "session/update", "params": notification(self.session_id, update)}
        try:
            self._transport.write_nowait(message)
        except Exception as exc:  # the client went away: the turn still completes and is recorded
            log.warning("could not send a session update: %s", exc)

    def close(self) -> None:
        """Forget the updates still held: the session is closing before it was announced."""
        self._held = None


def notification(session_id: str, update: Update) -> dict[str, Any]:
    """The params of one session/update notification, as JSON-ready values."""
    if isinstance(update, dict):
        return {"sessionId": session_id, "update": update}
    return SessionNotification(session_id=session_id, update=update).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
