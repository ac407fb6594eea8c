"""Shared fixtures: the in-process fake Gemini; the guard that keeps unmarked tests process- and socket-free; and, for
a failed test, the log tail of the sidecars it drove and the requests the fake answered."""

from __future__ import annotations

import _posixsubprocess
import os
import socket
import subprocess
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from sidecar.fakegemini import FakeGemini
from sidecar.rpc.client import RpcClient

#: The suites send what the sidecar builds, unrepaired, so the strict fake Gemini sees every request shape the code
#: makes (the repair tests turn it back on).
os.environ.setdefault("SIDECAR_REQUEST_REPAIR", "off")

#: How much of a sidecar's log a failed test's report shows (the lines that matter are the last ones).
LOG_TAIL_LINES = 80
LOG_LINE_CHARS = 400
#: Third-party DEBUG lines that bury the sidecar's own: file-watcher events and HTTP connection bookkeeping.
#: (pygls logs each message twice: a DEBUG line, then the INFO "Sending data" line with the JSON sent, which is kept.)
NOISY_DEBUG = (
    " DEBUG watchdog.",
    " DEBUG httpcore",
    " DEBUG httpx",
    " DEBUG asyncio:",
    " DEBUG pygls.protocol.json_rpc: Sending ",
    " INFO pygls.feature_manager: Registered ",
)


#: `make test-fast` runs Hypothesis with fewer examples (`--hypothesis-profile=fast`); `make test` keeps each test's.
settings.register_profile("fast", max_examples=10, deadline=None)

#: What starts a process: subprocess (asyncio's subprocesses too) ends in its own `_fork_exec` or in `os.posix_spawn`,
#: multiprocessing's spawn in `_posixsubprocess.fork_exec`; the rest forks or spawns directly.
PROCESS_STARTERS = (
    (subprocess, "_fork_exec"),
    (_posixsubprocess, "fork_exec"),
    (os, "fork"),
    (os, "forkpty"),
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    (os, "system"),
)
#: What opens a socket to or for somebody: connecting (asyncio's too) and binding (a server). A socketpair, as the
#: event loop makes for itself, does neither.
SOCKET_OPENERS = ("connect", "connect_ex", "bind")


#: Folders mean tiers: tests/unit is the fast tier, where a test that starts a process or opens a socket says so
#: with the mark; every other folder drives real processes (the sidecar, MCP servers, acpx, editors): all have it.
UNIT = Path(__file__).parent / "unit"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not item.path.is_relative_to(UNIT):
            item.add_marker(pytest.mark.process)


@pytest.fixture(autouse=True)
def _processes_and_sockets_only_when_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that starts a process or opens a socket must say so with `@pytest.mark.process`: that is what keeps
    it out of `make test-fast`, so the fast tier stays fast by construction rather than by care. The call is refused
    (an OSError, as a failing start would raise) and the test fails even if the code under test swallowed it."""
    if request.node.get_closest_marker("process"):
        yield
        return
    seen: list[str] = []

    def refuse(what: str) -> Callable[..., Any]:
        def refused(*_args: Any, **_kwargs: Any) -> Any:
            seen.append(what)
            raise OSError(f"{what} in a test not marked @pytest.mark.process")

        return refused

    with pytest.MonkeyPatch.context() as patch:
        for owner, name in PROCESS_STARTERS:
            if hasattr(owner, name):
                patch.setattr(owner, name, refuse(f"starting a process ({owner.__name__}.{name})"))
        for name in SOCKET_OPENERS:
            patch.setattr(socket.socket, name, refuse(f"opening a socket (socket.{name})"))
        yield
    if seen:
        pytest.fail(
            f"this test is not marked @pytest.mark.process but tried {', '.join(dict.fromkeys(seen))}: mark it "
            "(it then runs in `make test` only) or keep the process or socket out of it",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def _fake_server() -> Iterator[FakeGemini]:
    fake = FakeGemini()
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def fake(_fake_server: FakeGemini) -> Iterator[FakeGemini]:
    """The fake Gemini, reset (no script, empty request log) for each test."""
    _fake_server.reset()
    yield _fake_server
    _fake_server.reset()


def servers_of(item: pytest.Item) -> list[tuple[str, RpcClient]]:
    """The sidecar processes a test drives through its fixtures: an RpcClient, or an object holding one as
    `.client` (the reliability suite's Sidecar)."""
    found = []
    for name, value in getattr(item, "funcargs", {}).items():
        client = value if isinstance(value, RpcClient) else getattr(value, "client", None)
        if isinstance(client, RpcClient):
            found.append((name, client))
    return found


def request_log(fake: FakeGemini) -> str:
    """One line per request the fake saw in this test: what it was and how it was answered."""
    lines = []
    for r in fake.requests():
        what = f"{r.kind}{' (summary)' if r.summary else ''} {r.model or ''}".rstrip()
        step = f" step={r.step}" if r.step else ""
        lines.append(f"#{r.index} {what}: {r.outcome or 'no answer yet'} {r.status or ''}{step}".rstrip())
    return "\n".join(lines)


def log_tail(lines: list[str]) -> str:
    """The last lines of a sidecar's stderr, without the third-party DEBUG noise, long lines cut."""
    kept = [line for line in lines if not any(noise in line for noise in NOISY_DEBUG)]
    tail = [line if len(line) <= LOG_LINE_CHARS else line[:LOG_LINE_CHARS] + " …" for line in kept[-LOG_TAIL_LINES:]]
    return "\n".join(tail)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """A failed test's report (what CI prints) carries, beside pytest's assertion, the requests the fake answered
    and the log tail of every sidecar the test drove: what the server did last is usually what explains a failure
    seen only on a loaded machine."""
    report = yield
    if report.failed and report.when in ("setup", "call"):
        fake = getattr(item, "funcargs", {}).get("fake")
        if isinstance(fake, FakeGemini):
            report.sections.append(("fake Gemini's requests in this test", request_log(fake) or "(none)"))
        for name, client in servers_of(item):
            lines = client.stderr_lines
            title = f"sidecar log tail of fixture '{name}' ({len(lines)} lines in all; watcher/HTTP debug left out)"
            report.sections.append((title, log_tail(lines) or "(the sidecar logged nothing)"))
    return report
