"""Branching and tidying the live session: fork, rewind, and pinned facts (sidecar/forkSession, rewind, pin…)."""

from __future__ import annotations

from sidecar.chat.live import LiveConversation
from sidecar.chat.sessions import conversation_of
from sidecar.checkpoints.service import CheckpointService, FilesOutcome, rewind_point
from sidecar.core.local_time import local_minute
from sidecar.core.pins import Pin, check_pin_text
from sidecar.core.recording import RewindRecord
from sidecar.core.words import counted
from sidecar.protocol import errors, methods
from sidecar.protocol.sessions import (
    ClearTodosResult,
    ForkSessionResult,
    GetTodosResult,
    ListPinsResult,
    PinnedFact,
    PinResult,
    RewindResult,
    TranscriptMessage,
    UnpinResult,
)
from sidecar.recording.branches import Cut, locate, turn_start
from sidecar.recording.reader import loaded_session, now_iso
from sidecar.recording.store import LoadedSession, RecordingError
from sidecar.tools.paths import ToolError


class SessionActions:
    """Fork, rewind and pins; each history change goes through LiveConversation.switch (full IDE context next)."""

    def __init__(self, live: LiveConversation, checkpoints: CheckpointService | None = None) -> None:
        self.live = live
        #: Puts back the files the agent changed, for a rewind with restoreFiles (docs/checkpoints.md).
        self.checkpoints = checkpoints or CheckpointService(
            live.session, live.recorder, turn=lambda: live.turn_message_id
        )

    # -- fork ---------------------------------------------------------------------------------------
    async def fork(self, session_id: str | None, before_message_id: str | None) -> ForkSessionResult:
        """A new live session whose history is the given one's (default: the live one) up to, not including,
        `before_message_id` (default: all of it). The parent is not touched."""
        live, recorder = self.live, self.live.recorder
        async with live.lock:
            source = session_id or live.conversation.session_id
            try:
                cut = self._cut(source, before_message_id)
                loaded = recorder.branch(cut, reason="fork", before=before_message_id)
            except (RecordingError, ValueError) as exc:
                raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot fork session {source}: {exc}") from None
            live.switch(conversation_of(loaded))
            if loaded.last_usage is None:
                live.fresh_estimate("fork")
        live.push_usage()
        return ForkSessionResult(
            session_id=loaded.session_id,
            parent_session_id=cut.session_id,
            message_count=live.conversation.messages_shown(),
        )

    def _cut(self, source: str, before: str | None) -> Cut:
        recorder = self.live.recorder
        is_live = source == self.live.conversation.session_id
        if is_live:
            cut = recorder.live_cut()  # syncs the live file, so it holds everything said so far
        if before is None:
            if is_live:
                return cut
            loaded = recorder.store.load(source)
            return Cut(source, loaded.valid_size, loaded.last_message_id)
        entries = recorder.store.load(source, salvage=True).transcript
        first, _entry = turn_start(entries, before)
        return locate(recorder.store.directory, source, first)

    # -- rewind -------------------------------------------------------------------------------------
    async def rewind(self, message_id: str, *, restore_files: bool = False, force: bool = False) -> RewindResult:
        """Drop a user message of the live session and everything after it from the model's history; with
        `restore_files`, then put back the files the agent changed since (conflicts left as they are unless
        `force`)."""
        live, recorder = self.live, self.live.recorder
        async with live.lock:
            try:
                loaded, first, entry = rewind_point(recorder, message_id)
                plan = await self.checkpoints.plan(loaded, message_id, force=force) if restore_files else None
                after = _rewound(loaded, first)
            except (RecordingError, ValueError, ToolError) as exc:
                raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot rewind to {message_id}: {exc}") from None
            before = len(live.conversation)
            recorder.rewind(first, after.undoable)
            if recorder.problem:
                raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot rewind: {recorder.problem}")
            live.switch(conversation_of(after))
            live.fresh_estimate("rewind")  # a count recorded after the cut belongs to a request that is gone
            dropped = before - len(live.conversation)
            files = await self.checkpoints.restore(plan, message_id) if plan is not None else FilesOutcome()
        live.push_usage()
        untouched = "Files the agent changed were not touched."
        return RewindResult(
            message_count=live.conversation.messages_shown(),
            text=entry.text,
            message=(
                f"Rewound to before your message {_named(entry)}: {counted(max(dropped, 0), 'history item')} "
                "the model will no longer see (the transcript keeps them, marked as rewound). "
                + (files.sentence(done=True) if plan is not None else untouched)
            ),
            restored=files.restored,
            removed=files.removed,
            conflicts=files.conflicts,
            skipped=files.skipped,
        )

    # -- pins ---------------------------------------------------------------------------------------
    def pin(self, text: str) -> PinResult:
        """Pin a fact: every request carries it verbatim and every compaction keeps it."""
        problem = check_pin_text(text)
        if problem is not None:
            raise errors.invalid_params(methods.PIN.name, problem)
        recorder, conv = self.live.recorder, self.live.conversation
        pin_id = recorder.pin(text)
        conv.set_pins([*conv.pins, Pin(pin_id, text)])
        self.live.pins_changed()
        return PinResult(pin_id=pin_id, warning=recorder.problem or None)

    def unpin(self, pin_id: str) -> UnpinResult:
        """Remove a pinned fact of the live session (a clear error naming the known ones otherwise)."""
        conv = self.live.conversation
        if all(p.id != pin_id for p in conv.pins):
            known = ", ".join(p.id for p in conv.pins) or "none"
            raise errors.SidecarError(
                errors.SESSION_ERROR, f"No pinned fact {pin_id!r} in this session (pinned: {known})."
            )
        self.live.recorder.unpin(pin_id)
        conv.set_pins([p for p in conv.pins if p.id != pin_id])
        self.live.pins_changed()
        return UnpinResult(pin_id=pin_id, removed=True)

    # -- the model's todo list -----------------------------------------------------------------------
    def todos(self) -> GetTodosResult:
        """The model's todo list of the live session."""
        return GetTodosResult(items=list(self.live.conversation.todos))

    def clear_todos(self) -> ClearTodosResult:
        """The user clears the model's todo list (recorded; the model no longer gets it)."""
        conv = self.live.conversation
        count = len(conv.todos)
        if count:
            self.live.set_todos([])
        return ClearTodosResult(cleared=count)

    def list_pins(self) -> ListPinsResult:
        """The live session's pinned facts, oldest first."""
        return ListPinsResult(pins=[PinnedFact(pin_id=p.id, text=p.text) for p in self.live.conversation.pins])


def _rewound(loaded: LoadedSession, first: str) -> LoadedSession:
    """The session as it will be after the rewind record (applied to this replay only; ValueError if it does not
    fit)."""
    from sidecar.core.replay import ReplayError

    replay = loaded.replay
    if replay is None:
        raise ValueError("the session could not be replayed")
    try:
        replay.apply(RewindRecord(time=now_iso(), to_id=first))
    except ReplayError as exc:
        raise ValueError(str(exc)) from None
    return loaded_session(loaded.path, replay, [], loaded.valid_size, False)


def _named(entry: TranscriptMessage) -> str:
    """A user message as people know it: its first words and when it was sent (never its id)."""
    words = " ".join(entry.text.split())
    if len(words) > 60:
        cut = words.rfind(" ", 0, 60)
        words = words[: cut if cut > 30 else 60] + "\u2026"
    when = local_minute(entry.time)
    return f"\u201c{words}\u201d (sent {when})" if when else f"\u201c{words}\u201d"
