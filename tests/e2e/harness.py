"""The editor side of the e2e tests: the project's one JSON-RPC client, answering as a recorded real editor would."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import pytest_lsp
from lsprotocol import converters

from sidecar.protocol import methods
from sidecar.rpc.client import RpcClient, RpcError

#: Real clients' recorded capabilities (from pytest-lsp): every e2e test runs once per client.
CLIENTS = ["neovim@v0.7.0", "neovim@v0.11.0", "visual-studio-code"]
CANARY_KEY = "AIzaCANARY-e2e-0123456789abcdef"
VERTEX_ENV = (
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_VERTEX_BASE_URL",
    "GOOGLE_GENAI_USE_ENTERPRISE",
)
#: Every e2e server records its sessions here, never in the user's data directory.
E2E_HOME = tempfile.mkdtemp(prefix="sidecar-e2e-home-")


def capabilities(client_spec: str) -> dict[str, Any]:
    """The recorded `ClientCapabilities` of a real client, as JSON."""
    caps = converters.get_converter().unstructure(pytest_lsp.client_capabilities(client_spec))
    assert isinstance(caps, dict)
    return caps


class EditorClient(RpcClient):
    """The one client, answering sidecar/confirmToolCall from `decisions` and workspace/applyEdit with
    `apply_result`, and keeping what it was asked."""

    def __init__(self, client_spec: str, workspace_root: str, **env: str) -> None:
        super().__init__([sys.executable, "-m", "sidecar", "--log-level", "DEBUG"], env=server_env(**env))
        self.client_spec = client_spec
        self.workspace_root = workspace_root
        self.capabilities = capabilities(client_spec)
        self.init_result: dict[str, Any] = {}
        #: Answers to sidecar/confirmToolCall, in order ("allow" when empty), and the requests asked.
        self.decisions: list[str] = []
        self.confirmations: list[dict[str, Any]] = []
        #: The WorkspaceEdits of workspace/applyEdit, and what to answer.
        self.edits: list[dict[str, Any]] = []
        self.apply_result: dict[str, Any] = {"applied": True}
        self.on(methods.CONFIRM_TOOL_CALL.name, self._confirm)
        self.on("workspace/applyEdit", self._apply_edit)

    def _confirm(self, params: dict[str, Any]) -> dict[str, str]:
        self.confirmations.append(params)
        return {"decision": self.decisions.pop(0) if self.decisions else "allow"}

    def _apply_edit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.edits.append(params["edit"])
        answer: dict[str, Any] = {"applied": self.apply_result["applied"]}
        if self.apply_result.get("reason") is not None:
            answer["failureReason"] = self.apply_result["reason"]
        return answer

    async def initialize(self, fake_url: str, **settings: Any) -> dict[str, Any]:
        """initialize + initialized, then wait for start-up's sidecar/tokenUsage (sent after the heavy imports)."""
        root = self.workspace_root
        options = {
            "baseUrl": fake_url,
            "apiKey": CANARY_KEY,
            "retryInitialDelayMs": 20,
            "requestTimeoutMs": 10_000,
            **settings,
        }
        self.init_result = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": self.capabilities,
                "rootUri": f"file://{root}",
                "workspaceFolders": [{"uri": f"file://{root}", "name": "ws"}],
                "initializationOptions": options,
            },
            timeout=30,
        )
        self.notify("initialized", {})
        await self.wait_note(methods.TOKEN_USAGE.name, timeout=30)
        return self.init_result

    def supports_progress(self) -> bool:
        return bool(self.capabilities.get("window", {}).get("workDoneProgress"))


def server_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env.pop("GOOGLE_GEMINI_BASE_URL", None)
    for name in VERTEX_ENV:  # a developer's own Vertex AI setup must not leak into the tests
        env.pop(name, None)
    env["PYTHONUNBUFFERED"] = "1"
    env["SIDECAR_HOME"] = E2E_HOME
    env["SIDECAR_CHECK_RESULTS"] = "1"  # every result the server sends must convert to its declared type
    env.update(extra)
    return env


async def request(client: RpcClient, method: str, params: Any = None, timeout: float = 30) -> Any:
    return await client.request(method, params, timeout=timeout)


async def request_error(client: RpcClient, method: str, params: Any = None) -> RpcError:
    try:
        await request(client, method, params)
    except RpcError as exc:
        return exc
    raise AssertionError(f"{method} succeeded but an error was expected")


def notes(client: RpcClient, method: str) -> list[dict[str, Any]]:
    return client.notes[method]


async def wait_for(
    client: RpcClient,
    method: str,
    predicate: Callable[[dict[str, Any]], bool] = lambda _: True,
    timeout: float = 15,
    start: int = 0,
) -> dict[str, Any]:
    """The first notification of `method` (from index `start`) matching `predicate`."""
    return await client.wait_note(method, predicate, timeout, start)  # type: ignore[no-any-return]


def write_raw(client: RpcClient, data: bytes) -> None:
    """Write bytes straight to the server's stdin, bypassing the client's framing."""
    client.write_raw(data)
