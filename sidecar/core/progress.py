"""The one Progress port: a running work-done progress the user sees (rpc/editor.WorkDone, ACP's compaction card)."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Progress"]


class Progress(Protocol):
    """A running progress in the front-end: the steps of a long piece of work (a compaction, a turn), then its end."""

    def report(self, message: str) -> None:
        """Show a step of the work."""

    def end(self, message: str | None = None) -> None:
        """End the progress (once), with an optional final message."""
