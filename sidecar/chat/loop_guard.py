"""One user turn's loop detection for the chat service: fed the streamed text and the tool calls of each round."""

from __future__ import annotations

from collections.abc import Sequence

from sidecar.core.history import FunctionCall
from sidecar.core.loop_detection import LoopDetector, LoopFound

__all__ = ["TurnLoops"]


class TurnLoops:
    """First detection in a turn: the next request carries a nudge (loop_nudge). Second: the turn stops."""

    def __init__(self) -> None:
        self.detector = LoopDetector()
        self.enabled = True
        self._found: LoopFound | None = None

    def start(self, enabled: bool) -> None:
        """A new user turn (the `loopDetection` setting decides whether anything is checked)."""
        self.detector.reset()
        self.enabled = enabled
        self._found = None

    def on_text(self, text: str) -> None:
        """A streamed chunk of the model's reply text."""
        if self.enabled and self._found is None and text:
            self._found = self.detector.add_text(text)

    def after_round(self, calls: Sequence[FunctionCall]) -> LoopFound | None:
        """The round's tool calls; returns the loop found in this round (text or calls), if any."""
        found, self._found = self._found, None
        if not self.enabled:
            return None
        for call in calls:
            hit = self.detector.add_call(call.name or "", call.args or {})
            found = found or hit
        return found

    @property
    def stopping(self) -> bool:
        """The turn has had two detections: it stops."""
        return self.detector.detections >= 2
