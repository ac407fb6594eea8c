"""Recording under failure: SIGKILL at any moment, full disk, unwritable directory."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import pytest

import sidecar
from sidecar.core.history import text_content
from sidecar.recording.store import SessionStore, SessionWriter

WRITER_SCRIPT = r"""
import random, sys
from pathlib import Path
from sidecar.core.history import text_content
from sidecar.recording.store import SessionStore

store = SessionStore("/work/killed", home=Path(sys.argv[1]))
writer = store.create("victim", model="m")
rng = random.Random(int(sys.argv[2]))
n = 0
ids = []
while True:
    if n == 1:
        print("ready", flush=True)  # one exchange is on disk: a kill from now on must leave it loadable
    n += 1
    size = rng.choice([10, 1_000, 100_000, 2_000_000])
    ids.append(writer.message(text_content("user", f"q{n} " + "x" * size), kind="user"))
    ids.append(writer.message(text_content("model", f"a{n}"), kind="model"))
    writer.usage(n * 10, "api", ids[-1])
    if n % 3 == 0:
        writer.sync()
    if n % 7 == 0:
        kept = ids[-2]
        writer.compaction(trigger="auto", status="COMPRESSED", original_tokens=n * 10, new_tokens=5,
                          summary=text_content("user", "s"), ack=text_content("model", "ok"), kept_from=kept,
                          compaction_id=f"c{n}")
        ids = [f"c{n}.summary", f"c{n}.ack", kept, ids[-1]]
"""


@pytest.mark.process
@pytest.mark.parametrize("seed", range(6))
def test_sigkill_at_any_moment_leaves_a_loadable_file(tmp_path: Path, seed: int) -> None:
    home = tmp_path / "home"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER_SCRIPT, str(home), str(seed)],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    time.sleep(0.05 + 0.07 * seed)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    store = SessionStore("/work/killed", home=home)
    loaded = store.load("victim")
    assert len(loaded.warnings) <= 1
    assert loaded.message_count > 0
    if loaded.warnings:
        assert "incomplete" in loaded.warnings[0]
    # The file continues cleanly after the crash.
    writer = store.open_for_append("victim", loaded)
    assert not writer.disabled
    new_id = writer.message(text_content("user", "after the crash"), kind="user")
    writer.close()
    again = store.load("victim")
    assert again.warnings == [] and new_id == f"m{loaded.message_count + 1}"
    assert again.history_ids == [*loaded.history_ids, new_id]
    assert [info.session_id for info in store.list()] == ["victim"]


class FullDisk:
    """A file whose writes fail with ENOSPC after `ok` successful ones (the first failing one half-written)."""

    def __init__(self, path: Path, ok: int) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        self.ok = ok
        self.closed = False

    def write(self, data: bytearray | memoryview) -> int:
        if self.ok == 0:
            os.write(self.fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.ok -= 1
        return os.write(self.fd, data)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
            self.closed = True


def test_disk_full_disables_recording_once_without_raising(tmp_path: Path) -> None:
    store = SessionStore("/p", home=tmp_path)
    store.create("s1", model="m").close()
    path = store.path("s1")
    size = path.stat().st_size
    problems: list[str] = []
    file = FullDisk(path, ok=1)
    writer = SessionWriter("s1", path, file, size=size, on_problem=problems.append)
    assert writer.message(text_content("user", "fits"), kind="user") == "m1"
    assert writer.message(text_content("model", "does not fit" * 100), kind="model") == "m2"
    assert writer.disabled and file.closed
    writer.message(text_content("user", "still talking"), kind="user")
    writer.compaction(trigger="auto", status="NOOP", original_tokens=1, new_tokens=1)
    writer.sync()
    writer.close()
    assert len(problems) == 1 and writer.problem == problems[0]
    assert problems[0].startswith("Session recording is off: the disk is full (No space left on device")
    assert str(path) in problems[0] and "conversation continues" in problems[0]
    loaded = store.load("s1")  # the half-written record was taken back
    assert loaded.warnings == [] and loaded.history_ids == ["m1"]


def test_fsync_failure_disables_too(tmp_path: Path) -> None:
    class NoSync(FullDisk):
        def fileno(self) -> int:
            raise OSError(errno.EIO, "Input/output error")

    store = SessionStore("/p", home=tmp_path)
    store.create("s1", model="m").close()
    writer = SessionWriter("s1", store.path("s1"), NoSync(store.path("s1"), ok=10))
    writer.message(text_content("user", "x"), kind="user")
    writer.sync()
    assert writer.disabled and writer.problem is not None and "Input/output error" in writer.problem


def test_unwritable_directory_disables_with_a_clear_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def refuse(path: object, flags: int, *args: int) -> int:
        if str(path).endswith(".jsonl"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refuse)
    problems: list[str] = []
    writer = SessionStore("/p", home=tmp_path).create("s1", model="m", on_problem=problems.append)
    assert writer.disabled and problems == [writer.problem]
    assert "the session directory is not writable (Permission denied" in problems[0]
    assert writer.message(text_content("user", "hi"), kind="user") == "m1"  # the conversation goes on
    writer.close()


def test_home_that_cannot_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    writer = SessionStore("/p", home=tmp_path / "file" / "home").create("s1", model="m")
    assert writer.disabled and writer.problem is not None and "Session recording is off" in writer.problem


@pytest.mark.process
def test_really_unwritable_directory_as_an_unprivileged_user() -> None:
    """As root, permissions never refuse anything: the check runs as `nobody`. pytest's tmp_path and the repo (CI
    clones into `mktemp -d`, mode 0700) may be out of `nobody`'s reach, so the test works in a world-readable
    folder of its own, with copies of what the check imports (sidecar, msgspec), run by the base interpreter.
    A writable sessions folder next to it is the control: there `nobody` records without a problem."""
    root = Path(tempfile.mkdtemp(prefix="sidecar-unwritable-"))
    try:
        os.chmod(root, 0o755)
        lib = root / "lib"
        for package in (sidecar, msgspec):
            assert package.__file__ is not None
            source = Path(package.__file__).parent
            shutil.copytree(source, lib / source.name, ignore=shutil.ignore_patterns("__pycache__"))
        outputs = {}
        for name, mode in (("locked", 0o555), ("open", 0o777)):
            sessions = root / name / "sessions"
            sessions.mkdir(parents=True)
            os.chmod(root / name, 0o755)
            os.chmod(sessions, mode)
            outputs[name] = _record_as_nobody(lib, root / name)
        assert "the session directory is not writable (Permission denied" in outputs["locked"]
        assert outputs["open"] == "None\n"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _record_as_nobody(lib: Path, home: Path) -> str:
    script = (
        "from pathlib import Path; from sidecar.recording.store import SessionStore; "
        f"w = SessionStore('/p', home=Path({str(home)!r})).create('s1', model='m'); print(w.problem)"
    )
    user: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv is not None, "running as root, this check needs setpriv (util-linux) to drop to nobody"
        user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    result = subprocess.run(
        [*user, os.path.realpath(sys.executable), "-s", "-c", script],
        capture_output=True,
        text=True,
        cwd=lib,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(lib), "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_short_writes_are_completed(tmp_path: Path) -> None:
    class Dribble(FullDisk):
        def write(self, data: bytearray | memoryview) -> int:
            return os.write(self.fd, bytes(data[:7]))

    store = SessionStore("/p", home=tmp_path)
    store.create("s1", model="m").close()
    path = store.path("s1")
    writer = SessionWriter("s1", path, Dribble(path, ok=0), size=path.stat().st_size)
    writer.message(text_content("user", "a message longer than seven bytes"), kind="user")
    writer.close()
    assert not writer.problem and store.load("s1").history_ids == ["m1"]
