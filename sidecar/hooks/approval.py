"""Hooks from a workspace file run only once the user approved that exact list and the content of the workspace
files they run (kept per project, by hash)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from sidecar.config.settings import HOOK_EVENTS, Hooks, HookSpec
from sidecar.config.workspace_file import settings_path
from sidecar.private_files import read_approvals, write_approvals
from sidecar.protocol.tools import ConfirmToolCallParams, ToolDecision
from sidecar.session import Session
from sidecar.tools import protected
from sidecar.tools.protected import file_digest

log = logging.getLogger(__name__)

Ask = Callable[[ConfirmToolCallParams], Awaitable[ToolDecision]]
#: The tool name of the question (sidecar/confirmToolCall) that asks to approve a workspace's hooks.
QUESTION_NAME = "Workspace hooks"
APPROVALS_DIR = "hook-approvals"


def hook_list(hooks: Hooks) -> list[tuple[str, HookSpec]]:
    """Every hook of a hooks section as (event, spec), events in HOOK_EVENTS order."""
    return [(event, spec) for event, attribute in HOOK_EVENTS.items() for spec in getattr(hooks, attribute)]


def commands_hash(pairs: Sequence[tuple[str, HookSpec]]) -> str:
    """The key of an approval: sha256 of the commands in order (a PreCompress-only list keeps the key it had
    before the other events existed, so an approval given then still holds), else of the (event, command) pairs."""
    if all(event == "PreCompress" for event, _ in pairs):
        data: list[Any] = [spec.command for _, spec in pairs]
    else:
        data = [[event, spec.command] for event, spec in pairs]
    return hashlib.sha256(json.dumps(data).encode()).hexdigest()


def script_files(pairs: Sequence[tuple[str, HookSpec]], cwd: str, roots: Sequence[Path]) -> list[Path]:
    """The workspace files the hooks run (their programs and script arguments inside the workspace folders)."""
    found: list[Path] = []
    for _, spec in pairs:
        found += [path for path in protected.command_files(spec.command, cwd, roots) if path not in found]
    return found


def approval_key(pairs: Sequence[tuple[str, HookSpec]], scripts: Sequence[tuple[str, str]]) -> str:
    """The key of an approval: the commands' hash, and with scripts in the workspace the hash of both (a changed
    script is another key, so it asks again)."""
    commands = commands_hash(pairs)
    if not scripts:
        return commands
    return hashlib.sha256(json.dumps([commands, [list(s) for s in scripts]]).encode()).hexdigest()


class ProjectData(Protocol):
    """Where the project's data lives (sidecar.recording.store.SessionStore)."""

    @property
    def home(self) -> Path:
        """The data home."""

    @property
    def project_id(self) -> str:
        """The project's short id."""


class HookApproval:
    """Decides whether a workspace file's hooks may run: only after the user approved exactly that list (every
    event's commands) once for this project; a changed list asks again. A refusal holds for the rest of this
    process; an approval is kept in `<data home>/hook-approvals/<project-id>.json` (0600)."""

    def __init__(self, session: Session, ask: Ask, project: Callable[[], ProjectData]) -> None:
        self._session = session
        self._ask = ask
        self._project = project
        self._refused: set[str] = set()
        self._lock = asyncio.Lock()

    def store_path(self) -> Path:
        """Where this project's approvals are kept."""
        project = self._project()
        return project.home / APPROVALS_DIR / f"{project.project_id}.json"

    def _approved(self) -> dict[str, Any]:
        return read_approvals(self.store_path(), "hook approvals")

    def _scripts(self, pairs: Sequence[tuple[str, HookSpec]]) -> list[tuple[str, str]]:
        """(path, content digest) of each workspace file the hooks run (blocking: run off the loop)."""
        roots = [Path(folder) for folder in self._session.workspace_folders]
        return [(str(p), file_digest(p)) for p in script_files(pairs, self._session.project_root, roots)]

    def _remember(self, key: str, pairs: Sequence[tuple[str, HookSpec]], scripts: Sequence[tuple[str, str]]) -> None:
        approved = self._approved()
        approved[key] = {
            "commands": [spec.command for _, spec in pairs],
            "events": [event for event, _ in pairs],
            "scripts": dict(scripts),
            "approvedAt": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        }
        write_approvals(self.store_path(), self._session.project_root, approved, "hook approval")

    async def approved(self, workspace: Hooks) -> bool:
        """Whether the workspace file's hooks may run; asks the user when this list is not approved yet."""
        pairs = hook_list(workspace)
        if not pairs:
            return True
        async with self._lock:
            scripts = await asyncio.to_thread(self._scripts, pairs)
            key = approval_key(pairs, scripts)
            if key in self._refused:
                return False
            if key in self._approved():
                return True
            decision = await self._question(key, pairs, scripts)
            if decision in ("allow", "allowAlways"):
                self._remember(key, pairs, scripts)
                log.info("the workspace's hooks were approved (%s)", key[:12])
                return True
            self._refused.add(key)
            log.warning("the workspace's hooks were not approved; they do not run")
            return False

    async def _question(
        self, key: str, pairs: Sequence[tuple[str, HookSpec]], scripts: Sequence[tuple[str, str]]
    ) -> ToolDecision:
        sources = self._session.sources.workspace_hook_sources or [
            settings_path(root) for root in self._session.workspace_folders
        ]
        files = " and ".join(sources) or "the workspace file"
        listed = "\n".join(f"  {number}. {spec.command}  ({event})" for number, (event, spec) in enumerate(pairs, 1))
        runs = ""
        if scripts:
            shown = ", ".join(path for path, _ in scripts)
            runs = f"\nThey run these files of the workspace (their content is part of what you approve): {shown}"
        description = (
            f"The workspace's hooks, from {files}, would run these commands on your machine (PreCompress: "
            f"before each compaction; BeforeAgent: before each of your messages; SessionStart: when a session "
            f"starts):\n{listed}{runs}\nA repository can ship such a file, and the agent can write one. Allow them "
            "to run in this project? You are asked once for this exact list; a change (of a command or of a file "
            "it runs) asks again."
        )
        request = ConfirmToolCallParams(
            turn_id="hooks",
            call_id=f"hooks-{key[:16]}",
            tool_name=QUESTION_NAME,
            args={"commands": [spec.command for _, spec in pairs], "events": [event for event, _ in pairs]},
            description=description,
        )
        try:
            return await self._ask(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the editor could not ask: safest is no
            log.warning("could not ask about the workspace's hooks (%s); they do not run", exc)
            return "deny"
