"""Fixtures for the ACP tests: a private SIDECAR_HOME, a workspace folder, and a started `sidecar acp`."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tests.acp_agent.harness import Agent


@pytest.fixture
def home() -> Iterator[str]:
    path = tempfile.mkdtemp(prefix="acp-home-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def workspace() -> Iterator[str]:
    path = os.path.realpath(tempfile.mkdtemp(prefix="acp-ws-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
async def agent(fake: Any, home: str) -> AsyncIterator[Agent]:
    started = await Agent(fake.url, home).start()
    yield started
    await started.close()
