"""A workspace's MCP server starts only once the user approved its exact definition and the content of the workspace
files its command runs (kept per project, by hash): the workspace hooks' approval (sidecar/hooks/approval.py), for
servers."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from sidecar.mcp.config import ServerConfig
from sidecar.private_files import read_approvals, write_approvals
from sidecar.protocol.tools import ConfirmToolCallParams, ToolDecision
from sidecar.tools import protected
from sidecar.tools.protected import file_digest

log = logging.getLogger(__name__)

#: Asks the user (sidecar/confirmToolCall), as the hooks' approval does.
Ask = Callable[[ConfirmToolCallParams], Awaitable[ToolDecision]]

#: The tool name of the question (sidecar/confirmToolCall) that asks to approve a workspace's MCP server.
QUESTION_NAME = "Workspace MCP server"
APPROVALS_DIR = "mcp-approvals"


class ProjectData(Protocol):
    """Where the project's data lives (sidecar.recording.store.SessionStore), as for the hooks' approvals."""

    @property
    def home(self) -> Path:
        """The data home."""

    @property
    def project_id(self) -> str:
        """The project's short id."""


def definition_key(server: ServerConfig) -> str:
    """The key of an approval: sha256 of the server's whole definition (a changed command, argument, variable,
    folder, URL or header asks again)."""
    return hashlib.sha256(json.dumps(server.definition(), sort_keys=True).encode()).hexdigest()


def server_files(server: ServerConfig, roots: Sequence[Path]) -> list[Path]:
    """The workspace files a stdio server's command runs (its program and script arguments inside the workspace
    folders `roots`), resolved from the folder it starts in (its `cwd`, else the sidecar's)."""
    if server.transport != "stdio" or not server.command:
        return []
    cwd = os.path.join(os.getcwd(), server.cwd) if server.cwd else os.getcwd()
    return protected.command_files([server.command, *server.args], cwd, roots)


def approval_key(server: ServerConfig, scripts: Sequence[tuple[str, str]]) -> str:
    """The key of an approval: the definition's key, and with files in the workspace the hash of both (a changed
    script is another key, so it asks again; a server that runs no workspace file keeps the key it had before)."""
    definition = definition_key(server)
    if not scripts:
        return definition
    return hashlib.sha256(json.dumps([definition, [list(s) for s in scripts]]).encode()).hexdigest()


class McpApproval:
    """Decides whether a workspace's MCP server may start: only after the user approved exactly that definition
    and the content of the workspace files it runs, once for this project. A refusal holds for the rest of this
    process; an approval is kept in `<data home>/mcp-approvals/<project-id>.json` (0600)."""

    def __init__(
        self,
        ask: Ask,
        project: Callable[[], ProjectData],
        project_root: Callable[[], str],
        folders: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        self._ask = ask
        self._project = project
        self._project_root = project_root
        #: The workspace folders (their files a server runs are part of what is approved); default: the project root.
        self._folders = folders or (lambda: [project_root()])
        self._refused: set[str] = set()
        self._lock = asyncio.Lock()

    def store_path(self) -> Path:
        """Where this project's approvals are kept."""
        project = self._project()
        return project.home / APPROVALS_DIR / f"{project.project_id}.json"

    def _approved(self) -> dict[str, Any]:
        return read_approvals(self.store_path(), "MCP server approvals")

    def _scripts(self, server: ServerConfig) -> list[tuple[str, str]]:
        """(path, content digest) of each workspace file the server's command runs (blocking: run off the loop)."""
        roots = [Path(folder) for folder in self._folders()]
        return [(str(path), file_digest(path)) for path in server_files(server, roots)]

    def _remember(self, key: str, server: ServerConfig, scripts: Sequence[tuple[str, str]]) -> None:
        approved = self._approved()
        approved[key] = {
            "server": server.name,
            "commandLine": server.command_line(),
            "scripts": dict(scripts),
            "approvedAt": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        }
        write_approvals(self.store_path(), self._project_root(), approved, "MCP approval")

    async def approved(self, server: ServerConfig) -> bool:
        """Whether the workspace's server may start; asks the user when this definition is not approved yet."""
        async with self._lock:
            scripts = await asyncio.to_thread(self._scripts, server)
            key = approval_key(server, scripts)
            if key in self._refused:
                return False
            if key in self._approved():
                return True
            decision = await self._question(key, server, scripts)
            if decision in ("allow", "allowAlways"):
                self._remember(key, server, scripts)
                log.info("the workspace's MCP server %r was approved (%s)", server.name, key[:12])
                return True
            self._refused.add(key)
            log.warning("the workspace's MCP server %r was not approved; it is not started", server.name)
            return False

    async def _question(self, key: str, server: ServerConfig, scripts: Sequence[tuple[str, str]]) -> ToolDecision:
        if server.transport == "stdio":
            what = f"runs this command on your machine:\n  {server.command_line()}"
            if server.cwd:
                what += f"\n  in {server.cwd}"
            if server.env:
                what += "\n  with " + ", ".join(f"{k}={v}" for k, v in server.env)
            if scripts:
                shown = ", ".join(path for path, _ in scripts)
                what += f"\n  It runs these workspace files (their content is part of what you approve): {shown}"
        else:
            what = f"connects to {server.url} ({server.transport})"
            if server.headers:
                what += " with the headers " + ", ".join(k for k, _ in server.headers)
        description = (
            f"The workspace settings ({server.origin}) define the MCP server {server.name!r}, which {what}\n"
            "A repository can ship such settings, and the agent can write them. Start this server in this project? "
            "You are asked once for this exact definition; a change (of the definition or of a file it runs) asks "
            "again. Its tools still ask before each call."
        )
        request = ConfirmToolCallParams(
            turn_id="mcp",
            call_id=f"mcp-{key[:16]}",
            tool_name=QUESTION_NAME,
            args={"server": server.name, "commandLine": server.command_line()},
            description=description,
        )
        try:
            return await self._ask(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the editor could not ask: safest is no
            log.warning("could not ask about the workspace's MCP server %r (%s); it is not started", server.name, exc)
            return "deny"
