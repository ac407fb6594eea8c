"""Fixtures of the reliability suite: throw-away SIDECAR_HOME + workspace, and real sidecar processes that are
always stopped (SIGKILL as a last resort) when the test ends."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.reliability.proc import Sidecar

Spawn = Callable[..., Awaitable[Sidecar]]


def make_dirs() -> tuple[Path, Path]:
    """(home, workspace). The home does not exist yet: the sidecar creates it (and its modes) itself."""
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="sidecar-rel-")))
    workspace = base / "workspace"
    workspace.mkdir()
    return base / "home", workspace


@pytest.fixture
def dirs() -> Iterator[tuple[Path, Path]]:
    home, workspace = make_dirs()
    yield home, workspace
    shutil.rmtree(home.parent, ignore_errors=True)


@pytest_asyncio.fixture
async def spawn(dirs: tuple[Path, Path], fake: Any) -> AsyncIterator[Spawn]:
    """`await spawn(**settings)`: a started, initialized sidecar on this test's home and workspace.

    `initialize=False` only starts the process; `args` are extra command-line arguments, `env` extra
    environment variables. Every process is stopped at teardown.
    """
    started: list[Sidecar] = []
    home, workspace = dirs

    async def start(
        *,
        initialize: bool = True,
        log_level: str = "DEBUG",
        args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        **settings: Any,
    ) -> Sidecar:
        side = Sidecar(home, workspace, fake.url, log_level=log_level, args=args, env=env)
        started.append(side)
        return await side.start(initialize=initialize, **settings)

    yield start
    for side in started:
        await side.stop()
