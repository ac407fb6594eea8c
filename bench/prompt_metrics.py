"""What a session's model requests cost: tokens sent, the part an implicit cache can serve, the billed equivalent."""

# Every figure is computed from the requests as the fake Gemini received them, with the fake's own token rule
# (sidecar/fakegemini/replies.py: ceil(JSON bytes / 4) of contents + systemInstruction + tools), so that both sides
# of a comparison are measured by the same code. A request's cacheable prefix is the longest byte-identical prefix
# it shares with the request before it, in the order the model reads a prompt (system instruction, tools, then the
# contents); Gemini 2.5 serves such a prefix from its implicit cache when it is at least MIN_CACHEABLE tokens, at
# CACHED_PRICE of the input price (ai.google.dev/gemini-api/docs/caching).

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from sidecar.fakegemini.fake import FakeGemini, Plan
from sidecar.fakegemini.replies import prompt_tokens

MIN_CACHEABLE = 2_048  # Gemini 2.5 Flash and Pro: the minimum prefix an implicit cache hit needs
CACHED_PRICE = 0.25  # a cached input token is billed as a quarter of an uncached one (Gemini 2.5's implicit cache)
_encode = msgspec.json.encode


def request_items(body: dict[str, Any]) -> list[bytes]:
    """The prompt as the model reads it, one JSON item per piece: system instruction, tools, each content."""
    system = body.get("systemInstruction", body.get("system_instruction"))
    contents = body.get("contents") or []
    return [_encode(system), _encode(body.get("tools")), *(_encode(c) for c in contents)]


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of two byte strings (binary search over slice comparisons)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def shared_prefix_bytes(previous: Sequence[bytes], current: Sequence[bytes]) -> int:
    """Bytes of `current`'s prompt that repeat `previous`'s from the start, byte for byte."""
    total = 0
    for old, new in zip(previous, current, strict=False):
        if old == new:
            total += len(new)
            continue
        return total + common_prefix(old, new)
    return total


def cacheable_tokens(prefix_bytes: int, prompt: int) -> int:
    """Tokens an implicit cache serves for a shared prefix: none below MIN_CACHEABLE, never more than the prompt."""
    tokens = min(prefix_bytes // 4, prompt)
    return tokens if tokens >= MIN_CACHEABLE else 0


def billed(prompt: int, cached: int) -> float:
    """The billed-token equivalent of one request: uncached tokens + CACHED_PRICE x cached ones."""
    return (prompt - cached) + CACHED_PRICE * cached


def asks_for_snapshot(body: dict[str, Any]) -> bool:
    """A summary request whatever its system instruction: its last turn is the user asking for a <state_snapshot>
    (a summary sent as the chat's own request, with the instruction appended, is one)."""
    contents = body.get("contents") or []
    last = contents[-1] if contents else {}
    if not isinstance(last, dict) or last.get("role") != "user":
        return False
    return any("<state_snapshot>" in str(p.get("text", "")) for p in last.get("parts") or [] if isinstance(p, dict))


@dataclass
class Request:
    """One model request as measured: kind ("chat" or "summary"), prompt tokens, its cached part, its tail."""

    kind: str
    prompt: int
    cached: int
    tail: list[Any] = field(default_factory=list)  # the last two contents (chat requests), for the replay

    @property
    def billed(self) -> float:
        return billed(self.prompt, self.cached)


@dataclass
class Totals:
    """A session's sums over its requests."""

    requests: int
    chat_requests: int
    prompt: int
    cached: int
    billed: float
    peak: int
    summary_calls: int
    summary_prompt: int
    summary_cached: int

    @classmethod
    def of(cls, requests: Sequence[Request]) -> Totals:
        summaries = [r for r in requests if r.kind == "summary"]
        return cls(
            requests=len(requests),
            chat_requests=len(requests) - len(summaries),
            prompt=sum(r.prompt for r in requests),
            cached=sum(r.cached for r in requests),
            billed=sum(r.billed for r in requests),
            peak=max((r.prompt for r in requests), default=0),
            summary_calls=len(summaries),
            summary_prompt=sum(r.prompt for r in summaries),
            summary_cached=sum(r.cached for r in summaries),
        )


class MeteredFake(FakeGemini):
    """The fake Gemini, measuring each generate/stream request as it arrives and then dropping its body (a long
    session's requests would otherwise fill the memory)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.measured: list[Request] = []
        #: The first chat request's system instruction, tool declarations and contents before the user's message.
        self.frame: dict[str, Any] | None = None
        self._previous: list[bytes] = []
        self._measure_lock = threading.Lock()

    def start(self) -> MeteredFake:
        super().start()
        return self

    def plan(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        api_key: str | None,
        raw: bytes,
        authorization: str | None = None,
    ) -> Plan:
        answer = super().plan(method, path, query, api_key, raw, authorization)
        with self._lock:
            record = self._log[-1] if self._log else None
        if record is None or record.kind not in ("generate", "stream") or not isinstance(record.body, dict):
            return answer
        body, record.body = record.body, None
        if answer.status != 200:
            raise RuntimeError(f"the fake refused a request of the session ({answer.status}): {answer.body}")
        summary = record.summary or asks_for_snapshot(body)
        with self._measure_lock:
            items = request_items(body)
            prompt = prompt_tokens(body)
            cached = cacheable_tokens(shared_prefix_bytes(self._previous, items), prompt)
            self._previous = items
            tail = [] if summary else list((body.get("contents") or [])[-2:])
            if self.frame is None and not summary:
                system = body.get("systemInstruction", body.get("system_instruction"))
                head = list((body.get("contents") or [])[:-1])
                self.frame = {"system": system, "tools": body.get("tools"), "head": head}
            self.measured.append(Request("summary" if summary else "chat", prompt, cached, tail))
        return answer

    def take_measured(self) -> list[Request]:
        with self._measure_lock:
            taken, self.measured, self._previous = self.measured, [], []
        return taken
