"""Targets 2 and 7: per-turn sidecar overhead and tokenUsage latency, with a tiny and a 1M-token history."""

# Measured from outside the server, on one clock (the bench process runs the client and the fake):
#   overhead = (the fake has read the whole streamGenerateContent request) - (the client wrote sidecar/sendMessage)
#   usage latency = (the client received sidecar/tokenUsage) - (the fake wrote the reply's last SSE event)
# The overhead includes the JSON-RPC hop, the sidecar's turn bookkeeping, building the request (google-genai) and
# sending the body over loopback; the fake replies at once.

from __future__ import annotations

import asyncio
import gc
import time
from pathlib import Path
from typing import Any

from bench import generator, sessionfiles
from bench.common import Row, fake_options, init_params, judge, median, pid_of, sched, sidecar_client, spread, worst
from bench.timedfake import TimedFake
from sidecar.rpc_client import RpcClient

OVERHEAD_LIMIT_MS = 5.0
USAGE_LIMIT_MS = 5.0
#: Big enough that a 1M-token history neither triggers auto compaction nor the overflow guard.
TOKEN_LIMIT = 8_000_000
#: The tiny history starts a new session every this many turns (at most 2 x 5 contents).
TINY_TURNS = 5


class _Client:
    def __init__(self, client: RpcClient) -> None:
        self.rpc = client
        self.pid: int | None = None
        self.usage_at: list[float] = []
        self.usage_sched: list[tuple[float, float]] = []
        self.messages: list[str] = []
        client.on("sidecar/tokenUsage", self._usage)
        client.on("window/showMessage", lambda p: self.messages.append(str(p.get("message"))))
        client.on("window/workDoneProgress/create", lambda _p: None)

    def _usage(self, _params: object) -> None:
        self.usage_at.append(time.perf_counter())
        self.usage_sched.append(sched(self.pid) if self.pid is not None else (0.0, 0.0))

    async def wait_usage(self, count: int, timeout: float = 60) -> None:
        deadline = time.perf_counter() + timeout
        while len(self.usage_at) < count:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no sidecar/tokenUsage within {timeout}s; messages: {self.messages[-3:]}")
            await asyncio.sleep(0.005)


async def _turns(
    client: _Client, fake: TimedFake, count: int, warmup: int, fresh_every: int = 0
) -> dict[str, list[float]]:
    """Timed turns; with `fresh_every`, a new session every that many turns (keeps a tiny history tiny)."""
    keys = ("sent", "started", "usage", "turn", "sent_cpu", "sent_wait", "usage_cpu", "usage_wait")
    out: dict[str, list[float]] = {key: [] for key in keys}
    for number in range(warmup + count):
        if fresh_every and number % fresh_every == 0:
            await client.rpc.request("sidecar/newSession", {})
            await client.wait_usage(len(client.usage_at))
        fake.take()
        seen = len(client.usage_at)
        before = fake.sched()
        start = time.perf_counter()
        await client.rpc.request("sidecar/sendMessage", {"text": f"Turn {number}: please check src/app.py again."})
        done = time.perf_counter()
        await client.wait_usage(seen + 1)
        streams = [s for s in fake.take() if "streamGenerateContent" in s.path]
        if len(streams) != 1:
            raise RuntimeError(f"expected one model request per turn, got {len(streams)}")
        stamps = streams[0]
        if number < warmup:
            continue
        out["sent"].append((stamps.body - start) * 1000)
        out["started"].append((stamps.headers - start) * 1000)
        out["usage"].append((client.usage_at[seen] - stamps.last_event) * 1000)
        out["turn"].append((done - start) * 1000)
        # The server's own CPU time, and its time waiting for a CPU, within each window (schedstat).
        out["sent_cpu"].append(stamps.body_sched[0] - before[0])
        out["sent_wait"].append(stamps.body_sched[1] - before[1])
        out["usage_cpu"].append(client.usage_sched[seen][0] - stamps.end_sched[0])
        out["usage_wait"].append(client.usage_sched[seen][1] - stamps.end_sched[1])
    return out


async def measure(tmp: Path, repeat_small: int, repeat_big: int) -> dict[str, Any]:
    home, root = tmp / "home", tmp / "ws"
    root.mkdir(parents=True, exist_ok=True)
    big = generator.conversation(generator.CONVERSATION_SIZES["1m"])
    sessionfiles.conversation_session(home, root, "turn-1m", big)
    contents = len(big)
    del big
    gc.collect()
    fake = TimedFake().start()
    client = _Client(sidecar_client(home))
    try:
        await client.rpc.start()
        client.pid = fake.watch_pid = pid_of(client.rpc)
        await client.rpc.request("initialize", init_params(str(root), fake_options(fake.url, tokenLimit=TOKEN_LIMIT)))
        client.rpc.notify("initialized", {})
        await client.wait_usage(1)
        small = await _turns(client, fake, repeat_small, warmup=2, fresh_every=TINY_TURNS)
        await client.rpc.request("sidecar/resumeSession", {"sessionId": "turn-1m"})
        large = await _turns(client, fake, repeat_big, warmup=1)
        usage = await client.rpc.request("sidecar/getTokenUsage", {})
    finally:
        await client.rpc.close()
        fake.stop()
    return {"small": small, "large": large, "history_contents": contents, "prompt_tokens": usage["promptTokenCount"]}


def run(tmp: Path, repeat_small: int, repeat_big: int) -> dict[str, Any]:
    return asyncio.run(measure(tmp, repeat_small, repeat_big))


def _blocked(runs: dict[str, list[float]]) -> float:
    """Median per turn of latency - server CPU - server CPU wait."""
    return median([u - c - w for u, c, w in zip(runs["usage"], runs["usage_cpu"], runs["usage_wait"], strict=True)])


def rows(result: dict[str, Any]) -> list[Row]:
    small, large = result["small"], result["large"]
    sent_small, sent_large = median(small["sent"]), median(large["sent"])
    started_large = median(large["started"])
    usage_small, usage_large = median(small["usage"]), median(large["usage"])
    return [
        Row(
            "2",
            "Per-turn overhead, 1M-token history (sendMessage written → request fully received by the fake)",
            f"{sent_large:.1f} ms (tiny history {sent_small:.1f} ms; difference {sent_large - sent_small:.1f} ms)",
            f"≤ {OVERHEAD_LIMIT_MS:.0f} ms",
            judge(sent_large, OVERHEAD_LIMIT_MS, median(large["sent_wait"])),
            f"1M: {spread(large['sent'])}; the sidecar was on a CPU {median(large['sent_cpu']):.1f} ms of it and "
            f"waited {median(large['sent_wait']):.1f} ms for one; headers arrived after {started_large:.1f} ms. "
            f"Tiny (a new session every {TINY_TURNS} turns): {spread(small['sent'])}, on CPU "
            f"{median(small['sent_cpu']):.1f} ms. "
            f"History {result['history_contents']} contents, API promptTokenCount {result['prompt_tokens']:,}.",
            result,
        ),
        Row(
            "7",
            "sidecar/tokenUsage at the client after the model's last chunk",
            f"{usage_large:.1f} ms at 1M tokens, {usage_small:.1f} ms tiny",
            f"≤ {USAGE_LIMIT_MS:.0f} ms",
            worst(
                judge(usage_large, USAGE_LIMIT_MS, median(large["usage_wait"])),
                judge(usage_small, USAGE_LIMIT_MS, median(small["usage_wait"])),
            ),
            f"1M: {spread(large['usage'])}, server on CPU {median(large['usage_cpu']):.1f} ms, waiting for a CPU "
            f"{median(large['usage_wait']):.1f} ms, neither {_blocked(large):.1f} ms; tiny: {spread(small['usage'])}, "
            f"on CPU {median(small['usage_cpu']):.1f} ms, waiting {median(small['usage_wait']):.1f} ms, neither "
            f"{_blocked(small):.1f} ms. 'Neither' is the server blocked (the turn's fsync runs before the "
            "notification) plus the time in transit to the client.",
        ),
    ]
