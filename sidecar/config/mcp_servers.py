"""How the settings layers treat `mcpServers`: merged by server name, a workspace file never sets `trust`."""

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
