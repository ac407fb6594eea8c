"""Issue 28: spawn → initialize with 0 vs 3 configured MCP servers; one MCP call's overhead over the SDK round trip."""

# Start-up: the real sidecar process, `mcpServers` in initializationOptions (three stdio servers, the tests' server
# written with the mcp SDK) or none, spawned alternately; the servers start after `initialized`, so initialize must
# not wait for them. Also measured (for information): initialized → all three `ready` in sidecar/mcpStatus.
# Call overhead: in this process, one McpManager with one ready server; alternately the SDK's own tools/call on the
# same session (the server's own time plus the transport) and the same call through McpManager.call (lookup,
# the SDK call, Gemini CLI's result conversion). The difference is what the sidecar adds to an MCP call.

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import REPO, Row, init_params, judge_ratio, median, pid_of, sched, server_env, verdict
from sidecar.rpc.client import RpcClient

SERVER = REPO / "tests" / "mcp_client" / "server.py"
STARTUP_RATIO = 1.1  # three configured servers must not delay initialize by more than noise
OVERHEAD_MS = 1.0  # what the sidecar may add to one MCP call


def _servers(count: int, tmp: Path) -> dict[str, Any]:
    return {
        f"s{i}": {"command": sys.executable, "args": [str(SERVER), "basic", str(tmp)], "trust": True}
        for i in range(count)
    }


async def _spawn(home: Path, tmp: Path, count: int) -> dict[str, float]:
    """Spawn → initialize answer (s), the process's CPU wait until then, and initialized → every server ready."""
    client = RpcClient([sys.executable, "-m", "sidecar", "--log-level", "WARNING"], env=server_env(home))
    ready = asyncio.Event()

    def status(params: dict[str, Any]) -> None:
        servers = params.get("servers", [])
        if len(servers) == count and all(s["status"] == "ready" for s in servers):
            ready.set()

    client.on("sidecar/mcpStatus", status)
    client.on("window/showMessage", lambda _p: None)
    start = time.perf_counter()
    await client.start()
    await client.request("initialize", init_params(None, {"mcpServers": _servers(count, tmp)}), timeout=60)
    elapsed = time.perf_counter() - start
    _, waiting = sched(pid_of(client))
    began = time.perf_counter()
    client.notify("initialized", {})
    servers_ready = float("nan")
    if count:
        await asyncio.wait_for(ready.wait(), 60)
        servers_ready = time.perf_counter() - began
    await client.close()
    return {"initialize_s": elapsed, "unloaded_s": elapsed - waiting / 1000, "ready_s": servers_ready}


async def _startup(tmp: Path, repeat: int) -> dict[str, list[dict[str, float]]]:
    runs: dict[str, list[dict[str, float]]] = {"none": [], "three": []}
    for number in range(repeat + 1):
        for name, count in (("none", 0), ("three", 3)):
            result = await _spawn(tmp / f"home-{name}", tmp, count)
            if number:  # the first round fills the caches
                runs[name].append(result)
    return runs


async def _calls(tmp: Path, repeat: int) -> dict[str, list[float]]:
    from sidecar.mcp.config import parse_servers
    from sidecar.mcp.manager import McpManager

    servers, _ = parse_servers(_servers(1, tmp))
    manager = McpManager()
    manager.configure(servers)
    try:
        deadline = time.perf_counter() + 60
        while not manager.tool_names():
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the MCP server did not start: {manager.servers()}")
            await asyncio.sleep(0.05)
        session = manager.connection("s0")._session  # type: ignore[union-attr]  # the SDK's own call, same session
        times: dict[str, list[float]] = {"sdk_ms": [], "sidecar_ms": []}
        for number in range(repeat + 5):
            start = time.perf_counter()
            await session.call_tool("add", {"a": number, "b": 1})
            sdk = (time.perf_counter() - start) * 1000
            start = time.perf_counter()
            out = await manager.call("mcp_s0_add", {"a": number, "b": 1})
            ours = (time.perf_counter() - start) * 1000
            if out.error:
                raise RuntimeError(out.text)
            if number >= 5:  # warm-up calls left out
                times["sdk_ms"].append(sdk)
                times["sidecar_ms"].append(ours)
        return times
    finally:
        await manager.aclose()


def measure(tmp: Path, repeat: int, calls: int) -> dict[str, Any]:
    tmp.mkdir(parents=True, exist_ok=True)
    return {"startup": asyncio.run(_startup(tmp, repeat)), "calls": asyncio.run(_calls(tmp, calls))}


def rows(result: dict[str, Any]) -> list[Row]:
    start = result["startup"]

    def med(kind: str, key: str) -> float:
        return median([run[key] for run in start[kind]])

    ratio = med("three", "initialize_s") / med("none", "initialize_s")
    unloaded = med("three", "unloaded_s") / med("none", "unloaded_s")
    calls = result["calls"]
    sdk, ours = median(calls["sdk_ms"]), median(calls["sidecar_ms"])
    overhead = median([o - s for o, s in zip(calls["sidecar_ms"], calls["sdk_ms"], strict=True)])
    return [
        Row(
            "issue 28a",
            "Spawn → initialize with 3 configured stdio MCP servers vs none (they start after `initialized`)",
            f"{med('three', 'initialize_s') * 1000:.0f} ms vs {med('none', 'initialize_s') * 1000:.0f} ms "
            f"= {ratio:.2f}×",
            f"≤ {STARTUP_RATIO}×",
            judge_ratio(ratio, STARTUP_RATIO, unloaded),
            f"Medians of {len(start['none'])} spawns each, alternating (after one warm-up round); wall time minus "
            f"each run's wait for a CPU: {unloaded:.2f}×. After `initialized`, all three servers were ready in "
            f"{med('three', 'ready_s') * 1000:.0f} ms (in the background: no request waits for them).",
        ),
        Row(
            "issue 28b",
            "One MCP tool call through the sidecar (lookup, SDK call, result conversion) vs the SDK's own tools/call "
            "on the same session",
            f"{ours:.2f} ms vs {sdk:.2f} ms: {overhead:+.2f} ms added",
            f"≤ {OVERHEAD_MS:.0f} ms added",
            verdict(overhead <= OVERHEAD_MS),
            f"Median of {len(calls['sdk_ms'])} call pairs, alternating, after 5 warm-up pairs (median of the "
            "per-pair differences); a stdio server whose tool does no work, so the SDK figure is the server's own "
            "time plus the transport.",
        ),
    ]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp_dir:
        outcome = measure(Path(tmp_dir), 2, 50)
        for row in rows(outcome):
            print(row.target, row.verdict, row.measured, "|", row.detail)
