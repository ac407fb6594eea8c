"""The fast tier's guard (tests/conftest.py): a test not marked `process` that starts a process or opens a socket
fails, even when the code under test swallows the refusal; a marked one may do both."""

from __future__ import annotations

import pytest

#: The inner sessions run in this process, where this file's own guard would refuse their processes too.
pytestmark = pytest.mark.process

INNER = """
import asyncio, os, socket, subprocess, sys
import pytest

def test_subprocess():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_swallowed():
    try:
        subprocess.run(["true"])
    except OSError:
        pass

async def test_asyncio_subprocess():
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await proc.wait()

def test_fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)

def test_socket():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))

def test_event_loop_and_socketpair():
    asyncio.run(asyncio.sleep(0))
    a, b = socket.socketpair()
    a.close(); b.close()

@pytest.mark.process
def test_marked():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
"""


def test_unmarked_processes_and_sockets_fail_and_marked_ones_pass(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("from tests.conftest import _processes_and_sockets_only_when_marked  # noqa: F401\n")
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_inprocess(
        "-p", "no:xdist", "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function"
    )
    reports = result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
    outcomes = {r.head_line: r.outcome for r in reports if r.when == "call"}
    failed = {r.head_line for r in reports if r.failed}
    assert failed == {"test_subprocess", "test_swallowed", "test_asyncio_subprocess", "test_fork", "test_socket"}
    assert outcomes["test_marked"] == "passed" and outcomes["test_event_loop_and_socketpair"] == "passed"
    result.stdout.fnmatch_lines(["*not marked @pytest.mark.process but tried starting a process*"])
