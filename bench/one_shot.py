"""A one-shot ACP client (like `acpx exec`): session/new, then the prompt at once; the time to its first chunk."""

# Per fresh process, with no pause anywhere: spawn `sidecar acp`, initialize, session/new, then write the prompt as
# soon as session/new answers. Timed on one clock: prompt written -> first agent_message_chunk read (what the user
# waits for once the client has a session), and spawn -> first chunk (the whole one-shot run). The timed fake
# answers at once, so the figures are the sidecar's own. Gemini CLI cannot run here: its figure (first chunk after
# the prompt, median of 9, measured in a real terminal against the same kind of fake) is the target.

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from bench.acp import _AcpClient
from bench.common import Row, judge, median, sched, spread
from bench.timedfake import TimedFake

#: Gemini CLI's first chunk after a prompt sent at once after session/new (ms, median of 9, measured elsewhere).
GEMINI_CLI_FIRST_CHUNK_MS = 124.0


async def _one(tmp: Path, root: Path, url: str) -> tuple[float, float, float]:
    home = tmp / f"home-{time.monotonic_ns()}"
    home.mkdir()
    agent = _AcpClient(home, url)
    spawned = time.perf_counter()
    try:
        await agent.start()
        pid = agent.proc.pid if agent.proc is not None else None
        await agent.send("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = (await agent.send("session/new", {"cwd": str(root), "mcpServers": []}))["sessionId"]
        waited_before = sched(pid)[1] if pid is not None else 0.0
        written = time.perf_counter()
        prompt = [{"type": "text", "text": "Please check src/app.py."}]
        await agent.send("session/prompt", {"sessionId": session, "prompt": prompt})
        waited = (sched(pid)[1] if pid is not None else 0.0) - waited_before
        assert agent.first_chunk is not None, "the prompt streamed no agent_message_chunk"
        return (agent.first_chunk - written) * 1000, (agent.first_chunk - spawned) * 1000, waited
    finally:
        await agent.close()


async def measure(tmp: Path, repeat: int) -> dict[str, Any]:
    root = tmp / "ws"
    root.mkdir(parents=True, exist_ok=True)
    fake = TimedFake().start()
    out: dict[str, Any] = {"first_chunk": [], "from_spawn": [], "wait": []}
    try:
        for _ in range(repeat):
            first, whole, waited = await _one(tmp, root, fake.url)
            out["first_chunk"].append(first)
            out["from_spawn"].append(whole)
            out["wait"].append(waited)
    finally:
        fake.stop()
    return out


def run(tmp: Path, repeat: int) -> dict[str, Any]:
    return asyncio.run(measure(tmp, repeat))


def rows(result: dict[str, Any]) -> list[Row]:
    first, whole, wait = result["first_chunk"], result["from_spawn"], result["wait"]
    return [
        Row(
            "issue 40.22",
            "One-shot ACP client (spawn, initialize, session/new, prompt at once, no pause): prompt written → first "
            "agent_message_chunk",
            f"{median(first):.0f} ms ({median(first) / GEMINI_CLI_FIRST_CHUNK_MS:.2f}× Gemini CLI's "
            f"{GEMINI_CLI_FIRST_CHUNK_MS:.0f} ms); spawn → first chunk {median(whole):.0f} ms",
            f"≤ {GEMINI_CLI_FIRST_CHUNK_MS:.0f} ms (1.0× Gemini CLI)",
            judge(median(first), GEMINI_CLI_FIRST_CHUNK_MS, median(wait)),
            f"prompt → first chunk: {spread(first)}; spawn → first chunk: {spread(whole)}; the server waited "
            f"{median(wait):.1f} ms for a CPU during the prompt (median).",
            result,
        )
    ]
