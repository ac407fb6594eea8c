"""Workspace settings (the `.sidecar/settings.json` file, an editor's workspace layer): keys a hostile repo must not
set removed, hooks and MCP servers only in a trusted workspace."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from sidecar.config.files import MISSING, read_json_file
from sidecar.config.mcp_servers import untrusted_entries

log = logging.getLogger(__name__)

RELATIVE_PATH = os.path.join(".sidecar", "settings.json")
#: A repository must not redirect requests (and the API key) elsewhere, supply a key, turn confirmations off, or turn
#: off (or shrink until pruned) the checkpoints that let the user take the agent's edits back; nor choose which files
#: are read into the model's context (contextFileNames could name ~/.gemini/oauth_creds.json, memoryBoundaryMarkers
#: could move the project root to / so that `@/home/you/.ssh/id_rsa` imports).
FORBIDDEN_KEYS = frozenset(
    {
        "apiKey",
        "baseUrl",
        "approvalMode",
        "backend",
        "vertexProject",
        "vertexLocation",
        "checkpointing",
        "checkpointMaxFileBytes",
        "checkpointStoreMb",
        "contextFileNames",
        "memoryBoundaryMarkers",
    }
)
#: Keys that run something: kept from a workspace only when it is trusted, and then only once the user approved
#: the exact hooks list (sidecar/hooks/approval.py) or server definition (sidecar/mcp/approval.py).
APPROVED_KEYS = frozenset({"hooks", "mcpServers"})
#: Every key the server refuses from a workspace as it arrives (the editors' "restricted" lists are checked to hold
#: each of them: VS Code's `restrictedConfigurations`).
REFUSED_FROM_WORKSPACE = FORBIDDEN_KEYS | APPROVED_KEYS


def settings_path(root: str) -> str:
    """Where a workspace folder's settings file is."""
    return os.path.join(root, RELATIVE_PATH)


def workspace_values(
    data: Mapping[str, Any],
    origin: str,
    trusted: bool,
    *,
    how: str = "from a workspace file (use your editor settings)",
) -> tuple[dict[str, Any], list[str]]:
    """The values a workspace source may set, and the problems to tell (each names `origin` and the key).

    The same rules for every way workspace settings arrive: the forbidden keys are dropped with a warning; hooks
    and MCP servers only in a trusted workspace (their `trust` flag never), and they still wait for approval."""
    problems: list[str] = []
    for key in sorted(FORBIDDEN_KEYS & data.keys()):
        problems.append(f"{origin}: `{key}` cannot be set {how}; ignored.")
    kept: dict[str, Any] = {}
    for key, value in data.items():
        if key in FORBIDDEN_KEYS:
            continue
        if key in APPROVED_KEYS and not trusted:
            log.info("%s defines %s; they stay off until the workspace is trusted", origin, key)
            continue
        if key == "mcpServers":  # servers never skip confirmations
            value, trust_problems = untrusted_entries(value, origin)
            problems += trust_problems
        kept[key] = value
    return kept, problems


def read_workspace_settings(
    roots: list[str], trusted: bool, origins: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The merged `sidecar` settings of the workspace folders' settings files, and problems to tell the user.

    Later folders do not override earlier ones. Hooks and MCP servers are kept only in a trusted workspace.
    `origins`, when given, gets the file each kept key came from.
    """
    merged: dict[str, Any] = {}
    problems: list[str] = []
    for root in roots:
        path = settings_path(root)
        data, problem = read_json_file(path)
        if problem is not None:
            problems.append(problem)
            continue
        if data is MISSING:
            continue  # no settings file in this folder
        if isinstance(data, dict) and isinstance(data.get("sidecar"), dict):
            data = data["sidecar"]
        if not isinstance(data, dict):
            problems.append(f"{path} must hold a JSON object; it is ignored.")
            continue
        kept, found = workspace_values(data, path, trusted)
        problems += found
        for key, value in kept.items():
            if key not in merged and origins is not None:
                origins[key] = path
            merged.setdefault(key, value)
    return merged, problems
