"""run_shell_command: exit code and output; timeout, cancellation and leftovers stop the group; truncation; trust."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sidecar.tools import ToolRegistry, ToolResult, needs_confirmation
from sidecar.tools import shell as shell_module
from sidecar.tools.shell import KILL_GRACE_SECONDS, group_alive
from tests.waiting import until

#: The command's process group, from inside it (the guard leads the group, not bash: $$ is not the group id).
PGID = "$(cut -d' ' -f5 /proc/$$/stat)"


def live_members(pgid: int) -> list[int]:
    """Processes of the group that are not zombies, read from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(entry))
    return members


def assert_group_gone(pgid: int, within: float = 10.0) -> None:
    """The group is gone (`within` only bounds a broken run; SIGKILL follows SIGTERM after 1 s)."""
    deadline = time.monotonic() + within
    while live_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert live_members(pgid) == []
    assert not group_alive(pgid)


class Saver:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.saved: list[tuple[str, str]] = []

    def __call__(self, text: str, tool: str) -> Path:
        self.saved.append((text, tool))
        path = self.directory / f"{tool}_{len(self.saved)}.txt"
        path.write_text(text)
        return path


def make(tmp_path: Path, threshold: int = 10_000) -> tuple[ToolRegistry, Saver]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    saver = Saver(tmp_path)
    return ToolRegistry([str(ws)], save_output=saver, output_threshold=lambda: threshold), saver


async def shell(tools: ToolRegistry, command: str, **args: object) -> ToolResult:
    plan = tools.plan("run_shell_command", {"command": command, **args}, trusted=True)
    assert plan.error is None, plan.error
    return await tools.run(plan, apply_edit=None)


def pgid_of(result: ToolResult) -> int:
    text = result.response.get("output") or result.response["error"]
    match = re.search(r"^pgid=(\d+)$", text, re.MULTILINE)
    assert match, text
    return int(match.group(1))


async def test_exit_code_and_combined_output(tmp_path: Path) -> None:
    tools, _ = make(tmp_path)
    result = await shell(tools, "echo out; echo err >&2; pwd; exit 3")
    ws = tmp_path / "ws"
    assert result.ok
    assert result.response == {
        "output": f"Command: echo out; echo err >&2; pwd; exit 3\nDirectory: .\nExit code: 3\nOutput:\nout\nerr\n{ws}\n"
    }
    assert result.summary == "Exit code 3: echo out; echo err >&2; pwd; exit 3"


async def test_directory_stdin_and_empty_output(tmp_path: Path) -> None:
    tools, _ = make(tmp_path)
    (tmp_path / "ws" / "sub").mkdir()
    result = await shell(tools, "pwd; cat", directory="sub")  # cat sees an empty stdin and ends at once
    assert result.response["output"].endswith(f"Directory: sub\nExit code: 0\nOutput:\n{tmp_path / 'ws' / 'sub'}\n")
    quiet = await shell(tools, "true")
    assert quiet.response["output"].endswith("Output:\n(no output)")


async def test_timeout_stops_the_whole_group(tmp_path: Path) -> None:
    tools, _ = make(tmp_path)
    started = time.monotonic()
    result = await shell(tools, f"echo pgid={PGID}; sleep 100 & sleep 100", timeout_seconds=1)
    assert time.monotonic() - started < 1 + KILL_GRACE_SECONDS + 3
    assert not result.ok and result.summary.startswith("Timed out after 1 s")
    assert "Timed out after 1 s; the command and its process group were stopped." in result.response["error"]
    assert_group_gone(pgid_of(result))


async def test_processes_ignoring_sigterm_are_killed(tmp_path: Path) -> None:
    tools, _ = make(tmp_path)
    result = await shell(tools, f"trap '' TERM; echo pgid={PGID}; sleep 100 & sleep 100", timeout_seconds=1)
    assert not result.ok
    assert_group_gone(pgid_of(result))


async def test_cancellation_stops_the_whole_group(tmp_path: Path) -> None:
    tools, _ = make(tmp_path)
    marker = tmp_path / "pgid"
    plan = tools.plan("run_shell_command", {"command": f"echo {PGID} > {marker}; sleep 100 & sleep 100"}, trusted=True)
    task = asyncio.create_task(tools.run(plan, apply_edit=None))
    await until(lambda: marker.exists() and marker.read_text().strip(), "the command's process group id")
    pgid = int(marker.read_text())
    # The echo runs before the sleeps are forked: wait until all four are there.
    await until(lambda: len(live_members(pgid)) >= 4, "the guard, bash and both sleeps")
    assert len(live_members(pgid)) == 4  # the guard, bash and both sleeps
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_group_gone(pgid)


async def test_background_leftovers_are_stopped_when_the_command_ends(tmp_path: Path) -> None:
    tools, _ = make(tmp_path)
    started = time.monotonic()
    result = await shell(tools, f"echo pgid={PGID}; sleep 100 & echo started")
    assert time.monotonic() - started < 5  # does not wait for the background sleep
    assert result.ok and "Exit code: 0" in result.response["output"]
    assert "Processes it left running (e.g. started with &) were stopped" in result.response["output"]
    assert result.response["output"].endswith("started\n")
    assert_group_gone(pgid_of(result))


async def test_long_output_is_shortened_and_saved_in_full(tmp_path: Path) -> None:
    tools, saver = make(tmp_path, threshold=200)
    result = await shell(tools, "seq 1 5000")
    full = "".join(f"{i}\n" for i in range(1, 5001))
    assert saver.saved == [(full, "run_shell_command")]
    assert result.saved_output == tmp_path / "run_shell_command_1.txt"
    assert result.saved_output.read_text() == full
    output = result.response["output"]
    assert output.startswith("Command: seq 1 5000\nDirectory: .\nExit code: 0\nOutput:\n")
    assert (
        f"Output too large. Showing first 40 and last 160 characters. For full output see: {result.saved_output}"
        in output
    )
    assert output.endswith("4998\n4999\n5000\n")
    short = await shell(tools, "echo small")
    assert short.saved_output is None and len(saver.saved) == 1


async def test_failed_save_still_shortens(tmp_path: Path) -> None:
    def broken(text: str, tool: str) -> Path:
        raise OSError("disk full")

    ws = tmp_path / "ws"
    ws.mkdir()
    tools = ToolRegistry([str(ws)], save_output=broken, output_threshold=lambda: 50)
    result = await shell(tools, "seq 1 1000")
    assert result.ok and result.saved_output is None
    assert "For full output see: (the full output could not be saved: disk full)" in result.response["output"]


async def test_untrusted_workspace_has_no_shell(tmp_path: Path) -> None:
    tools, _ = make(tmp_path)
    untrusted = [d["name"] for d in tools.declarations(trusted=False)[0]["functionDeclarations"]]
    trusted = [d["name"] for d in tools.declarations(trusted=True)[0]["functionDeclarations"]]
    assert "run_shell_command" not in untrusted and "run_shell_command" in trusted
    assert set(trusted) - set(untrusted) == {"run_shell_command"}
    plan = tools.plan("run_shell_command", {"command": "touch pwned"}, trusted=False)
    assert plan.error is not None and "not trusted" in plan.error
    assert not needs_confirmation(plan, "yolo", set())
    result = await tools.run(plan, apply_edit=None)
    assert not result.ok and result.response == {"error": plan.error}
    assert not (tmp_path / "ws" / "pwned").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"command": "  "}, "The command is empty"),
        ({"command": "true", "directory": "missing"}, "is not an existing directory"),
        ({"command": "true", "timeout_seconds": 0}, "'timeout_seconds' must be at least 1"),
        ({"command": "true", "timeout_seconds": 601}, "'timeout_seconds' must be at most 600"),
    ],
)
def test_shell_refusals(tmp_path: Path, args: dict[str, object], message: str) -> None:
    tools, _ = make(tmp_path)
    plan = tools.plan("run_shell_command", args, trusted=True)
    assert plan.error is not None and message in plan.error


async def test_shell_mentions_unsaved_editor_changes(tmp_path: Path) -> None:
    tools, _ = make(tmp_path)
    (tmp_path / "ws" / "a.txt").write_text("old\n")
    plan = tools.plan("write_file", {"path": "a.txt", "content": "new\n"}, trusted=True)

    async def accept(edit: dict[str, object]) -> tuple[bool, str | None]:
        return True, None

    assert (await tools.run(plan, apply_edit=accept)).ok
    result = await shell(tools, "cat a.txt")
    assert "Note: unsaved editor changes to a.txt are not on disk yet" in result.response["output"]
    assert result.response["output"].endswith("Output:\nold\n")


async def test_the_sidecars_api_keys_are_not_passed_to_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "secret-gemini")
    monkeypatch.setenv("GOOGLE_API_KEY", "secret-google")
    monkeypatch.setenv("SIDECAR_TEST_VISIBLE", "visible")
    tools, _ = make(tmp_path)
    result = await shell(tools, "env")
    assert "secret-" not in result.response["output"]
    assert "SIDECAR_TEST_VISIBLE=visible" in result.response["output"]


# ---------------------------------------------------------------------------------------------- the guard

GUARD = Path(shell_module.__file__).with_name("shell_guard.py")
PARENT = """
import os, subprocess, sys, time
guard = subprocess.Popen(
    [sys.executable, "-I", "-S", sys.argv[1], str(os.getpid()), "bash", "-c", "sleep 300 & sleep 300"],
    start_new_session=True, stdin=subprocess.DEVNULL,
)
print(guard.pid, flush=True)
time.sleep(300)
"""


def guarded(command: str) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, "-I", "-S", str(GUARD), str(os.getpid()), "bash", "-c", command]
    return subprocess.run(argv, capture_output=True, timeout=30, check=False)


def test_the_guard_passes_on_exit_codes_output_and_signals() -> None:
    done = guarded("echo out; echo err >&2; exit 3")
    assert (done.returncode, done.stdout, done.stderr) == (3, b"out\n", b"err\n")
    assert guarded("kill -TERM $$").returncode == -signal.SIGTERM
    assert guarded("true").returncode == 0


def test_a_command_goes_down_with_a_sidecar_killed_by_sigkill() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(GUARD)], stdout=subprocess.PIPE)
    assert parent.stdout is not None
    pgid = int(parent.stdout.readline())
    deadline = time.monotonic() + 10
    while len(live_members(pgid)) < 4 and time.monotonic() < deadline:  # the guard, bash and two sleeps
        time.sleep(0.02)
    assert len(live_members(pgid)) == 4
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert not group_alive(pgid), "the command outlived the sidecar"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
