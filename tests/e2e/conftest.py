"""The e2e client fixture: the real sidecar process over stdio, once per recorded client capability set.

Mark a test with `@pytest.mark.settings(key=value, ...)` to add initialization options.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.e2e import harness


@pytest.fixture(params=harness.CLIENTS)
async def client(request: pytest.FixtureRequest, fake: Any) -> AsyncIterator[harness.EditorClient]:
    marker = request.node.get_closest_marker("settings")
    extra = dict(marker.kwargs) if marker else {}
    root = os.path.realpath(tempfile.mkdtemp(prefix="sidecar-ws-"))
    editor = harness.EditorClient(request.param, root)
    await editor.start()
    try:
        await editor.initialize(fake.url, **extra)
        yield editor
    finally:
        await editor.stop()
        shutil.rmtree(root, ignore_errors=True)
