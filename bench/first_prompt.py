"""Issue 25.12: the first prompt of a fresh process, against its later ones, over ACP and the editor protocol."""

# Per fresh process: start it, initialize (editor protocol: and `initialized`; ACP: and session/new), wait PAUSE_S as
# a person does before the first message, then time three prompts (request written -> answer read). The warm-up
# after initialize (google-genai imported, the model client built) must be over by then: the first prompt costs no
# more than a later one. Tiny history, the timed fake answering at once.

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from bench.acp import _AcpClient
from bench.common import Row, fake_options, init_params, judge, median, sched, sidecar_client, spread
from bench.timedfake import TimedFake

PAUSE_S = 2.0
#: The first prompt may cost at most this much more than the median of the process's later prompts.
LIMIT_MS = 30.0
PROMPTS = 3


async def _timed(send: Any, pid: int | None, number: int, waits: list[float]) -> float:
    """One prompt's wall time in ms; the time the server waited for a CPU meanwhile goes to `waits`."""
    before = sched(pid)[1] if pid is not None else 0.0
    start = time.perf_counter()
    await send(f"Prompt {number}: please check src/app.py.")
    elapsed = (time.perf_counter() - start) * 1000
    waits.append((sched(pid)[1] if pid is not None else 0.0) - before)
    return elapsed


async def _editor_process(tmp: Path, root: Path, url: str, waits: list[float]) -> list[float]:
    home = tmp / f"home-editor-{time.monotonic_ns()}"
    home.mkdir()
    editor = sidecar_client(home)
    editor.on("sidecar/messageDelta", lambda _p: None)
    editor.on("sidecar/tokenUsage", lambda _p: None)
    editor.on("window/showMessage", lambda _p: None)
    times: list[float] = []
    try:
        await editor.start()
        await editor.request("initialize", init_params(str(root), fake_options(url)))
        editor.notify("initialized", {})
        await asyncio.sleep(PAUSE_S)

        async def send(text: str) -> None:
            await editor.request("sidecar/sendMessage", {"text": text})

        for number in range(PROMPTS):
            times.append(await _timed(send, editor.pid, number, waits))
    finally:
        await editor.close()
    return times


async def _acp_process(tmp: Path, root: Path, url: str, waits: list[float]) -> list[float]:
    home = tmp / f"home-acp-{time.monotonic_ns()}"
    home.mkdir()
    agent = _AcpClient(home, url)
    times: list[float] = []
    try:
        await agent.start()
        await agent.send("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = (await agent.send("session/new", {"cwd": str(root), "mcpServers": []}))["sessionId"]
        await asyncio.sleep(PAUSE_S)

        async def send(text: str) -> None:
            await agent.send("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]})

        pid = agent.proc.pid if agent.proc is not None else None
        for number in range(PROMPTS):
            times.append(await _timed(send, pid, number, waits))
    finally:
        await agent.close()
    return times


async def measure(tmp: Path, repeat: int) -> dict[str, Any]:
    root = tmp / "ws"
    root.mkdir(parents=True, exist_ok=True)
    fake = TimedFake().start()
    out: dict[str, Any] = {"editor": [], "acp": [], "editor_wait": [], "acp_wait": []}
    try:
        for _ in range(repeat):  # processes alternate between the protocols
            out["editor"].append(await _editor_process(tmp, root, fake.url, out["editor_wait"]))
            out["acp"].append(await _acp_process(tmp, root, fake.url, out["acp_wait"]))
    finally:
        fake.stop()
    return out


def run(tmp: Path, repeat: int) -> dict[str, Any]:
    return asyncio.run(measure(tmp, repeat))


def _split(runs: list[list[float]]) -> tuple[list[float], list[float], list[float]]:
    """The first prompts, the later ones, and per process first minus its later prompts' median."""
    first = [r[0] for r in runs]
    later = [t for r in runs for t in r[1:]]
    extra = [r[0] - median(r[1:]) for r in runs]
    return first, later, extra


def rows(result: dict[str, Any]) -> list[Row]:
    out = []
    for key, name in (("acp", "ACP"), ("editor", "editor protocol")):
        first, later, extra = _split(result[key])
        out.append(
            Row(
                "issue 25.12",
                f"First prompt of a process, {name} ({PAUSE_S:g} s after the session is ready): prompt written → "
                "answer read, beyond the same process's later prompts (tiny history)",
                f"first {median(first):.1f} ms, later {median(later):.1f} ms (first − later, per process: "
                f"{median(extra):+.1f} ms)",
                f"≤ {LIMIT_MS:.0f} ms",
                judge(median(extra), LIMIT_MS, median(result[f"{key}_wait"][::PROMPTS])),
                f"first: {spread(first)}; later: {spread(later)}; {len(first)} fresh processes, "
                f"{PROMPTS} prompts each; the server waited {median(result[f'{key}_wait'][::PROMPTS]):.1f} ms for a "
                "CPU during a first prompt (median).",
                {key: result[key], "wait": result[f"{key}_wait"]},
            )
        )
    return out
