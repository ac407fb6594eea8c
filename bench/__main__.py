"""`python -m bench` (`make bench`): run every benchmark, print and save the table, copy it into docs/performance.md."""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import (
    acp,
    background,
    checkpoints,
    compaction,
    estimate,
    first_prompt,
    long_session,
    long_turns,
    mcp,
    one_shot,
    recording,
    report,
    startup,
    turn,
)
from bench.common import REPO, RESULTS, Row
from bench.reference import ReferenceUnavailable

#: Repeats per benchmark: (full run, --quick). Big cases run fewer times.
REPEATS = {
    "startup": (10, 3),  # spawns per series (sidecar, bare pygls, sidecar without bytecode cache)
    "workspace": (7, 1),  # spawns per workspace (empty, 50,000 files)
    "turn_small": (20, 5),  # turns with a tiny history
    "turn_big": (9, 3),  # turns with the 1M-token history
    "estimate": (5, 2),  # runs per size and round; 3 rounds alternate reference and ours
    "compaction": (7, 2),  # compactions at 1M tokens (and reference truncations)
    "resume": (7, 3),  # resumes of the 40 MB session
    "acp": (20, 5),  # turn pairs (editor protocol, ACP) with a tiny history
    "background": (3, 1),  # runs per mode (background / synchronous compaction), ~25 s each
    "long_turns": (3, 1),  # runs per mode (uncompacted baseline, background, synchronous), ~15 s each
    "first_prompt": (7, 2),  # fresh processes per protocol (3 prompts each, after a 1.5 s pause)
    "one_shot": (9, 3),  # fresh ACP processes prompted at once after session/new
    "mcp_startup": (7, 2),  # spawns with 0 and with 3 MCP servers, alternating
    "mcp_calls": (200, 30),  # MCP call pairs (the SDK's own, through the sidecar)
    "checkpoints": (50, 10),  # 100 KB edits with a checkpoint (and the restore of 100 files, once)
    "long_session": (200, 30),  # turns of the long session, run once per side (its token counts are deterministic)
}
BENCHMARKS = (
    "startup",
    "turn",
    "estimate",
    "compaction",
    "recording",
    "acp",
    "background",
    "long_turns",
    "first_prompt",
    "mcp",
    "checkpoints",
    "one_shot",
    "long_session",
)


def _git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    return proc.stdout.strip()


def _load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def _node() -> str:
    if shutil.which("node") is None:
        return "missing"
    return subprocess.run(["node", "--version"], capture_output=True, text=True, check=False).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run, not for the record)")
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, help="run only these benchmarks")
    parser.add_argument("--no-doc", action="store_true", help="do not update docs/performance.md")
    args = parser.parse_args(argv)
    n = {name: counts[1 if args.quick else 0] for name, counts in REPEATS.items()}
    selected = args.only or list(BENCHMARKS)
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    meta: dict[str, Any] = {
        "started": started,
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "python": platform.python_version(),
        "node": _node(),
        "cpus": os.cpu_count(),
        "load_before": _load(),
        "repeats": n,
        "quick": args.quick,
    }
    print(f"bench: {', '.join(selected)}{' (quick)' if args.quick else ''}; load average {meta['load_before']}")
    clock = time.perf_counter()
    rows: list[Row] = []
    raw: dict[str, Any] = {}
    errors: dict[str, str] = {}
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-", dir=RESULTS) as tmp_name:
        tmp = Path(tmp_name)
        inputs = estimate.write_inputs(tmp / "inputs")
        jobs: dict[str, Callable[[], Any]] = {
            "startup": lambda: startup.measure(tmp / "startup", n["startup"], n["workspace"]),
            "turn": lambda: turn.run(tmp / "turn", n["turn_small"], n["turn_big"]),
            "estimate": lambda: estimate.measure(inputs, n["estimate"]),
            "compaction": lambda: compaction.measure(tmp / "compaction", inputs["1m"], n["compaction"]),
            "recording": lambda: recording.measure(tmp / "recording", n["resume"]),
            "acp": lambda: acp.run(tmp / "acp", n["acp"]),
            "background": lambda: background.measure(tmp / "background", n["background"]),
            "long_turns": lambda: long_turns.measure(tmp / "long_turns", n["long_turns"]),
            "first_prompt": lambda: first_prompt.run(tmp / "first_prompt", n["first_prompt"]),
            "mcp": lambda: mcp.measure(tmp / "mcp", n["mcp_startup"], n["mcp_calls"]),
            "checkpoints": lambda: checkpoints.measure(tmp / "checkpoints", n["checkpoints"]),
            "one_shot": lambda: one_shot.run(tmp / "one_shot", n["one_shot"]),
            "long_session": lambda: long_session.measure(tmp / "long_session", n["long_session"]),
        }
        modules = {"startup": startup, "turn": turn, "estimate": estimate, "compaction": compaction,
                   "recording": recording, "acp": acp, "background": background,
                   "long_turns": long_turns, "first_prompt": first_prompt, "mcp": mcp,
                   "checkpoints": checkpoints, "one_shot": one_shot, "long_session": long_session}  # fmt: skip
        for name in selected:
            began = time.perf_counter()
            print(f"bench: {name} ...", flush=True)
            gc.collect()
            try:
                raw[name] = jobs[name]()
                new_rows = modules[name].rows(raw[name])  # type: ignore[attr-defined]
            except ReferenceUnavailable as exc:
                errors[name] = f"the reference is unavailable: {exc}"
                print(f"bench: {name} skipped: {exc}", file=sys.stderr)
                continue
            except Exception as exc:
                errors[name] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
                continue
            rows += new_rows
            for row in new_rows:
                print(f"  {row.target:>9} {row.verdict:<11} {row.measured}")
            print(f"bench: {name} took {time.perf_counter() - began:.0f} s", flush=True)
    meta.update(duration_s=time.perf_counter() - clock, load_after=_load(), errors=errors)
    path = report.write(rows, meta, raw, update_doc=not args.no_doc and not args.only and not args.quick)
    print()
    print(report.markdown(rows, meta))
    print(f"bench: results in {path.relative_to(REPO)} and bench/results/latest.json", end="")
    print("" if args.no_doc or args.only or args.quick else "; table copied into docs/performance.md")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
