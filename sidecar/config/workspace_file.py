"""The workspace settings file `.sidecar/settings.json`: read safely, with keys a hostile repo must not set removed."""

from __future__ import annotations

import logging
import os
from typing import Any

from sidecar.config.files import MISSING, read_json_file
from sidecar.config.mcp_servers import untrusted_entries

log = logging.getLogger(__name__)

RELATIVE_PATH = os.path.join(".sidecar", "settings.json")
#: A repository must not redirect requests (and the API key) elsewhere, supply a key, or turn confirmations off;
#: nor choose which files are read into the model's context (contextFileNames could name ~/.gemini/oauth_creds.json,
#: memoryBoundaryMarkers could move the project root to / so that `@/home/you/.ssh/id_rsa` imports).
FORBIDDEN_KEYS = frozenset({
    "apiKey", "baseUrl", "approvalMode", "backend", "vertexProject", "vertexLocation",
    "contextFileNames", "memoryBoundaryMarkers",
})


def settings_path(root: str) -> str:
    """Where a workspace folder's settings file is."""
    return os.path.join(root, RELATIVE_PATH)


def read_workspace_settings(roots: list[str], trusted: bool) -> tuple[dict[str, Any], list[str]]:
    """The merged `sidecar` settings of the workspace folders' settings files, and problems to tell the user.

    Later folders do not override earlier ones. Hooks are kept only in a trusted workspace.
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
        for key in sorted(FORBIDDEN_KEYS & data.keys()):
            problems.append(f"{path}: `{key}` cannot be set from a workspace file (use your editor settings); ignored.")
        if "mcpServers" in data:  # servers start only in a trusted workspace, and never skip confirmations
            if trusted:
                data["mcpServers"], trust_problems = untrusted_entries(data["mcpServers"], path)
                problems += trust_problems
            else:
                log.info("%s defines MCP servers; they stay off until the workspace is trusted", path)
        if "hooks" in data and not trusted:
            log.info("%s defines hooks; they stay off until the workspace is trusted", path)
        for key, value in data.items():
            if key in FORBIDDEN_KEYS or (key in ("hooks", "mcpServers") and not trusted):
                continue
            merged.setdefault(key, value)
    return merged, problems
