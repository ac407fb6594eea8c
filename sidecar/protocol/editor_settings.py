"""The shape of an editor's settings on the wire: the user's values, the workspace's apart, and the trust at start.

`initializationOptions` (and `settings` of `workspace/didChangeConfiguration`) hold the `sidecar` section: the
user's own values (VS Code: User and Remote settings) at the top level, plus two optional keys an editor that knows
where its values came from sends:

- `workspaceSettings`: the values the workspace set (VS Code: Workspace and Folder settings, i.e. a repository's
  `.vscode/settings.json`), which get exactly the rules of `.sidecar/settings.json` (docs/settings.md);
- `isTrusted`: whether the workspace is trusted as the editor starts the server (VS Code: `workspace.isTrusted`),
  so that nothing from the workspace is loaded before the trust is known.

A client that sends neither (an older one, Neovim's `setup({settings = ...})`) has all its values taken as the
user's, and its trust as unknown until a `sidecar/ideContext` says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

WORKSPACE_SETTINGS = "workspaceSettings"
IS_TRUSTED = "isTrusted"


def section_of(raw: Any) -> Any:
    """The `sidecar` section itself (`raw` may hold it under "sidecar")."""
    if isinstance(raw, Mapping) and isinstance(raw.get("sidecar"), list | Mapping):
        return raw["sidecar"]
    return raw


def split_section(raw: Any) -> tuple[Any, Any, bool | None]:
    """(the user's values, the workspace's values or None, the trust sent or None) of one settings message."""
    section = section_of(raw)
    if not isinstance(section, Mapping):
        return section, None, None
    user = {k: v for k, v in section.items() if k not in (WORKSPACE_SETTINGS, IS_TRUSTED)}
    trusted = section.get(IS_TRUSTED)
    return user, section.get(WORKSPACE_SETTINGS), trusted if isinstance(trusted, bool) else None
