"""Session record types (a versioned msgspec tagged union) and the transcript entry of a message record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from sidecar.core.content_json import decode_content
from sidecar.core.history import Content
from sidecar.core.todos import TodoItem
from sidecar.core.transcript import display_text as display_text
from sidecar.core.transcript import title_of as title_of
from sidecar.core.transcript import tool_calls_from_meta, tool_calls_of
from sidecar.protocol.sessions import TranscriptMessage
from sidecar.protocol.types import UsageSource

#: 2 added the fork, pin, unpin and rename records (a format-1 reader would refuse them as damaged lines); 3 the
#: fileChange and filesRestored records of checkpoints (docs/checkpoints.md); 4 the mask record (masked tool
#: outputs), the compactionRating record (and a compaction's `edited` flag, which older readers ignore) and the todos
#: record (the model's todo list).
FORMAT_VERSION = 4

#: What a recorded message is: a model-facing kind (sent to the model) or a display-only one (info, error).
MessageKind = Literal["user", "model", "toolCall", "toolResult", "ideContext", "env", "info", "error"]
MODEL_FACING_KINDS: frozenset[MessageKind] = frozenset({"user", "model", "toolCall", "toolResult", "ideContext", "env"})
DISPLAY_KINDS: frozenset[MessageKind] = frozenset({"info", "error"})
MESSAGE_KINDS = MODEL_FACING_KINDS | DISPLAY_KINDS
_USER_SIDE_KINDS = frozenset({"user", "toolResult", "ideContext", "env"})

#: A compaction record's counts are local estimates.
COMPACTION_TOKEN_SOURCE: UsageSource = "estimate"
#: A compaction's summary message id (its acknowledgement is `<id>.ack`); see is_summary_id.
SUMMARY_SUFFIX = ".summary"


def is_summary_id(message_id: str) -> bool:
    """Whether a history message id is a compaction's <state_snapshot> summary."""
    return message_id.endswith(SUMMARY_SUFFIX)


# ---------------------------------------------------------------- records (one JSON line each)


class _Record(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, kw_only=True, gc=False):
    time: str  # ISO 8601 UTC, milliseconds, "Z"


class SessionRecord(_Record, tag="session"):
    """First line of every file: format version and who the session belongs to."""

    version: int
    session_id: str
    project_root: str
    project_id: str
    model: str
    title: str | None = None
    sidecar_version: str | None = None
    imported_from: dict[str, Any] | None = None


class MessageRecord(_Record, tag="message"):
    """One message. `content` None = display only (info, error, or a message kept only for the transcript)."""

    id: str
    kind: str
    content: Content | None = None
    text: str | None = None
    turn_id: str | None = None
    meta: dict[str, Any] | None = None


class RawMessageRecord(_Record, tag="message"):
    """A MessageRecord as read from a file: `content` is its JSON as recorded (empty Raw: none), which the replay
    checks is a Content and keeps undecoded, so a resumed history takes about the file's size, not 3-4 times it."""

    id: str
    kind: str
    content: msgspec.Raw = msgspec.Raw()
    text: str | None = None
    turn_id: str | None = None
    meta: dict[str, Any] | None = None


class UsageRecord(_Record, tag="usage"):
    prompt_token_count: int
    source: str
    message_id: str | None = None
    raw: dict[str, Any] | None = None
    #: After "Undo Last Compaction": no automatic compaction until the prompt reaches this count (or the user
    #: compresses). Written with the undo and with every count while the pause holds, so a resume keeps it.
    paused_until: int | None = None
    #: What the sidecar had estimated for the same request before sending it (its history, system instruction and
    #: tool declarations, with the reference's estimator), next to the API's count: `sidecar sessions stats` reads
    #: the pairs. Absent in recordings made before it existed, and for counts that are not a request's.
    estimated_token_count: int | None = None


class CompactionRecord(_Record, tag="compaction"):
    """One compaction attempt. COMPRESSED replaces the history; CONTENT_TRUNCATED only replaces contents."""

    id: str
    trigger: str
    status: str
    original_token_count: int
    new_token_count: int
    snapshot: str | None = None
    summary: Content | None = None
    ack: Content | None = None
    env: Content | None = None
    kept_from: str | None = None
    replacements: dict[str, Content] | None = None
    #: The user edited the summary before it was applied (a previewed compaction).
    edited: bool = False


class CompactionRatingRecord(_Record, tag="compactionRating"):
    """The user's rating of compaction `compaction_id`: "good", or "lost" (the summary lost something), with a
    note. A later rating of the same compaction replaces an earlier one."""

    compaction_id: str
    rating: str
    note: str | None = None


class UndoCompactionRecord(_Record, tag="undoCompaction"):
    compaction_id: str


class RewindRecord(_Record, tag="rewind"):
    """Drops message `to_id` and all after it from the model-facing history (the transcript keeps them)."""

    to_id: str


class ForkRecord(_Record, tag="fork"):
    """Second line of a branch: its history starts as the parent's, read through from the parent's file (no copy).

    `parent_size` is how many bytes of the parent's file the branch continues from (its records up to there);
    `parent_message_id` is the last message among them (a check, and what people read); `before_message_id`
    the user message the branch was cut before, when it was (forkSession's beforeMessageId).
    """

    parent_session_id: str
    parent_size: int
    parent_message_id: str | None = None
    before_message_id: str | None = None
    reason: str | None = None  # "fork" (asked for) or "locked" (the parent was open in another window)


class PinRecord(_Record, tag="pin"):
    """A fact the user pinned: given to the model verbatim with every request and kept by every compaction."""

    id: str
    text: str


class UnpinRecord(_Record, tag="unpin"):
    pin_id: str


class TodosRecord(_Record, tag="todos"):
    """The model's todo list as it is from here on (write_todos, or the user cleared it: no items)."""

    items: list[TodoItem] = []


class RenameRecord(_Record, tag="rename"):
    title: str


class FileChangeRecord(_Record, tag="fileChange"):
    """The agent changed file `path` (real, absolute) in the turn of user message `message_id`: a checkpoint.

    `before` / `after` are the sha256 of its content before and after the change (the saved blobs are in the
    project's checkpoint store, sidecar/checkpoints/store.py); None = the file did not exist then. `skipped` says
    why its content before was not saved (too large, binary, unreadable): a rewind then cannot put it back.
    """

    message_id: str
    path: str
    before: str | None = None
    after: str | None = None
    existed: bool = True  # the file existed before the change (`before` may still be None: skipped)
    tool: str | None = None
    skipped: str | None = None


class FilesRestoredRecord(_Record, tag="filesRestored"):
    """A rewind with restoreFiles put files back: path -> the sha256 of what it holds now (None: removed)."""

    to_id: str
    files: dict[str, str | None]


class MaskRecord(_Record, tag="mask"):
    """Old tool outputs masked before a request: message id -> the content the model sees from then on. The messages
    keep their full outputs in the file; a replay (resume, undo) applies these, so it shows what the model saw."""

    replacements: dict[str, Content]
    masked_count: int
    tokens_saved: int


class StatsRecord(_Record, tag="stats"):
    """Counters written at turn and compaction boundaries, so listing sessions reads only a file's tail."""

    message_count: int
    compaction_count: int
    title: str | None = None
    #: How many of `message_count` are the hidden <session_context> turn, which no count shown to a person includes
    #: (None: a file written before this was counted; listing replays it to find out).
    context_count: int | None = None


#: The `meta` key of a tool-result message: {call id: the title the call was shown with (its plan's description)}.
TOOL_TITLES = "toolTitles"
#: The meta key of a note recording a model switch (sidecar/setModel): a resumed session goes on with that model.
MODEL_SWITCH = "modelSwitch"


def switched_model(log: Sequence[object]) -> str | None:
    """The model the last recorded switch chose (None: the session never switched)."""
    for item in reversed(log):
        meta = getattr(item, "meta", None)
        if isinstance(meta, dict) and isinstance(meta.get(MODEL_SWITCH), str):
            return str(meta[MODEL_SWITCH])
    return None


def is_context_message(kind: str, content_json: bytes | None, text: str | None = None) -> bool:
    """Whether a recorded message is a <session_context> turn: an "env" message whose text opens with the tag, sent
    to the model (`content_json`) or, imported from another tool's session, shown only (`text`)."""
    if kind != "env":
        return False
    if content_json is not None:
        return b'"text":"<session_context>' in content_json[:200]
    return text is not None and text.lstrip().startswith("<session_context>")


Record = (
    SessionRecord
    | MessageRecord
    | UsageRecord
    | CompactionRecord
    | CompactionRatingRecord
    | UndoCompactionRecord
    | RewindRecord
    | StatsRecord
    | ForkRecord
    | PinRecord
    | UnpinRecord
    | TodosRecord
    | RenameRecord
    | FileChangeRecord
    | FilesRestoredRecord
    | MaskRecord
)


FileRecord = (
    SessionRecord
    | RawMessageRecord
    | UsageRecord
    | CompactionRecord
    | CompactionRatingRecord
    | UndoCompactionRecord
    | RewindRecord
    | StatsRecord
    | ForkRecord
    | PinRecord
    | UnpinRecord
    | TodosRecord
    | RenameRecord
    | FileChangeRecord
    | FilesRestoredRecord
    | MaskRecord
)  # what a file's lines are decoded as: Record, but messages keep their content's JSON


class Header(msgspec.Struct, rename="camel"):
    """The part of a first line read before anything else: is it a session, and which format version."""

    type: str = ""
    version: int = 0


def head_ids(compaction_id: str, with_env: bool) -> list[str]:
    """Stable ids of the contents a compaction puts in front of the kept tail: [env], summary, ack."""
    ids = [f"{compaction_id}{SUMMARY_SUFFIX}", f"{compaction_id}.ack"]
    return [f"{compaction_id}.env", *ids] if with_env else ids


# ---------------------------------------------------------------- contents kept as their JSON (see core.content_json)


class _Role(msgspec.Struct):
    role: str | None = None


_ROLE = msgspec.json.Decoder(_Role)


# ---------------------------------------------------------------- what editors see (its types: core.transcript)


class LastUsage(msgspec.Struct, rename="camel", frozen=True):
    prompt_token_count: int
    source: str
    paused_until: int | None = None


def transcript_message(rec: MessageRecord | RawMessageRecord) -> TranscriptMessage:
    """The transcript entry of a message record: display text, and who speaks (recorded JSON is decoded here)."""
    text, role = rec.text, None
    content = rec.content if isinstance(rec, MessageRecord) else None
    if isinstance(rec, RawMessageRecord) and rec.content:
        if text is None or rec.kind == "toolCall":
            content = decode_content(rec.content)
        else:
            role = _ROLE.decode(rec.content).role  # the display text wins: only the role is needed
    calls = None
    if content is not None:
        role = content.role
        text = display_text(content) if text is None else text
        calls = tool_calls_of(content) if rec.kind == "toolCall" else None
    elif rec.kind == "toolCall":
        calls = tool_calls_from_meta(rec.meta)
    speaker: Literal["user", "model"]
    if role in ("user", "model"):
        speaker = "user" if role == "user" else "model"
    else:
        speaker = "user" if rec.kind in _USER_SIDE_KINDS else "model"
    return TranscriptMessage(rec.id, rec.time, speaker, rec.kind, "" if text is None else text, rec.turn_id, calls)
