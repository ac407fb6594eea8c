"""Wire types of the session methods: new, list, resume, transcript, import, undo."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from sidecar.protocol.types import Status, Trigger, shown_as

MessageKind = Literal["user", "model", "toolCall", "toolResult", "ideContext", "env", "summary", "info", "error"]


class _Wire(msgspec.Struct, rename="camel", kw_only=True):
    """camelCase on the wire, every field always present."""


class NewSessionResult(_Wire):
    session_id: str


class SessionSummary(_Wire):
    """One entry of sidecar/listSessions (ISO 8601 times; the title is the first user message, shortened)."""

    session_id: str
    title: str | None
    start_time: str
    last_updated: str
    message_count: int
    compaction_count: int
    parent_session_id: str | None = None  # set for a branch (forkSession, or a resume while another window held it)


class ListSessionsPage(_Wire):
    """sidecar/listSessions with query, limit or cursor: one page, and the cursor of the next (None: no more)."""

    sessions: list[SessionSummary]
    next_cursor: str | None = None


class ResumeSessionResult(_Wire):
    session_id: str
    message_count: int
    #: The session was open in another window: `session_id` is a new branch of `parent_session_id`; `message` says so.
    forked: bool = False
    parent_session_id: str | None = None
    message: str | None = None


class ForkSessionResult(_Wire):
    session_id: str
    parent_session_id: str
    message_count: int


FileChange = Literal["modified", "created", "deleted"]


class FileProblem(_Wire):
    """A file a rewind left as it is: a conflict (changed since the agent's edit) or skipped (too large, binary,
    outside the workspace, protected, not saved); `reason` says which, in words."""

    path: str
    reason: str


class RewindResult(_Wire):
    message_count: int
    text: str  # the rewound message's text, for the input box
    message: str
    #: The four lists are empty without restoreFiles.
    #: With restoreFiles: files put back to their content before the message.
    restored: list[str]
    #: With restoreFiles: files the agent created from that message on, removed.
    removed: list[str]
    #: With restoreFiles: files changed since the agent's last edit, not overwritten (unless force).
    conflicts: list[FileProblem]
    #: With restoreFiles: files that could not be put back (too large or binary when saved, outside the workspace…).
    skipped: list[FileProblem]


class PreviewRewindResult(_Wire):
    """sidecar/previewRewind: what sidecar/rewind with restoreFiles would do now, without doing it (the same lists;
    `conflicts` are what force would overwrite)."""

    message_id: str
    text: str
    restored: list[str]
    removed: list[str]
    conflicts: list[FileProblem]
    skipped: list[FileProblem]
    message: str


class CheckpointFile(_Wire):
    """A file the agent changed in one turn, and how: "modified", "created" or "deleted" (against its content
    before the turn)."""

    path: str
    change: Annotated[str, shown_as(FileChange)]
    #: Its content before the turn was not saved (too large or binary): a rewind cannot put it back.
    skipped: str | None = None


class Checkpoint(_Wire):
    """One user message that can be rewound to (sidecar/listCheckpoints), with the files its turn changed."""

    message_id: str
    time: str
    first_words: str
    files: list[CheckpointFile]


class ListCheckpointsResult(_Wire):
    """The session's user messages that can be rewound to, oldest first; `checkpointing` is false when the setting
    is off (no file contents are being saved)."""

    session_id: str
    checkpoints: list[Checkpoint]
    checkpointing: bool


class RenameSessionResult(_Wire):
    session_id: str
    title: str


class DeleteSessionResult(_Wire):
    session_id: str
    message: str


class DeletedSession(_Wire):
    """One entry of sidecar/listDeletedSessions: a session in this project's trash (ISO 8601 times)."""

    session_id: str
    title: str | None
    deleted_at: str
    last_updated: str
    message_count: int
    parent_session_id: str | None = None


class ListDeletedSessionsResult(_Wire):
    """This project's deleted sessions that can still be restored, most recently deleted first."""

    sessions: list[DeletedSession]
    keep_days: int


class RestoreSessionResult(_Wire):
    """A session brought back from the trash (listed again, not resumed)."""

    session_id: str
    title: str | None
    message: str


class PinResult(_Wire, omit_defaults=True):
    pin_id: str
    warning: str | None = None  # recording is off: the pin holds for this process only


class UnpinResult(_Wire):
    pin_id: str
    removed: bool


class PinnedFact(_Wire):
    pin_id: str
    text: str


class ListPinsResult(_Wire):
    pins: list[PinnedFact]


TodoStatus = Literal["pending", "in_progress", "completed", "cancelled"]


class TodoItem(_Wire):
    """One item of the model's todo list (write_todos): what to do and how far it is."""

    description: str
    status: TodoStatus


class TodosChangedParams(_Wire):
    """The live session's todo list, whole, each time it changes (write_todos, a clear, resume, fork, rewind, new)."""

    session_id: str
    items: list[TodoItem]


class GetTodosResult(_Wire):
    items: list[TodoItem]


class ClearTodosResult(_Wire):
    cleared: int  # how many items the list had


class ImportSessionResult(_Wire):
    """What an import produced; `sidecar import --json` prints the same fields and the file's path."""

    session_id: str
    message_count: int
    warnings: list[str]


class TranscriptToolCall(msgspec.Struct, rename="camel", omit_defaults=True):
    """A tool call of a model message, as data: editors title its card with `name`, never with the text."""

    name: str
    args: Any = None
    id: str | None = None
    #: The title the live call was shown with (its plan's description, e.g. "Read notes.txt"); absent in sessions
    #: recorded before titles were kept, and for calls never planned.
    title: str | None = None


class TranscriptMessage(msgspec.Struct, tag="message", tag_field="type", rename="camel", omit_defaults=True, gc=False):
    id: str
    time: str
    role: Literal["user", "model"]
    kind: Annotated[str, shown_as(MessageKind)]
    text: str
    turn_id: str | None = None
    tool_calls: list[TranscriptToolCall] | None = None
    #: Dropped from the model's history by sidecar/rewind (kept here so that nothing said is lost).
    rewound: bool = False
    #: Its tool outputs were masked before a later request: the model saw previews, the full outputs are saved.
    masked: bool = False


class TranscriptCompaction(msgspec.Struct, tag="compaction", tag_field="type", rename="camel", omit_defaults=True):
    id: str
    time: str
    trigger: Trigger
    status: Status
    original_token_count: int
    new_token_count: int
    undone: bool
    snapshot: str | None = None  # the <state_snapshot> text of a COMPRESSED compaction
    #: The user edited the summary before it was applied (a previewed compaction).
    edited: bool = False
    #: The user's latest rating of this compaction ("good" or "lost") and its note.
    rating: str | None = None
    rating_note: str | None = None


class TranscriptFork(msgspec.Struct, tag="fork", tag_field="type", rename="camel", omit_defaults=True):
    """Where a branch starts: the entries before it are the parent's, read through from the parent's file."""

    id: str
    time: str
    parent_session_id: str
    parent_message_id: str | None = None
    before_message_id: str | None = None
    reason: str | None = None  # "fork" (asked for) or "locked" (the parent was open in another window)


TranscriptEntry = TranscriptMessage | TranscriptCompaction | TranscriptFork


class GetTranscriptResult(_Wire):
    session_id: str
    entries: list[TranscriptEntry]


class UndoCompactionResult(_Wire):
    restored: bool
    message: str
