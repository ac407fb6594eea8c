"""Which settings win, lowest first: defaults < the user's file < the editor's user values (initializationOptions,
then didChangeConfiguration) < the workspace's values (the editor's workspace layer, then `.sidecar/settings.json`,
both under the workspace rules) < front-end overrides (an ACP session mode). One pipeline for both front-ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from sidecar.config.files import MISSING, read_json_file
from sidecar.config.mcp_servers import add_workspace_servers
from sidecar.config.settings import Hooks, Settings, concat_hooks, decode_settings
from sidecar.config.workspace_file import read_workspace_settings, workspace_values
from sidecar.logging_setup import register_secret
from sidecar.protocol.editor_settings import split_section

#: How the editor's workspace layer is named in messages.
EDITOR_WORKSPACE = "Workspace settings from the editor (e.g. .vscode/settings.json)"
#: How the editor's workspace layer is named as the source of something asked about (the hooks' approval).
EDITOR_WORKSPACE_SOURCE = "the editor's workspace settings (VS Code: .vscode/settings.json)"


class SettingsLayers:
    """The raw settings sources as they arrived, layered into one Settings on demand (Session.reload_settings)."""

    def __init__(self, user_file: Path | None = None) -> None:
        #: The user's own settings file, which may set anything (ACP has no settings channel); None: not read.
        self.user_file = user_file
        #: The `initializationOptions` of `initialize`.
        self.init_options: Any = None
        #: The `settings` of the latest `workspace/didChangeConfiguration`.
        self.config_section: Any = None
        #: Settings a front-end chose for this session (wire names, e.g. {"approvalMode": "yolo"}); they win.
        self.overrides: dict[str, Any] = {}
        #: False where the front-end cannot ask the user whether to trust the workspace (ACP): its file's hooks stay
        #: off whatever the editor says about trust.
        self.workspace_trust = True
        #: The workspace's hooks as last resolved (none when it is not trusted): the tail of each event's list in
        #: the resolved settings, which runs only once the user approved it (sidecar/hooks/approval.py).
        self.workspace_hooks = Hooks()
        #: Where the workspace's hooks came from, for the approval's question: the editor's workspace layer and/or
        #: the workspace file that set them (empty when there are none).
        self.workspace_hook_sources: tuple[str, ...] = ()
        #: The names of the MCP servers the workspace added (none when it is not trusted): each starts only once
        #: the user approved its definition (sidecar/mcp/approval.py).
        self.workspace_servers: frozenset[str] = frozenset()
        self._last_problems: set[str] = set()

    def editor_workspace_layer(self) -> Any:
        """The workspace values the editor sent last (a didChangeConfiguration's replace initializationOptions')."""
        for source in (self.config_section, self.init_options):
            if source is not None:
                return split_section(source)[1]
        return None

    def resolve(self, workspace_folders: list[str], trusted: bool) -> tuple[Settings, list[str]]:
        """The settings, and the problems not reported by the previous call (each is told once until it goes away).

        The files are read from disk each time. Workspace values — the editor's workspace layer and the workspace
        file — go through the same rules (workspace_file.workspace_values): never the forbidden keys; hooks and MCP
        servers only in a trusted workspace, a server never under a name the user's settings use. Hooks are not
        replaced but concatenated, each event's list in this order: the editor's user values (a later
        didChangeConfiguration replaces initializationOptions' as a whole), the user file's, the workspace's."""
        messages: list[str] = []
        settings = Settings()
        file_hooks = Hooks()
        if self.user_file is not None:
            raw, problem = read_json_file(self.user_file)
            settings, bad = decode_settings(None if raw is MISSING else raw, base=settings)
            file_hooks = settings.hooks
            messages += [problem] if problem else []
            messages += [p.message() + f" (in {self.user_file})" for p in bad]
        editor_hooks = Hooks()
        for source in (self.init_options, self.config_section):
            before = settings.hooks
            settings, bad = decode_settings(split_section(source)[0], base=settings)
            editor_hooks = settings.hooks if settings.hooks is not before else editor_hooks
            messages += [p.message() for p in bad]
        may_run = trusted and self.workspace_trust
        section, workspace_problems = self._workspace_section(workspace_folders, may_run)
        messages += workspace_problems
        user_servers = settings.mcp_servers
        servers, added, clashes = add_workspace_servers(user_servers, section.pop("mcpServers", None))
        messages += clashes
        before = settings.hooks
        settings, bad = decode_settings(section, base=settings)
        self.workspace_hooks = settings.hooks if settings.hooks is not before else Hooks()
        self.workspace_servers = frozenset(added)
        settings = msgspec.structs.replace(settings, hooks=concat_hooks(editor_hooks, file_hooks, self.workspace_hooks))
        if added:
            settings, bad_servers = decode_settings({"mcpServers": servers}, base=settings)
            bad += bad_servers
        messages += [p.message() for p in bad]
        settings, bad = decode_settings(self.overrides, base=settings)
        messages += [p.message() for p in bad]
        register_secret(settings.api_key)  # never in a log line
        new = [message for message in messages if message not in self._last_problems]
        self._last_problems = set(messages)
        return settings, new

    def _workspace_section(self, folders: list[str], may_run: bool) -> tuple[dict[str, Any], list[str]]:
        """The workspace's values: the editor's workspace layer with the workspace file's on top (hooks of both)."""
        problems: list[str] = []
        section: dict[str, Any] = {}
        layer = self.editor_workspace_layer()
        if isinstance(layer, dict):
            section, problems = workspace_values(
                layer, EDITOR_WORKSPACE, may_run, how="in workspace settings (set it in your user settings)"
            )
        elif layer is not None:
            problems.append(f"{EDITOR_WORKSPACE} must be an object; they are ignored.")
        origins: dict[str, str] = {}
        from_file, file_problems = read_workspace_settings(folders, may_run, origins)
        problems += file_problems
        hook_sources = [EDITOR_WORKSPACE_SOURCE] if "hooks" in section else []
        self.workspace_hook_sources = tuple(hook_sources + ([origins["hooks"]] if "hooks" in origins else []))
        for key, value in from_file.items():
            if key == "hooks" and "hooks" in section:
                value = _joined_hooks(section["hooks"], value)
            elif key == "mcpServers" and isinstance(section.get(key), dict) and isinstance(value, dict):
                value = {**section[key], **{n: e for n, e in value.items() if n not in section[key]}}
            section[key] = value
        return section, problems


def _joined_hooks(first: Any, second: Any) -> Any:
    """Two workspace sources' raw hooks sections, each event's lists joined (a malformed one is left to the check)."""
    if not isinstance(first, dict) or not isinstance(second, dict):
        return second
    joined = dict(first)
    for event, entries in second.items():
        earlier = joined.get(event)
        joined[event] = [*earlier, *entries] if isinstance(earlier, list) and isinstance(entries, list) else entries
    return joined


def acp_layers(user_file: Path) -> SettingsLayers:
    """The sources of a `sidecar acp` session (and of `sidecar doctor --acp`): the user's file, no editor channel, and
    the workspace file always as untrusted — ACP has no way to ask the user whether to trust a repository."""
    layers = SettingsLayers(user_file)
    layers.workspace_trust = False
    return layers
