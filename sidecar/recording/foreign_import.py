"""Sessions from other agents (Claude Code, Codex) as sidecar sessions: a history builder, the writer, format
detection and the search for candidate files of a project."""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from sidecar.config.settings import DEFAULT_MODEL
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part
from sidecar.core.recording import MessageRecord, Record, display_text
from sidecar.recording.store import RecordingError, SessionStore

NO_RESULT = "No result was recorded for this tool call in the imported session."


@dataclass
class ImportResult:
    session_id: str
    path: Path
    messages: int  # the conversation's messages written (the environment text is context, not counted)
    history_length: int  # model-facing contents
    warnings: list[str]


@dataclass
class ForeignSession:
    """What a reader found: the records, the title, the original session's metadata."""

    tool: str
    records: list[Record]
    message_count: int
    history_length: int
    start_time: str
    imported_from: dict[str, Any]
    title: str | None = None
    warnings: list[str] = field(default_factory=list)


def obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


class HistoryBuilder:
    """Turns a stream of user text, model text, tool calls and tool results into valid model-facing contents: a
    model turn's text and calls are one content, every call is answered (in call order) in the user content that
    follows it, and a call left without a result gets one saying so."""

    def __init__(self, start_time: str) -> None:
        self.records: list[Record] = []
        self.message_count = 0
        self.history_length = 0
        self.warnings: list[str] = []
        self.time = start_time
        self._model: MessageRecord | None = None  # the open model content
        self._pending: list[FunctionCall] = []
        self._results: dict[str, Part] = {}
        self._extra: list[Part] = []  # text about calls we do not have (kept as text), sent after the results

    def _add(self, kind: str, content: Content | None, text: str | None, meta: dict[str, Any] | None) -> MessageRecord:
        self.message_count += 1
        record = MessageRecord(
            time=self.time, id=f"m{self.message_count}", kind=kind, content=content, text=text, meta=meta
        )
        self.records.append(record)
        self.history_length += content is not None
        return record

    def _close(self) -> None:
        """Answer the open model content's calls (missing results say so) and close it."""
        if self._pending:
            parts = []
            for call in self._pending:
                part = self._results.pop(call.id or "", None)
                if part is None:
                    self.warnings.append(f"Tool call {call.name!r} had no recorded result; an error result was added.")
                    part = Part(
                        function_response=FunctionResponse(name=call.name, id=call.id, response={"error": NO_RESULT})
                    )
                parts.append(part)
            self._add("toolResult", Content(role="user", parts=parts), None, None)
        self._pending = []
        self._model = None
        if self._extra:
            self._add("toolResult", Content(role="user", parts=self._extra), None, None)
            self._extra = []

    def user(self, text: str, meta: dict[str, Any] | None = None, extra: list[Part] | None = None) -> None:
        """The user's own message (empty text: nothing is sent)."""
        self._close()
        parts = ([Part(text=text)] if text.strip() else []) + (extra or [])
        if parts:
            self._add("user", Content(role="user", parts=parts), None, meta)

    def display(self, kind: str, text: str, meta: dict[str, Any] | None = None) -> None:
        """A message for the transcript only (environment context, a command, an info or error line)."""
        self._add(kind, None, text, meta)

    def _open(self, meta: dict[str, Any] | None) -> MessageRecord:
        if self._extra or (self._model is not None and self._pending and self._all_answered()):
            self._close()
        if self._model is None:
            self._close()
            self._model = self._add("model", Content(role="model", parts=[]), None, meta)
        return self._model

    def _all_answered(self) -> bool:
        return all((c.id or "") in self._results for c in self._pending)

    def model_text(self, text: str, meta: dict[str, Any] | None = None) -> None:
        if not text.strip():
            return
        if self._pending:  # text after calls is the next model turn: the calls are answered first
            self._close()
        record = self._open(meta)
        assert record.content is not None
        record.content.parts.append(Part(text=text))

    def call_as_text(self, text: str, meta: dict[str, Any] | None = None) -> None:
        """A call of a tool the sidecar does not have, kept as text in the same model turn (before its calls)."""
        if self._pending and self._all_answered():
            self._close()
        record = self._open(meta)
        assert record.content is not None
        parts = record.content.parts
        first_call = next((i for i, p in enumerate(parts) if p.function_call is not None), len(parts))
        parts.insert(first_call, Part(text=text))

    def call(self, name: str, args: dict[str, Any], call_id: str, meta: dict[str, Any] | None = None) -> None:
        if self._pending and self._all_answered():
            self._close()
        record = self._open(meta)
        assert record.content is not None
        fc = FunctionCall(name=name, args=args, id=call_id)
        record.content.parts.append(Part(function_call=fc))
        record.kind = "toolCall"
        tool_calls = (record.meta or {}).get("toolCalls", [])
        record.meta = {**(record.meta or {}), "toolCalls": [*tool_calls, {"id": call_id, "name": name}]}
        self._pending.append(fc)

    def result(self, call_id: str, response: dict[str, Any]) -> bool:
        """A tool call's result; False when no open call has this id (the caller keeps it as text)."""
        call = next((c for c in self._pending if c.id == call_id), None)
        if call is None:
            return False
        self._results[call_id] = Part(function_response=FunctionResponse(name=call.name, id=call_id, response=response))
        return True

    def text_result(self, text: str) -> None:
        """A result of a call kept as text: sent with the next user content after the calls' results."""
        self._extra.append(Part(text=text))

    def finish(self) -> None:
        self._close()


def write_session(found: ForeignSession, store: SessionStore, path: Path, model: str | None) -> ImportResult:
    """Write `found` as a new session of `store`: it can be resumed and continued."""
    session_id = str(uuid.uuid4())
    writer = store.create(
        session_id,
        model=model or DEFAULT_MODEL,
        title=found.title,
        start_time=found.start_time,
        imported_from={"tool": found.tool, "path": os.path.abspath(path), **found.imported_from},
    )
    if writer.disabled:
        raise RecordingError(writer.problem or "Session recording is off.")
    for record in found.records:
        writer.append(record)
    writer.close()
    if writer.problem is not None:
        raise RecordingError(writer.problem)
    # the count the user is told, as `sessions list` shows it: the environment text is context, not a message
    shown = writer.message_count - writer.context_count
    return ImportResult(session_id, writer.path, shown, found.history_length, found.warnings)


def first_text(found: ForeignSession) -> str:
    for record in found.records:
        if isinstance(record, MessageRecord) and record.kind == "user" and record.content is not None:
            return display_text(record.content)
    return ""


# ---------------------------------------------------------------- which format, which files


def detect_format(path: Path) -> str:
    """`gemini`, `claude` or `codex`, from the file's first records."""
    if path.suffix == ".json":
        return "gemini"
    try:
        with path.open("rb") as f:
            head = [line for line in (f.readline() for _ in range(5)) if line.strip()]
    except OSError as exc:
        raise RecordingError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    for line in head:
        try:
            record = msgspec.json.decode(line)
        except msgspec.DecodeError:
            continue
        if not isinstance(record, dict):
            continue
        if record.get("type") in ("session_meta", "response_item", "turn_context", "event_msg") or (
            "instructions" in record and "id" in record and "sessionId" not in record
        ):
            return "codex"
        if (
            "parentUuid" in record
            or record.get("type") in ("summary", "file-history-snapshot")
            or (isinstance(record.get("message"), dict) and "sessionId" in record)
        ):
            return "claude"
    return "gemini"


def claude_project_dir(root: str) -> str:
    """Claude Code's folder name for a project: the path with every other character than letters and digits as '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", root)


@dataclass
class Candidate:
    tool: str
    path: Path
    modified: float


def candidates(root: str, home: Path) -> list[Candidate]:
    """Session files of other agents recorded for the project `root`, newest first."""
    found: list[Candidate] = []
    gemini_hash = hashlib.sha256(root.encode()).hexdigest()
    for chats in sorted((home / ".gemini" / "tmp").glob("*/chats")):
        for f in chats.iterdir():
            if f.suffix in (".json", ".jsonl") and (chats.parent.name == gemini_hash or _mentions(f, gemini_hash)):
                found.append(Candidate("gemini-cli", f, _mtime(f)))
    claude = home / ".claude" / "projects" / claude_project_dir(root)
    if claude.is_dir():
        found += [Candidate("claude-code", f, _mtime(f)) for f in claude.glob("*.jsonl")]
    codex = home / ".codex" / "sessions"
    if codex.is_dir():
        for f in codex.rglob("rollout-*.jsonl"):
            if _codex_cwd(f) == root:
                found.append(Candidate("codex", f, _mtime(f)))
    return sorted(found, key=lambda c: c.modified, reverse=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _mentions(path: Path, text: str) -> bool:
    try:
        with path.open("rb") as f:
            return text.encode() in f.read(4096)
    except OSError:
        return False


def _codex_cwd(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            record = msgspec.json.decode(f.readline())
    except (OSError, msgspec.DecodeError):
        return None
    payload = record.get("payload") if isinstance(record, dict) else None
    meta = payload if isinstance(payload, dict) else record if isinstance(record, dict) else {}
    cwd = meta.get("cwd")
    return cwd if isinstance(cwd, str) else None
