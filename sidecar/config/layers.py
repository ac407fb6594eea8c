"""Which settings win: defaults < initializationOptions < didChangeConfiguration < the workspace settings file."""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.config.mcp_servers import merge_servers
from sidecar.config.settings import Hooks, Settings, concat_hooks, decode_settings
from sidecar.config.workspace_file import read_workspace_settings
from sidecar.logging_setup import register_secret


class SettingsLayers:
    """The raw settings sources as the editor sent them, layered into one Settings on demand."""

    def __init__(self) -> None:
        #: The `initializationOptions` of `initialize`.
        self.init_options: Any = None
        #: The `settings` of the latest `workspace/didChangeConfiguration`.
        self.config_section: Any = None
        #: The hooks of the workspace file as last resolved (none when it is not trusted): the tail of each event's
        #: list in the resolved settings, which runs only once the user approved it (sidecar/hooks/approval.py).
        self.workspace_hooks = Hooks()
        self._last_problems: set[str] = set()

    def resolve(self, workspace_folders: list[str], trusted: bool) -> tuple[Settings, list[str]]:
        """The settings, and the problems not reported by the previous call (each is told once until it goes away).

        The workspace file is read from disk each time; its hooks count only in a trusted workspace."""
        settings, problems = decode_settings(self.init_options)
        settings, more = decode_settings(self.config_section, base=settings)
        section, file_problems = read_workspace_settings(workspace_folders, trusted)
        user_servers, user_hooks = settings.mcp_servers, settings.hooks
        settings, from_file = decode_settings(section, base=settings)
        # A workspace file adds servers and hooks; it never replaces the user's.
        self.workspace_hooks = settings.hooks if settings.hooks is not user_hooks else Hooks()
        settings = msgspec.structs.replace(
            settings,
            mcp_servers=merge_servers(user_servers, settings.mcp_servers),
            hooks=concat_hooks(user_hooks, self.workspace_hooks),
        )
        register_secret(settings.api_key)
        messages = [p.message() for p in [*problems, *more, *from_file]] + file_problems
        new = [message for message in messages if message not in self._last_problems]
        self._last_problems = set(messages)
        return settings, new
