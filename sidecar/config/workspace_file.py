"""The workspace settings file `.sidecar/settings.json`: read safely, with keys a hostile repo must not set removed."""

from __future__ import annotations

import json
import logging
import os
import stat
from typing import Any

from sidecar.config.mcp_servers import untrusted_entries

log = logging.getLogger(__name__)

RELATIVE_PATH = os.path.join(".sidecar", "settings.json")
#: A repository must not redirect requests (and the API key) elsewhere, supply a key, or turn confirmations off.
FORBIDDEN_KEYS = frozenset({"apiKey", "baseUrl", "approvalMode", "backend", "vertexProject", "vertexLocation"})
MAX_BYTES = 1_000_000


def _read_regular_file(path: str) -> bytes:
    """At most MAX_BYTES + 1 bytes of a regular file; a FIFO or device is refused without blocking."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(path)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_BYTES + 1)
    finally:
        os.close(fd)


def settings_path(root: str) -> str:
    return os.path.join(root, RELATIVE_PATH)


def read_workspace_settings(roots: list[str], trusted: bool) -> tuple[dict[str, Any], list[str]]:
    """The merged `sidecar` settings of the workspace folders' settings files, and problems to tell the user.

    Later folders do not override earlier ones. Hooks are kept only in a trusted workspace.
    """
    merged: dict[str, Any] = {}
    problems: list[str] = []
    for root in roots:
        path = settings_path(root)
        try:
            raw = _read_regular_file(path)
        except FileNotFoundError:
            continue
        except IsADirectoryError:
            problems.append(f"{path} is not a regular file; it is ignored.")
            continue
        except OSError as exc:
            problems.append(f"Cannot read {path}: {exc.strerror or exc}; it is ignored.")
            continue
        if len(raw) > MAX_BYTES:
            problems.append(f"{path} is larger than {MAX_BYTES:,} bytes; it is ignored.")
            continue
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            problems.append(f"{path} is not valid JSON ({exc}); it is ignored and nothing was changed.")
            continue
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
