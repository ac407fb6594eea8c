"""The one object holding a running sidecar's mutable state: settings, folders, trust, conversation, editor state."""

from __future__ import annotations

import hashlib
import os
import sys
import uuid
from dataclasses import dataclass, field

from sidecar.config.layers import SettingsLayers
from sidecar.config.settings import Settings
from sidecar.core.compaction import tool_output_threshold
from sidecar.core.conversation import Conversation
from sidecar.protocol.ide import OpenFile


def new_session_id() -> str:
    """A fresh session id (a UUID)."""
    return str(uuid.uuid4())


@dataclass
class IdeState:
    """What the editor last reported, and what the model last saw of it."""

    current: list[OpenFile] | None = None
    last_sent: list[OpenFile] | None = None
    trusted: bool | None = None
    #: Files the agent read or edited in this session (real paths).
    tracked: set[str] = field(default_factory=set)
    #: Tracked files changed on disk outside the editor since the last context turn.
    changed_on_disk: set[str] = field(default_factory=set)
    #: A tracked file's content as the model last knew it (a digest; None: absent): the agent's own write, seen by
    #: the watcher a moment later, is no change to report.
    known: dict[str, str | None] = field(default_factory=dict)

    def track(self, path: str) -> None:
        """The agent read or edited `path` (a real path): a later change on disk is reported; this content is known."""
        self.tracked.add(path)
        self.known[path] = _digest(path)

    def note_changes(self, paths: set[str]) -> None:
        """The watcher saw `paths` change: tracked files not open in the editor whose content differs from what the
        model knows are reported in the next context turn (and are then what it knows)."""
        open_paths = {f.path for f in self.current or []}
        for path in paths:
            if path not in self.tracked or path in open_paths:
                continue
            now = _digest(path)
            if now != self.known.get(path):
                self.known[path] = now
                self.changed_on_disk.add(path)


def _digest(path: str) -> str | None:
    """A file's content digest, None when it cannot be read (gone, a folder, no permission)."""
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "blake2b").hexdigest()
    except OSError:
        return None


@dataclass
class Session:
    """Everything that changes while the sidecar runs. Services are handed this object and read what they need
    when they need it; the server is the only one that replaces the settings or the workspace folders."""

    settings: Settings = field(default_factory=Settings)
    workspace_folders: list[str] = field(default_factory=list)
    conversation: Conversation = field(default_factory=lambda: Conversation(new_session_id()))
    ide: IdeState = field(default_factory=IdeState)
    #: Tool names / allow keys the user answered "allow always" for.
    always_allowed: set[str] = field(default_factory=set)
    #: Where the settings come from (initializationOptions, didChangeConfiguration, the workspace file).
    sources: SettingsLayers = field(default_factory=SettingsLayers)

    @property
    def project_root(self) -> str:
        """The first workspace folder (where sessions are recorded), else the current directory."""
        return self.workspace_folders[0] if self.workspace_folders else os.getcwd()

    def folders(self) -> list[str]:
        """The workspace folders (for services that take them as a callable, e.g. the tool registry)."""
        return self.workspace_folders

    @property
    def trusted(self) -> bool:
        """Tools may do what a trusted workspace allows unless the editor said the workspace is not trusted."""
        return self.ide.trusted is not False

    def switch(self, conversation: Conversation) -> None:
        """Replace the conversation wholesale (new, resume, undo): the next turn sends the full IDE context."""
        self.conversation = conversation  # a new Conversation starts with force_full_ide_context set
        self.ide.last_sent = None

    def tool_output_threshold(self) -> int:
        """Tool outputs longer than this many characters are saved to a file and shortened for the model
        (min(4 x tokens left, truncateToolOutputThreshold); a setting of 0 or less turns it off)."""
        configured = self.settings.truncate_tool_output_threshold
        if configured <= 0:
            return sys.maxsize
        return tool_output_threshold(
            self.settings.effective_token_limit(), self.conversation.last_prompt_tokens, configured
        )

    def reload_settings(self) -> list[str]:
        """Apply every settings source again; returns the problems not reported before (each is told once)."""
        self.settings, problems = self.sources.resolve(self.workspace_folders, self.ide.trusted is True)
        return problems
