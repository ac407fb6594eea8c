"""How the settings layers treat `mcpServers`: merged by server name, a workspace never sets `trust` nor replaces
a server of the user's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def untrusted_entries(raw: Any, origin: str) -> tuple[Any, list[str]]:
    """A workspace file's servers with `trust` removed: a repository may add a server, never skip its questions."""
    if not isinstance(raw, Mapping):
        return raw, []
    problems: list[str] = []
    cleaned: dict[str, Any] = {}
    for name, entry in raw.items():
        if isinstance(entry, Mapping) and "trust" in entry:
            problems.append(f"{origin}: MCP server {name!r} cannot set `trust` from a workspace file; ignored.")
            entry = {k: v for k, v in entry.items() if k != "trust"}
        cleaned[name] = entry
    return cleaned, problems


def merge_servers(base: Any, overlay: Any) -> Any:
    """Servers of two settings layers by name (the overlay's entry wins); a non-object layer is left to the check."""
    if not isinstance(overlay, Mapping):
        return base if overlay is None else overlay
    if not isinstance(base, Mapping):
        return dict(overlay)
    return {**base, **overlay}


def add_workspace_servers(user: Any, workspace: Any) -> tuple[Any, list[str], list[str]]:
    """The user's servers plus the workspace's: (merged, names that came from the workspace, problems). On a name
    clash the user's server wins and the workspace's is reported, never started."""
    if not isinstance(workspace, Mapping) or not workspace:
        return (
            user,
            [],
            []
            if workspace is None or isinstance(workspace, Mapping)
            else ["Workspace setting mcpServers must be an object of servers by name; no workspace server is started."],
        )
    mine = user if isinstance(user, Mapping) else {}
    merged = dict(mine)
    added: list[str] = []
    problems: list[str] = []
    for name, entry in workspace.items():
        if name in mine:
            problems.append(
                f"The workspace defines an MCP server {name!r}, a name your own settings already use: yours is "
                "kept, the workspace's is not started."
            )
            continue
        merged[name] = entry
        added.append(name)
    return merged, added, problems
