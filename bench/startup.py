"""Target 1 (spawn → initialize vs a bare pygls server); issue 5 (50,000-file workspace: initialize, watcher RSS)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import RESULTS, Row, init_params, judge_ratio, median, pid_of, proc_kb, sched, server_env
from sidecar.rpc.client import RpcClient

STARTUP_RATIO = 1.3
WORKSPACE_RATIO = 1.1  # a big workspace must not delay initialize by more than noise
WORKSPACE_FILES = 50_000
BARE = Path(__file__).with_name("bare_server.py")


def workspace(files: int = WORKSPACE_FILES) -> Path:
    """A generated source tree of `files` files (cached under bench/results/): 20 packages x 50 folders x 50
    files, plus an ignored node_modules and .git, as a real repository has."""
    root = RESULTS / f"workspace-{files}"
    stamp = root / ".complete"
    if stamp.exists():
        return root
    per_dir, dirs = 50, files // 50
    for d in range(dirs):
        folder = root / "src" / f"pkg{d // 50:02d}" / f"mod{d % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(per_dir):
            (folder / f"file_{f:02d}.py").write_text(f"# module {d}.{f}\nVALUE = {d * per_dir + f}\n")
    for extra in ("node_modules/left-pad", ".git/objects/ab"):
        (root / extra).mkdir(parents=True, exist_ok=True)
        (root / extra / "index.js").write_text("module.exports = 1;\n")
    (root / ".gitignore").write_text("node_modules/\n*.log\n")
    stamp.touch()
    return root


async def _spawn_initialize(command: list[str], env: dict[str, str], root: str | None) -> tuple[float, float, float]:
    """(seconds from spawning `command` to its initialize response, ms the process was on a CPU until then, ms it
    waited for one); the process is then shut down."""
    client = RpcClient(command, env=env)
    start = time.perf_counter()
    await client.start()
    await client.request("initialize", init_params(root), timeout=60)
    elapsed = time.perf_counter() - start
    on_cpu, waiting = sched(pid_of(client))
    client.notify("initialized", {})
    await client.close()
    return elapsed, on_cpu, waiting


async def startup(home: Path, root: str, repeat: int) -> dict[str, list[float]]:
    """Alternating spawns of the sidecar and the bare server, same Python, same initialize params; and the
    sidecar with no bytecode cache (a source checkout under PYTHONDONTWRITEBYTECODE), for information."""
    sidecar = [sys.executable, "-m", "sidecar", "--log-level", "WARNING"]
    commands = {
        "sidecar": (sidecar, server_env(home)),
        "bare": ([sys.executable, str(BARE)], server_env(home)),
        "sidecar_no_pyc": (sidecar, server_env(home, bytecode=False)),
    }
    times: dict[str, list[float]] = {}
    for number in range(repeat + 1):
        for name, (command, env) in commands.items():
            elapsed, on_cpu, waiting = await _spawn_initialize(command, env, root)
            if number:  # the first round fills the caches
                unloaded = elapsed - waiting / 1000
                series = ((name, elapsed), (f"{name}_cpu_ms", on_cpu), (f"{name}_wait_ms", waiting))
                for key, value in (*series, (f"{name}_unloaded", unloaded)):
                    times.setdefault(key, []).append(value)
    return times


def _inotify_watches(pid: int) -> int:
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify":
                with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                    count += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue
    return count


async def _watched(home: Path, root: Path) -> dict[str, Any]:
    """Initialize time, time until the watcher runs, and RSS then, for one workspace."""
    client = RpcClient([sys.executable, "-m", "sidecar", "--log-level", "INFO"], env=server_env(home))
    start = time.perf_counter()
    await client.start()
    await client.request("initialize", init_params(str(root)), timeout=60)
    initialized = time.perf_counter()
    initialize_cpu_ms, initialize_wait_ms = sched(pid_of(client))
    client.notify("initialized", {})
    while not any("watching" in line for line in client.stderr_lines):
        if time.perf_counter() - initialized > 120:
            raise TimeoutError("the watcher did not start within 120 s")
        await asyncio.sleep(0.01)
    watching = time.perf_counter()
    await asyncio.sleep(0.5)
    pid = pid_of(client)
    result = {
        "initialize_s": initialized - start,
        "initialize_cpu_ms": initialize_cpu_ms,
        "initialize_unloaded_s": initialized - start - initialize_wait_ms / 1000,
        "watcher_s": watching - initialized,
        "rss_kb": proc_kb(pid, "VmRSS"),
        "watches": _inotify_watches(pid),
    }
    await client.close()
    return result


async def workspaces(home: Path, empty: Path, repeat: int) -> dict[str, list[dict[str, Any]]]:
    big = workspace()
    runs: dict[str, list[dict[str, Any]]] = {"empty": [], "50k": []}
    for _ in range(repeat):
        runs["empty"].append(await _watched(home, empty))
        runs["50k"].append(await _watched(home, big))
    return runs


def measure(tmp: Path, repeat: int, workspace_repeat: int) -> dict[str, Any]:
    home, empty = tmp / "home", tmp / "empty-ws"
    empty.mkdir(parents=True, exist_ok=True)
    return {
        "startup": asyncio.run(startup(home, str(empty), repeat)),
        "workspaces": asyncio.run(workspaces(home, empty, workspace_repeat)),
    }


def rows(result: dict[str, Any]) -> list[Row]:
    start = result["startup"]
    sidecar, bare = median(start["sidecar"]) * 1000, median(start["bare"]) * 1000
    ratio = sidecar / bare
    cpu_sidecar, cpu_bare = median(start["sidecar_cpu_ms"]), median(start["bare_cpu_ms"])
    cpu_ratio = cpu_sidecar / cpu_bare
    unloaded_ratio = median(start["sidecar_unloaded"]) / median(start["bare_unloaded"])
    ws = result["workspaces"]

    def med(kind: str, key: str) -> float:
        return median([run[key] for run in ws[kind]])

    init_ratio = med("50k", "initialize_s") / med("empty", "initialize_s")
    cpu_ratio = med("50k", "initialize_cpu_ms") / med("empty", "initialize_cpu_ms")
    unloaded_ratio = med("50k", "initialize_unloaded_s") / med("empty", "initialize_unloaded_s")
    rss_delta = (med("50k", "rss_kb") - med("empty", "rss_kb")) / 1024
    return [
        Row(
            "1",
            "Spawn → initialize response, vs a bare pygls server (same run, alternating)",
            f"{sidecar:.0f} ms vs {bare:.0f} ms = {ratio:.2f}× (own CPU time {cpu_ratio:.2f}×)",
            f"≤ {STARTUP_RATIO}×",
            judge_ratio(ratio, STARTUP_RATIO, unloaded_ratio),
            f"Medians of {len(start['sidecar'])} spawns each (after one warm-up round); wall time minus each "
            f"run's wait for a CPU: {unloaded_ratio:.2f}×; "
            f"sidecar min {min(start['sidecar']) * 1000:.0f} ms, bare min {min(start['bare']) * 1000:.0f} ms. "
            f"CPU time of the process until it answered: {cpu_sidecar:.0f} ms vs {cpu_bare:.0f} ms (schedstat, "
            f"all threads; it waited {median(start['sidecar_wait_ms']):.0f} / {median(start['bare_wait_ms']):.0f} ms "
            "for a CPU). "
            "Bytecode cached for both, as in an installed package; a source checkout without a bytecode cache "
            f"(PYTHONDONTWRITEBYTECODE, as in this environment) takes {median(start['sidecar_no_pyc']) * 1000:.0f} ms "
            f"= {median(start['sidecar_no_pyc']) * 1000 / bare:.2f}× (CPU "
            f"{median(start['sidecar_no_pyc_cpu_ms']) / cpu_bare:.2f}×).",
        ),
        Row(
            "issue 5a",
            f"Spawn → initialize with a {WORKSPACE_FILES:,}-file workspace vs an empty one",
            f"{med('50k', 'initialize_s') * 1000:.0f} ms vs {med('empty', 'initialize_s') * 1000:.0f} ms "
            f"= {init_ratio:.2f}× (own CPU time {cpu_ratio:.2f}×)",
            f"≤ {WORKSPACE_RATIO}×",
            judge_ratio(init_ratio, WORKSPACE_RATIO, unloaded_ratio),
            f"Medians of {len(ws['50k'])}; wall time minus each run's wait for a CPU: {unloaded_ratio:.2f}×. "
            "The watcher starts after `initialized`, off the event loop: "
            f"{med('50k', 'watcher_s') * 1000:.0f} ms later (empty: {med('empty', 'watcher_s') * 1000:.0f} ms).",
        ),
        Row(
            "issue 5b",
            "Server RSS once the watcher runs: 50,000 files vs empty",
            f"{med('50k', 'rss_kb') / 1024:.1f} MB vs {med('empty', 'rss_kb') / 1024:.1f} MB (+{rss_delta:.1f} MB)",
            "bounded (info)",
            "info",
            f"inotify watches: {med('50k', 'watches'):.0f} (one per folder: 1,000 source folders + packages) vs "
            f"{med('empty', 'watches'):.0f}; node_modules and .git get none.",
        ),
    ]
