"""A hook as a process: its output is kept as a bounded tail while it is read, and it goes down with a sidecar
killed by SIGKILL (the shell tool's guard leads its process group)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from sidecar.config.settings import HookSpec
from sidecar.hooks.process import MAX_OUTPUT_CHARS, run_hook
from sidecar.tools.shell import group_alive

pytestmark = pytest.mark.process  # every test here runs a hook: a real process


async def test_a_hook_that_prints_a_lot_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """64 MB on stdout and on stderr: the ends are kept, and the memory used while reading stays small (the whole
    output was held: 2.9 GB for a hook that printed more)."""
    command = "head -c 67108864 /dev/zero | tr '\\0' x; echo ' the end'; head -c 67108864 /dev/zero >&2; echo tail >&2"
    tracemalloc.start()
    try:
        run = await run_hook(HookSpec(command), {"hook_event_name": "BeforeAgent"}, cwd=str(tmp_path), session_id="s")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert run.ok, run
    assert run.stdout.endswith("xxx the end\n") and len(run.stdout) == MAX_OUTPUT_CHARS
    assert run.stderr.endswith("\0\0tail\n") and len(run.stderr) == MAX_OUTPUT_CHARS
    assert peak < 16 * 1024 * 1024, f"peak {peak:,} bytes while reading 128 MB of output"


async def test_the_payload_exit_code_and_environment_are_as_before(tmp_path: Path) -> None:
    run = await run_hook(
        HookSpec('cat; echo "$SIDECAR_SESSION_ID" >&2; exit 3'), {"a": 1}, cwd=str(tmp_path), session_id="s-42"
    )
    assert (run.exit_code, run.stdout, run.stderr.strip()) == (3, '{"a": 1}', "s-42")
    ignores_input = await run_hook(HookSpec("exit 0"), {"big": "x" * 1_000_000}, cwd=str(tmp_path), session_id="s")
    assert ignores_input.ok, "a hook that never reads its input is no failure"


SIDECAR = """
import asyncio, sys
from sidecar.config.settings import HookSpec
from sidecar.hooks.process import run_hook
asyncio.run(run_hook(HookSpec(sys.argv[1]), {}, cwd=sys.argv[2], session_id="s"))
"""


def test_a_hook_goes_down_with_a_sidecar_killed_by_sigkill(tmp_path: Path) -> None:
    marker = tmp_path / "group"
    command = f"ps -o pgid= $$ > {marker}.tmp; mv {marker}.tmp {marker}; sleep 300 & sleep 300"
    sidecar = subprocess.Popen([sys.executable, "-c", SIDECAR, command, str(tmp_path)])
    pgid = 0
    try:
        deadline = time.monotonic() + 20
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        pgid = int(marker.read_text())
        assert group_alive(pgid)
        sidecar.kill()
        sidecar.wait()
        deadline = time.monotonic() + 10
        while group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not group_alive(pgid), "the hook outlived the sidecar"
    finally:
        sidecar.kill()
        if pgid:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
