"""Shared fixtures: the in-process fake Gemini."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sidecar.fakegemini import FakeGemini


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
