"""Shared pieces of the benchmarks: timing statistics, result rows, the sidecar process, /proc readings."""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidecar.rpc.client import RpcClient

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
BENCH_KEY = "bench-key"


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall-clock milliseconds of `repeat` calls."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1000)
    return runs


def spread(values: list[float]) -> str:
    """'median (min-max, n=N)' in ms, for the notes."""
    if not values:
        return "n/a"
    return f"{median(values):.2f} ms (min {min(values):.2f}, max {max(values):.2f}, n={len(values)})"


@dataclass
class Row:
    """One line of the results table."""

    target: str  # "1".."7", or "5a"/"issue 5"...
    what: str
    measured: str
    limit: str
    verdict: str  # "pass", "MISS", or "info"
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def verdict(ok: bool) -> str:
    return "pass" if ok else "MISS"


def judge(value: float, limit: float, waited: float) -> str:
    """pass when `value` <= `limit`; "MISS (load)" when only the time spent waiting for a CPU (other load on
    the machine, from schedstat) pushed it over; else MISS."""
    if value <= limit:
        return "pass"
    return "MISS (load)" if value - waited <= limit else "MISS"


def worst(*verdicts: str) -> str:
    """The worst of several verdicts: MISS over MISS (load) over pass."""
    order = ["pass", "MISS (load)", "MISS"]
    return max(verdicts, key=order.index)


def judge_ratio(ratio: float, limit: float, ratio_without_waits: float) -> str:
    """As judge(), for a ratio of two medians; the second ratio uses each run's wall time minus its CPU wait."""
    if ratio <= limit:
        return "pass"
    return "MISS (load)" if ratio_without_waits <= limit else "MISS"


# ---------------------------------------------------------------- the sidecar process


def server_env(home: Path, *, bytecode: bool = True) -> dict[str, str]:
    """The environment of a benchmarked server: no API keys from the user's shell, sessions under `home`.

    With `bytecode`, compiled modules are cached under bench/results/pycache (as an installed package has
    them) even where PYTHONDONTWRITEBYTECODE is set; without it every spawn compiles the sidecar's sources.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env.pop("GOOGLE_GEMINI_BASE_URL", None)
    env["SIDECAR_HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(RESULTS / "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def sidecar_client(home: Path, log_level: str = "WARNING") -> RpcClient:
    return RpcClient([sys.executable, "-m", "sidecar", "--log-level", log_level], env=server_env(home))


def init_params(root: str | None, options: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "processId": os.getpid(),
        "capabilities": {},
        "initializationOptions": options or {},
        "rootUri": f"file://{root}" if root else None,
    }
    if root:
        params["workspaceFolders"] = [{"uri": f"file://{root}", "name": Path(root).name}]
    return params


def fake_options(url: str, **extra: Any) -> dict[str, Any]:
    return {"baseUrl": url, "apiKey": BENCH_KEY, "retryAttempts": 0, "requestTimeoutMs": 600_000, **extra}


def pid_of(client: RpcClient) -> int:
    return client.pid


def proc_kb(pid: int, key: str) -> int:
    """A `Vm*` line of /proc/<pid>/status in kB (VmRSS, VmHWM, ...)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def sched(pid: int | None = None) -> tuple[float, float]:
    """(ms on a CPU, ms runnable but waiting for a CPU) so far: of this thread, or summed over a process's threads.

    The second figure is the time the machine's other load took from us (/proc/.../schedstat).
    """
    paths = (
        ["/proc/thread-self/schedstat"]
        if pid is None
        else [f"/proc/{pid}/task/{tid}/schedstat" for tid in os.listdir(f"/proc/{pid}/task")]
    )
    on_cpu = waiting = 0
    for path in paths:
        try:
            with open(path) as f:
                fields = f.read().split()
        except OSError:  # a thread that just ended
            continue
        on_cpu += int(fields[0])
        waiting += int(fields[1])
    return on_cpu / 1e6, waiting / 1e6


def reset_peak(pid: int) -> bool:
    """Reset VmHWM to the current RSS (Linux: write 5 to clear_refs); False when not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True
