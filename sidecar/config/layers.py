"""Which settings win, lowest first: defaults < the user's file < initializationOptions < didChangeConfiguration <
the workspace settings file < front-end overrides (an ACP session mode). One pipeline for both front-ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from sidecar.config.files import MISSING, read_json_file
from sidecar.config.mcp_servers import merge_servers
from sidecar.config.settings import Settings, decode_settings
from sidecar.config.workspace_file import read_workspace_settings
from sidecar.logging_setup import register_secret


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
        self._last_problems: set[str] = set()

    def resolve(self, workspace_folders: list[str], trusted: bool) -> tuple[Settings, list[str]]:
        """The settings, and the problems not reported by the previous call (each is told once until it goes away).

        The files are read from disk each time; the workspace file's hooks and MCP servers count only in a trusted
        workspace, and it can never set the keys a hostile repository must not (workspace_file.FORBIDDEN_KEYS)."""
        messages: list[str] = []
        settings = Settings()
        if self.user_file is not None:
            raw, problem = read_json_file(self.user_file)
            settings, bad = decode_settings(None if raw is MISSING else raw, base=settings)
            messages += [problem] if problem else []
            messages += [p.message() + f" (in {self.user_file})" for p in bad]
        for source in (self.init_options, self.config_section):
            settings, bad = decode_settings(source, base=settings)
            messages += [p.message() for p in bad]
        section, file_problems = read_workspace_settings(workspace_folders, trusted and self.workspace_trust)
        user_servers = settings.mcp_servers  # a workspace file adds servers; it never replaces the user's
        settings, bad = decode_settings(section, base=settings)
        settings = msgspec.structs.replace(settings, mcp_servers=merge_servers(user_servers, settings.mcp_servers))
        messages += file_problems + [p.message() for p in bad]
        settings, bad = decode_settings(self.overrides, base=settings)
        messages += [p.message() for p in bad]
        register_secret(settings.api_key)  # never in a log line
        new = [message for message in messages if message not in self._last_problems]
        self._last_problems = set(messages)
        return settings, new


def acp_layers(user_file: Path) -> SettingsLayers:
    """The sources of a `sidecar acp` session (and of `sidecar doctor --acp`): the user's file, no editor channel, and
    the workspace file always as untrusted — ACP has no way to ask the user whether to trust a repository."""
    layers = SettingsLayers(user_file)
    layers.workspace_trust = False
    return layers
