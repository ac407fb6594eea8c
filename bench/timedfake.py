"""The embedded fake Gemini with timestamps (perf_counter, the bench's clock) of each request's arrival and replies."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from bench.common import sched
from sidecar.fakegemini import FakeGemini
from sidecar.fakegemini.server import _Handler


@dataclass
class Stamps:
    """When one API request's headers and body had arrived, and when the reply's chunks were written."""

    path: str = ""
    headers: float = 0.0  # request line and headers read (the body is still in flight)
    body: float = 0.0  # the whole body read: the request has left the sidecar
    first_event: float = 0.0  # the first SSE event written and flushed
    last_event: float = 0.0  # the last SSE event (finishReason, usageMetadata) written and flushed
    end: float = 0.0  # the chunked terminator written
    body_sched: tuple[float, float] = (0.0, 0.0)  # the watched process's schedstat when the body was read
    end_sched: tuple[float, float] = (0.0, 0.0)  # ... and right after the terminator (not to delay it)


class _TimedHandler(_Handler):
    stamps: Stamps | None = None

    def _read_body(self) -> bytes:
        fake = self.server.fake
        assert isinstance(fake, TimedFake)
        self.stamps = Stamps(path=self.path, headers=time.perf_counter())
        raw = super()._read_body()
        self.stamps.body = time.perf_counter()
        self.stamps.body_sched = fake.sched()
        fake.add(self.stamps)
        return raw

    def _chunk(self, data: bytes) -> None:
        super()._chunk(data)
        if self.stamps is not None:
            if data:
                self.stamps.last_event = time.perf_counter()
                self.stamps.first_event = self.stamps.first_event or self.stamps.last_event
            else:
                self.stamps.end = time.perf_counter()
                self.stamps.end_sched = self.server.fake.sched()  # type: ignore[attr-defined]


class TimedFake(FakeGemini):
    """FakeGemini whose requests are timestamped; `forget()` drops the request log (1M-token bodies are big)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.stamps: list[Stamps] = []
        self._stamps_lock = threading.Lock()
        #: The process whose CPU time and CPU wait are read at each stamp (the sidecar under test).
        self.watch_pid: int | None = None

    def start(self) -> TimedFake:
        super().start()
        self._server.RequestHandlerClass = _TimedHandler
        return self

    def sched(self) -> tuple[float, float]:
        return sched(self.watch_pid) if self.watch_pid is not None else (0.0, 0.0)

    def add(self, stamps: Stamps) -> None:
        with self._stamps_lock:
            self.stamps.append(stamps)

    def take(self) -> list[Stamps]:
        """The stamps so far (oldest first), clearing them and the request log."""
        with self._stamps_lock:
            taken, self.stamps = self.stamps, []
        self.reset()
        return taken
