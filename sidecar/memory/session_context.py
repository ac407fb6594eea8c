"""The <session_context> turn that opens every session: date, OS, workspace folders, folder tree, project memory."""

from __future__ import annotations

import asyncio
import importlib
import logging
import platform
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Literal

from sidecar.core.conversation import Conversation
from sidecar.core.history import Content, text_content
from sidecar.core.memory_text import is_session_context, session_context_text
from sidecar.core.tokens import text_quarters
from sidecar.core.visible_text import visible_name
from sidecar.memory.service import MemoryService
from sidecar.session import Session

log = logging.getLogger(__name__)

#: Why a session context is built (SessionStart hooks' `source`).
Source = Literal["new", "resume", "compact"]
#: SessionStart hooks: given the source, the extra context strings they add (helper "hooks" supplies it).
SessionStartHook = Callable[[Source], Awaitable[list[str]]]

MAX_TREE_ENTRIES = 200


def folder_tree(root: Path) -> str:
    """The folder tree of one workspace folder (sidecar.core.folder_tree, from the hooks work of issue 27);
    "" until that module exists in this tree."""
    try:
        module = importlib.import_module("sidecar.core.folder_tree")
    except ImportError:
        return ""
    try:
        return str(module.folder_tree(root, max_entries=MAX_TREE_ENTRIES))
    except OSError as exc:
        return f'Error: Could not read directory "{visible_name(str(root))}": {exc.strerror or exc}'


def _today() -> str:
    return datetime.now().strftime("%A, %B %d, %Y")


class SessionContext:
    """Builds the session context and keeps one, current, at the head of the live conversation."""

    def __init__(
        self,
        session: Session,
        memory: MemoryService,
        session_start: SessionStartHook | None = None,
        tree: Callable[[Path], str] = folder_tree,
    ) -> None:
        self._session = session
        self.memory = memory
        self._session_start = session_start
        self._tree = tree
        self._last_tokens = 0
        self._last_version = -1

    def _static_text(self, extra: list[str]) -> str:
        folders = list(self._session.workspace_folders)
        shown = [visible_name(f) for f in folders]  # a folder's name may hold a newline or a tag, like a file's
        trees: list[str] = []
        if self._session.settings.include_directory_tree:
            trees = [self._tree(Path(f)) for f in folders]
        return session_context_text(
            date=_today(),
            os_name=platform.system().lower(),
            folders=shown,
            trees=trees,
            project_memory=self.memory.project_section(),
            extra=extra,
        )

    async def text(self, source: Source) -> str:
        """The session context as of now (the memory loaded first; SessionStart hooks asked for extra context)."""
        await self.memory.ensure_loaded()
        extra: list[str] = []
        if self._session_start is not None:
            try:
                extra = await self._session_start(source)
            except Exception:
                log.exception("SessionStart hooks failed; the session context goes without their context")
        text = await asyncio.to_thread(self._static_text, extra)
        self._last_tokens, self._last_version = text_quarters(text) // 4, self.memory.version
        return text

    async def turn(self, source: Source) -> Content:
        """The session context as a user turn (what a compaction puts at the head of the new history)."""
        text = await self.text(source)
        self.memory.forget_changes()  # it carries the files as they are now
        return text_content("user", text)

    def estimated_tokens(self, conv: Conversation) -> int:
        """Tokens the next request adds for a session context `conv` does not hold yet (the last one built's size;
        0 when `conv` already has its fresh one)."""
        if conv.session_context_fresh:
            return 0
        if not self._last_tokens or self._last_version != self.memory.version:
            self._last_tokens, self._last_version = text_quarters(self._static_text([])) // 4, self.memory.version
        return self._last_tokens

    async def ensure(self, conv: Conversation, record: Callable[[Content], str] | None = None) -> str | None:
        """Put a fresh session context at the head of `conv` unless it has one already (a new, resumed, forked,
        rewound or undone history gets one at its first turn). Returns the text when one was put there.

        `record` records it (kind `env`; returns the message id) when it opens an empty history, so that the
        recording holds what the model saw; one put in place of a resumed history's older one is not recorded
        (the recording keeps the one its session started with, as every compaction record keeps its own)."""
        if conv.session_context_fresh:
            return None
        has_one = len(conv) > 0 and is_session_context(conv.first_text())
        source: Source = "new" if len(conv) == 0 else "resume"
        text = await self.text(source)
        content = text_content("user", text)
        msg_id = record(content) if record is not None and len(conv) == 0 else ""
        conv.put_first(content, replace=has_one, msg_id=msg_id)
        conv.session_context_fresh = True
        self.memory.forget_changes()  # the fresh context carries the files as they are now
        return text
