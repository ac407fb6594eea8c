"""Hooks from a workspace file run only once the user approved that exact list (kept per project, by hash)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from sidecar.config.settings import HookSpec, decode_settings
from sidecar.config.workspace_file import settings_path
from sidecar.private_files import write_private
from sidecar.protocol.tools import ConfirmToolCallParams, ToolDecision
from sidecar.session import Session

log = logging.getLogger(__name__)

Ask = Callable[[ConfirmToolCallParams], Awaitable[ToolDecision]]
#: The tool name of the question (sidecar/confirmToolCall) that asks to approve a workspace's hooks.
QUESTION_NAME = "PreCompress hooks"
APPROVALS_DIR = "hook-approvals"


def commands_hash(specs: Sequence[HookSpec]) -> str:
    """The key of an approval: sha256 of the commands, in order."""
    return hashlib.sha256(json.dumps([spec.command for spec in specs]).encode()).hexdigest()


def user_hooks(session: Session) -> list[HookSpec]:
    """The PreCompress hooks the editor's own settings give (initializationOptions, didChangeConfiguration)."""
    settings, _ = decode_settings(session.sources.init_options)
    settings, _ = decode_settings(session.sources.config_section, base=settings)
    return settings.hooks.pre_compress


class ProjectData(Protocol):
    """Where the project's data lives (sidecar.recording.store.SessionStore)."""

    @property
    def home(self) -> Path: ...
    @property
    def project_id(self) -> str: ...


class HookApproval:
    """Decides which PreCompress hooks may run: the editor's own ones always; a workspace file's list only after
    the user approved exactly that list once for this project (a changed list asks again). A refusal holds for
    the rest of this process; an approval is kept in `<data home>/hook-approvals/<project-id>.json` (0600)."""

    def __init__(self, session: Session, ask: Ask, project: Callable[[], ProjectData]) -> None:
        self._session = session
        self._ask = ask
        self._project = project
        self._refused: set[str] = set()
        self._lock = asyncio.Lock()

    def store_path(self) -> Path:
        project = self._project()
        return project.home / APPROVALS_DIR / f"{project.project_id}.json"

    def _approved(self) -> dict[str, Any]:
        try:
            data = json.loads(self.store_path().read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("cannot read the hook approvals %s (%s); asking again", self.store_path(), exc)
            return {}
        approved = data.get("approved") if isinstance(data, dict) else None
        return approved if isinstance(approved, dict) else {}

    def _remember(self, key: str, specs: Sequence[HookSpec]) -> None:
        approved = self._approved()
        approved[key] = {
            "commands": [spec.command for spec in specs],
            "approvedAt": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        }
        data = {"project": self._session.project_root, "approved": approved}
        try:
            write_private(self.store_path(), json.dumps(data, indent=2).encode())
        except OSError as exc:
            log.warning("cannot keep the hook approval in %s: %s (it holds for this session)", self.store_path(), exc)

    async def allowed(self, specs: list[HookSpec]) -> list[HookSpec]:
        """The hooks of `specs` that may run now; asks the user when a workspace file's list is not approved."""
        if not specs or specs == user_hooks(self._session):
            return specs
        key = commands_hash(specs)
        async with self._lock:
            if key in self._refused:
                return []
            if key in self._approved():
                return specs
            decision = await self._question(key, specs)
            if decision in ("allow", "allowAlways"):
                self._remember(key, specs)
                log.info("the workspace's PreCompress hooks were approved (%s)", key[:12])
                return specs
            self._refused.add(key)
            log.warning("the workspace's PreCompress hooks were not approved; they do not run")
            return []

    async def _question(self, key: str, specs: Sequence[HookSpec]) -> ToolDecision:
        files = ", ".join(settings_path(root) for root in self._session.workspace_folders) or "the workspace file"
        listed = "\n".join(f"  {number}. {spec.command}" for number, spec in enumerate(specs, 1))
        description = (
            f"The workspace settings ({files}) define PreCompress hooks: these commands would run before each "
            f"compaction:\n{listed}\nA repository can ship such a file, and the agent can write one. Allow them "
            "to run in this project? You are asked once for this exact list; a change asks again."
        )
        request = ConfirmToolCallParams(
            turn_id="hooks",
            call_id=f"hooks-{key[:16]}",
            tool_name=QUESTION_NAME,
            args={"commands": [spec.command for spec in specs]},
            description=description,
        )
        try:
            return await self._ask(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the editor could not ask: safest is no
            log.warning("could not ask about the workspace's PreCompress hooks (%s); they do not run", exc)
            return "deny"
