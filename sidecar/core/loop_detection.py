"""Loop detection within one user turn: repeated tool-call cycles and repeated streamed text (stdlib only)."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections import deque
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CONTENT_CHUNK_SIZE",
    "CONTENT_LOOP_THRESHOLD",
    "TOOL_CALL_LOOP_THRESHOLD",
    "LoopDetector",
    "LoopFound",
    "loop_nudge",
    "loop_stop_message",
]

TOOL_CALL_LOOP_THRESHOLD = 5  # a cycle repeated this many times is a loop
MAX_CYCLE_LENGTH = 5  # cycles of 1..5 calls
CALL_HISTORY = 25  # keys kept (MAX_CYCLE_LENGTH x TOOL_CALL_LOOP_THRESHOLD)
CONTENT_LOOP_THRESHOLD = 10  # occurrences of one window
CONTENT_CHUNK_SIZE = 50  # characters per window
MAX_CONTENT_HISTORY = 5_000  # characters of text kept
MAX_AVERAGE_SPACING = 5 * CONTENT_CHUNK_SIZE  # the last occurrences must be close together
MAX_DISTINCT_PERIODS = 5  # the texts between occurrences repeat too

_FENCE = re.compile(r"```|~~~")
_STRUCTURE = re.compile(r"(^|\n)\s*(\|.*\||[+][-=+]{2,}|[*+-]\s|\d+[.)]\s|#{1,6}\s|>\s|[-=*_]{3,}\s*($|\n))")


@dataclass(frozen=True)
class LoopFound:
    """A detected loop: its kind and, in words, what repeated."""

    kind: str  # "toolCalls" or "content"
    detail: str


def _call_key(name: str, args: Any) -> str:
    text = f"{name}:{json.dumps(args, separators=(',', ':'), ensure_ascii=False, default=str)}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _describe_call(name: str, args: Any) -> str:
    shown = json.dumps(args, ensure_ascii=False, default=str)
    return f"{name} with arguments {shown if len(shown) <= 200 else shown[:199] + '…'}"


class LoopDetector:
    """One user turn's detector: feed it the turn's tool calls and streamed text; `reset()` at each new turn.

    Tool calls: a loop when the last k x 5 calls are the last k calls repeated 5 times (k = 1..5; same name and
    arguments, argument order included). Text: a loop when one 50-character window recurs at least 10 times, its
    last 10 occurrences close together (average spacing at most 250 characters) and the texts between them
    repeating too (at most 5 distinct ones). Code blocks, tables, lists, headings and quotes are not analysed and
    reset the text tracking, as does any tool call. After a detection the evidence is cleared, so a second
    detection needs a fresh loop of the same size."""

    def __init__(self) -> None:
        self.detections = 0
        self._calls: deque[tuple[str, str]] = deque(maxlen=CALL_HISTORY)
        self._reset_content()

    def reset(self) -> None:
        """A new user turn: forget everything, detections included."""
        self.__init__()  # type: ignore[misc]

    def _reset_content(self) -> None:
        self._text = ""
        self._offset = 0  # characters dropped from the front of _text
        self._scanned = 0  # absolute position of the next window to hash
        self._seen: dict[str, list[int]] = {}
        self._in_fence = False

    # -- tool calls --------------------------------------------------------------------------------------
    def add_call(self, name: str, args: Any) -> LoopFound | None:
        self._reset_content()
        self._calls.append((_call_key(name, args), _describe_call(name, args)))
        keys = [k for k, _ in self._calls]
        for k in range(1, MAX_CYCLE_LENGTH + 1):
            span = k * TOOL_CALL_LOOP_THRESHOLD
            if len(keys) < span:
                break
            window = keys[-span:]
            if all(window[i] == window[i % k] for i in range(span)):
                cycle = [d for _, d in list(self._calls)[-k:]]
                self._calls.clear()
                self.detections += 1
                if k == 1:
                    detail = f"Repeated tool call: {cycle[0]} ({TOOL_CALL_LOOP_THRESHOLD} times in a row)"
                else:
                    detail = f"Repeated cycle of {k} tool calls ({TOOL_CALL_LOOP_THRESHOLD} times): " + "; ".join(cycle)
                return LoopFound("toolCalls", detail)
        return None

    # -- streamed text -----------------------------------------------------------------------------------
    def add_text(self, chunk: str) -> LoopFound | None:
        if not chunk:
            return None
        fences = len(_FENCE.findall(chunk))
        if fences or self._in_fence:
            self._in_fence = self._in_fence != (fences % 2 == 1)
            in_fence = self._in_fence
            self._reset_content()
            self._in_fence = in_fence
            return None
        if _STRUCTURE.search(chunk):
            self._reset_content()
            return None
        self._text += chunk
        excess = len(self._text) - MAX_CONTENT_HISTORY
        if excess > 0:
            self._text = self._text[excess:]
            self._offset += excess
            self._scanned = max(self._scanned, self._offset)
            for key in list(self._seen):
                kept = [p for p in self._seen[key] if p >= self._offset]
                if kept:
                    self._seen[key] = kept
                else:
                    del self._seen[key]
        end = self._offset + len(self._text)
        while self._scanned + CONTENT_CHUNK_SIZE <= end:
            start = self._scanned - self._offset
            window = self._text[start : start + CONTENT_CHUNK_SIZE]
            positions = self._seen.setdefault(window, [])
            positions.append(self._scanned)
            self._scanned += 1
            if len(positions) >= CONTENT_LOOP_THRESHOLD and self._is_loop(positions):
                self._reset_content()
                self.detections += 1
                snippet = window.strip()
                return LoopFound("content", f'Repeating content detected: "{snippet}..."')
        return None

    def _is_loop(self, positions: list[int]) -> bool:
        recent = positions[-CONTENT_LOOP_THRESHOLD:]
        if (recent[-1] - recent[0]) / (len(recent) - 1) > MAX_AVERAGE_SPACING:
            return False
        periods = {self._text[a - self._offset : b - self._offset] for a, b in itertools.pairwise(recent)}
        return len(periods) <= MAX_DISTINCT_PERIODS


def loop_nudge(found: LoopFound) -> str:
    """The note the next request carries after a first detection (not recorded in the history)."""
    return (
        f"System: Potential loop detected. Details: {found.detail}. Please take a step back and confirm you're "
        "making forward progress. If not, analyze your previous actions and try a different approach, and avoid "
        "repeating the same tool calls or text."
    )


def loop_stop_message(found: LoopFound) -> str:
    """What the user is told when the turn is stopped at the second detection."""
    return (
        f"A potential loop was detected, so the turn was stopped: {found.detail}. This can happen when the model "
        "repeats the same tool calls or text. Send a new message to continue, perhaps with more guidance."
    )
