"""Shared fixtures: the in-process fake Gemini; and, for a failed test, the log tail of the sidecars it drove and
the requests the fake answered."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from typing import Any

import pytest

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
    " DEBUG watchdog.", " DEBUG httpcore", " DEBUG httpx", " DEBUG asyncio:",
    " DEBUG pygls.protocol.json_rpc: Sending ", " INFO pygls.feature_manager: Registered ",
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
