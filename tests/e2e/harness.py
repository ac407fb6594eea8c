"""Test client for the real sidecar process: records custom notifications and waits for them."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

CLIENTS = ["neovim@v0.7.0", "neovim@v0.11.0", "visual-studio-code"]
NOTIFICATIONS = [
    "sidecar/messageDelta",
    "sidecar/tokenUsage",
    "sidecar/compressed",
    "sidecar/toolCall",
    "sidecar/retry",
]
CANARY_KEY = "AIzaCANARY-e2e-0123456789abcdef"
VERTEX_ENV = (
    "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_VERTEX_BASE_URL", "GOOGLE_GENAI_USE_ENTERPRISE",
)
#: Every e2e server records its sessions here, never in the user's data directory.
E2E_HOME = tempfile.mkdtemp(prefix="sidecar-e2e-home-")


def plain(value: Any) -> Any:
    """namedtuples (how pygls hands over custom payloads) back into dicts and lists."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def make_client() -> LanguageClient:
    client = pytest_lsp.make_test_lsp_client()
    client.notes = defaultdict(list)  # type: ignore[attr-defined]
    for method in NOTIFICATIONS:

        def record(params: Any, _method: str = method) -> None:
            client.notes[_method].append(plain(params))  # type: ignore[attr-defined]

        client.feature(method)(record)

    client.decisions = []  # type: ignore[attr-defined]  # answers to sidecar/confirmToolCall, in order
    client.confirmations = []  # type: ignore[attr-defined]
    client.edits = []  # type: ignore[attr-defined]
    client.apply_result = {"applied": True}  # type: ignore[attr-defined]

    @client.feature("sidecar/confirmToolCall")
    def confirm(params: Any) -> dict[str, str]:
        client.confirmations.append(plain(params))  # type: ignore[attr-defined]
        decisions = client.decisions  # type: ignore[attr-defined]
        return {"decision": decisions.pop(0) if decisions else "allow"}

    @client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        client.edits.append(params.edit)  # type: ignore[attr-defined]
        result = client.apply_result  # type: ignore[attr-defined]
        return lsp.ApplyWorkspaceEditResult(applied=result["applied"], failure_reason=result.get("reason"))

    return client


def server_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env.pop("GOOGLE_GEMINI_BASE_URL", None)
    for name in VERTEX_ENV:  # a developer's own Vertex AI setup must not leak into the tests
        env.pop(name, None)
    env["PYTHONUNBUFFERED"] = "1"
    env["SIDECAR_HOME"] = E2E_HOME
    env.update(extra)
    return env


def config(**env: str) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=[sys.executable, "-m", "sidecar", "--log-level", "DEBUG"],
        client_factory=make_client,
        server_env=server_env(**env),
    )


def init_params(client_spec: str, fake_url: str, root: str | None = None, **settings: Any) -> lsp.InitializeParams:
    options = {
        "baseUrl": fake_url,
        "apiKey": CANARY_KEY,
        "retryInitialDelayMs": 20,
        "requestTimeoutMs": 10_000,
        **settings,
    }
    return lsp.InitializeParams(
        capabilities=pytest_lsp.client_capabilities(client_spec),
        initialization_options=options,
        process_id=os.getpid(),
        root_uri=f"file://{root}" if root else None,
        workspace_folders=[lsp.WorkspaceFolder(uri=f"file://{root}", name="ws")] if root else None,
    )


async def request(client: LanguageClient, method: str, params: Any = None, timeout: float = 30) -> Any:
    result = await asyncio.wait_for(client.protocol.send_request_async(method, params), timeout)
    return plain(result)


async def request_error(client: LanguageClient, method: str, params: Any = None) -> JsonRpcException:
    try:
        await request(client, method, params)
    except JsonRpcException as exc:
        return exc
    raise AssertionError(f"{method} succeeded but an error was expected")


def notes(client: LanguageClient, method: str) -> list[dict[str, Any]]:
    return client.notes[method]  # type: ignore[attr-defined,no-any-return]


async def wait_for(
    client: LanguageClient,
    method: str,
    predicate: Callable[[dict[str, Any]], bool] = lambda _: True,
    timeout: float = 15,
    start: int = 0,
) -> dict[str, Any]:
    """The first notification of `method` (from index `start`) matching `predicate`."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for item in notes(client, method)[start:]:
            if predicate(item):
                return item
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no {method} matching within {timeout}s; got {notes(client, method)[-5:]}")
        await asyncio.sleep(0.01)


def write_raw(client: LanguageClient, data: bytes) -> None:
    """Write bytes straight to the server's stdin, bypassing the client's framing."""
    assert client._server is not None and client._server.stdin is not None
    client._server.stdin.write(data)
