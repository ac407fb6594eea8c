"""The e2e client fixture: the real sidecar process over stdio, once per recorded client capability set.

Mark a test with `@pytest.mark.settings(key=value, ...)` to add initialization options.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.e2e import harness


@pytest_lsp.fixture(config=harness.config(), params=harness.CLIENTS)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, fake: Any):  # type: ignore[no-untyped-def]
    marker = request.node.get_closest_marker("settings")
    extra = dict(marker.kwargs) if marker else {}
    root = os.path.realpath(tempfile.mkdtemp(prefix="sidecar-ws-"))
    lsp_client.workspace_root = root  # type: ignore[attr-defined]
    result = await lsp_client.initialize_session(harness.init_params(request.param, fake.url, root, **extra))
    lsp_client.init_result = result  # type: ignore[attr-defined]
    lsp_client.client_spec = request.param  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()
    shutil.rmtree(root, ignore_errors=True)
