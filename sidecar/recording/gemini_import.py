"""Import a Gemini CLI session file (legacy .json, or .jsonl with $set / $rewindTo) as a new session."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from sidecar.config.settings import DEFAULT_MODEL
from sidecar.core.history import Content, Part
from sidecar.core.recording import MessageRecord, Record, UsageRecord, display_text
from sidecar.core.words import counted, plural
from sidecar.recording.reader import now_iso
from sidecar.recording.store import RecordingError, SessionStore

_SKIPPED_PREFIXES = ("/", "?")
_CONTEXT_PREFIXES = ("<session_context>", "<hook_context>")
_TOOL_CALL_KEYS = ("id", "name", "status", "displayName", "description")
_MISSING_RESULT = "No result was recorded for this tool call in the imported Gemini CLI session."


class GeminiImportError(RecordingError):
    """The file is not a Gemini CLI session this importer understands."""


@dataclass
class GeminiSession:
    """A Gemini CLI session replayed the way Gemini CLI loads it."""

    metadata: dict[str, Any]
    messages: list[dict[str, Any]]  # what Gemini CLI would resume from
    superseded: list[dict[str, Any]]  # seen in the file, later dropped by a $set.messages checkpoint or $rewindTo
    format: str
    warnings: list[str] = field(default_factory=list)


@dataclass
class ImportResult:
    session_id: str
    path: Path
    messages: int  # the conversation's messages written (the environment text is context, not counted)
    history_length: int  # model-facing contents
    warnings: list[str]


# ---------------------------------------------------------------- reading Gemini CLI files


def _object(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def read_gemini_session(path: Path) -> GeminiSession:
    """Read a legacy .json ConversationRecord or a .jsonl append log (metadata, messages, $set, $rewindTo)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GeminiImportError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    try:
        whole = _object(msgspec.json.decode(data))
    except msgspec.DecodeError:
        whole = None
    if whole is not None and isinstance(whole.get("messages"), list):
        messages = [m for m in whole["messages"] if isinstance(m, dict)]
        meta = {k: v for k, v in whole.items() if k != "messages"}
        session = GeminiSession(meta, messages, [], "json")
    else:
        session = _read_jsonl(data)
    if not isinstance(session.metadata.get("sessionId"), str):
        raise GeminiImportError(f"{path} is not a Gemini CLI session file (no sessionId found).")
    return session


def _read_jsonl(data: bytes) -> GeminiSession:
    meta: dict[str, Any] = {}
    latest: dict[str, dict[str, Any]] = {}  # id -> last version, in first-seen order
    current: dict[str, None] = {}  # ids in the live list, in Gemini CLI's Map order
    warnings: list[str] = []
    bad = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            record = _object(msgspec.json.decode(line))
        except msgspec.DecodeError:
            record = None
        if record is None:
            bad += 1
            continue
        if isinstance(record.get("$rewindTo"), str):
            ids = list(current)
            target = record["$rewindTo"]
            keep = ids[: ids.index(target)] if target in current else []
            current = dict.fromkeys(keep)
        elif isinstance(record.get("id"), str):
            latest[record["id"]] = record
            current.setdefault(record["id"], None)
        elif isinstance(record.get("$set"), dict):
            update = dict(record["$set"])
            checkpoint = update.pop("messages", None)
            meta.update(update)
            if isinstance(checkpoint, list):
                current = {}
                for message in checkpoint:
                    if isinstance(message, dict) and isinstance(message.get("id"), str):
                        latest[message["id"]] = message
                        current[message["id"]] = None
        elif isinstance(record.get("sessionId"), str):
            meta.update(record)
    if bad:
        warnings.append(
            f"{counted(bad, 'unreadable line')} in the Gemini CLI file {plural(bad, 'was', 'were')} ignored "
            "(as Gemini CLI does)."
        )
    messages = [latest[i] for i in current]
    superseded = [m for i, m in latest.items() if i not in current]
    return GeminiSession(meta, messages, superseded, "jsonl", warnings)


# ---------------------------------------------------------------- converting to sidecar records


def _parts(value: Any) -> list[Part]:
    """PartListUnion (a string, a part, or a list of both) as Parts; empty text parts (outside thoughts) are
    dropped, as Gemini CLI's history curation drops them: the API refuses them."""
    items = value if isinstance(value, list) else [] if value is None else [value]
    raw = [{"text": item} if isinstance(item, str) else item for item in items]
    parts = msgspec.convert([r for r in raw if isinstance(r, dict)], list[Part])
    return [p for p in parts if not _empty(p)]


def _empty(part: Part) -> bool:
    """A part that carries nothing the API accepts: no data, or only an empty text outside a thought."""
    data = (
        part.function_call,
        part.function_response,
        part.inline_data,
        part.file_data,
        part.executable_code,
        part.code_execution_result,
    )
    return all(d is None for d in data) and not part.text and not (part.thought and part.text is not None)


def _text(value: Any) -> str:
    return display_text(Content(parts=_parts(value)))


class _Converter:
    def __init__(self, fallback_time: str) -> None:
        self.records: list[Record] = []
        self.history_length = 0
        self.message_count = 0
        self.warnings: list[str] = []
        self.first_user: str | None = None
        self.model: str | None = None
        self._time = fallback_time
        #: The last model message sent to the model with no calls, while nothing else was sent after it: a
        #: following model message continues the same turn (Gemini CLI records text, then a message with calls).
        self._open_model: MessageRecord | None = None

    def _message(self, kind: str, content: Content | None, text: str | None, meta: dict[str, Any]) -> str:
        self.message_count += 1
        message_id = f"m{self.message_count}"
        self.records.append(
            MessageRecord(time=self._time, id=message_id, kind=kind, content=content, text=text, meta=meta)
        )
        self.history_length += content is not None
        if content is not None:
            last = self.records[-1]
            self._open_model = last if kind == "model" and isinstance(last, MessageRecord) else None
        return message_id

    def marker(self) -> None:
        text = "Gemini CLI compacted or rewound the messages above; the conversation continues from here."
        self._message("info", None, text, {"gemini": {"marker": "superseded"}})

    def add(self, message: dict[str, Any], *, live: bool) -> None:
        """One Gemini CLI message; `live` False = only for the transcript (it was compacted or rewound)."""
        kind_in, content = message.get("type"), message.get("content")
        if isinstance(message.get("timestamp"), str):
            self._time = message["timestamp"]
        meta: dict[str, Any] = {"gemini": {"id": message.get("id"), "type": kind_in}}
        if not live:
            meta["gemini"]["superseded"] = True
        if kind_in == "user":
            text = _text(message.get("displayContent") or content)
            stripped = text.strip()
            if stripped.startswith(_CONTEXT_PREFIXES):
                self._message("env", None, text, meta)
            elif stripped.startswith(_SKIPPED_PREFIXES) or not live or not stripped:
                self._message("user", None, text, meta)
            else:
                self.first_user = self.first_user or text
                self._message("user", Content(role="user", parts=_parts(content)), None, meta)
        elif kind_in in ("info", "warning", "error"):
            meta["gemini"]["level"] = kind_in
            self._message("error" if kind_in == "error" else "info", None, _text(content), meta)
        elif kind_in == "gemini":
            self._gemini(message, meta, live)
        else:
            self.warnings.append(f"Skipped a message of unknown type {kind_in!r}.")

    def _gemini(self, message: dict[str, Any], meta: dict[str, Any], live: bool) -> None:
        for key in ("model", "tokens", "thoughts"):
            if message.get(key) is not None:
                meta["gemini"][key] = message[key]
        if isinstance(message.get("model"), str):
            self.model = message["model"]
        parts = _parts(message.get("content"))
        calls = [c for c in message.get("toolCalls") or [] if isinstance(c, dict)]
        known = {p.function_call.id for p in parts if p.function_call is not None and p.function_call.id}
        for call in calls:
            if call.get("id") is None or call.get("id") not in known:
                parts.append(_call_part(call))
        if not parts:
            return
        model = Content(role="model", parts=parts)
        if calls:
            meta["toolCalls"] = [{k: c[k] for k in _TOOL_CALL_KEYS if k in c} for c in calls]
        kind = "toolCall" if calls else "model"
        if not live:
            results = [part for call in calls for part in self._result_parts(call, live=False)]
            self._message(kind, None, display_text(Content(parts=parts + results)), meta)
            return
        opened = self._open_model
        if opened is not None and opened.content is not None:
            # One model turn recorded as two messages: one content, text first, then the calls (the API refuses a
            # call turn right after a model turn). The merged message keeps both Gemini CLI ids.
            opened.content.parts.extend(parts)
            merged = dict(opened.meta or {})
            gemini = dict(merged.get("gemini") or {})
            gemini["mergedIds"] = [*gemini.get("mergedIds", []), message.get("id")]
            merged["gemini"] = gemini
            if calls:
                merged["toolCalls"] = [*merged.get("toolCalls", []), *meta["toolCalls"]]
                opened.kind = "toolCall"
            opened.meta = merged
            message_id = opened.id
            self._open_model = opened if not calls else None
        else:
            message_id = self._message(kind, model, None, meta)
        tokens = message.get("tokens")
        if isinstance(tokens, dict) and isinstance(tokens.get("input"), int):
            self.records.append(
                UsageRecord(
                    time=self._time,
                    prompt_token_count=tokens["input"],
                    source="api",
                    message_id=message_id,
                    raw=tokens,
                )
            )
        if calls:
            responses = [part for call in calls for part in self._result_parts(call)]
            self._message(
                "toolResult",
                Content(role="user", parts=responses),
                None,
                {"gemini": {"id": message.get("id"), "type": "toolResults"}},
            )

    def _result_parts(self, call: dict[str, Any], *, live: bool = True) -> Iterator[Part]:
        """The call's recorded result as parts; a result without a functionResponse (missing, `[]`) gets one
        saying no result was recorded, so every call is answered in the turn that follows it."""
        result = call.get("result")
        parts = _parts(result) if isinstance(result, list) else _parts([result]) if isinstance(result, dict) else []
        if isinstance(result, str):
            yield _response_part(call, result)
        elif any(p.function_response is not None for p in parts):
            yield from parts
        else:
            if live:
                self.warnings.append(
                    f"Tool call {call.get('name')!r} had no recorded result; an error result was added."
                )
                yield _response_part(call, None)
            yield from parts


def _call_part(call: dict[str, Any]) -> Part:
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
    return msgspec.convert({"functionCall": {"name": call.get("name"), "args": args, "id": call.get("id")}}, Part)


def _response_part(call: dict[str, Any], output: str | None) -> Part:
    response = {"output": output} if output is not None else {"error": _MISSING_RESULT}
    return msgspec.convert(
        {"functionResponse": {"name": call.get("name"), "id": call.get("id"), "response": response}}, Part
    )


def convert_gemini_session(session: GeminiSession) -> tuple[list[Record], _Converter]:
    """Our message and usage records: superseded messages first (display only), then the resumable ones."""
    converter = _Converter(str(session.metadata.get("startTime") or now_iso()))
    for message in session.superseded:
        converter.add(message, live=False)
    if session.superseded:
        converter.marker()
    for message in session.messages:
        converter.add(message, live=True)
    return converter.records, converter


def import_gemini_session(path: Path, store: SessionStore, *, model: str | None = None) -> ImportResult:
    """Write a new session in `store` from a Gemini CLI session file; it can be resumed and continued."""
    session = read_gemini_session(path)
    records, converter = convert_gemini_session(session)
    meta = session.metadata
    project_hash = meta.get("projectHash")
    warnings = session.warnings + converter.warnings
    if isinstance(project_hash, str) and project_hash != hashlib.sha256(store.project_root.encode()).hexdigest():
        warnings.append(
            f"The Gemini CLI session was recorded for another project root; it is imported into {store.project_root}."
        )
    session_id = str(uuid.uuid4())
    summary = meta.get("summary") if isinstance(meta.get("summary"), str) else None
    writer = store.create(
        session_id,
        model=model or converter.model or DEFAULT_MODEL,
        title=summary,
        start_time=str(meta.get("startTime") or now_iso()),
        imported_from={
            "tool": "gemini-cli",
            "format": session.format,
            "path": os.path.abspath(path),
            **{k: meta[k] for k in ("sessionId", "projectHash", "startTime", "lastUpdated") if k in meta},
        },
    )
    if writer.disabled:
        raise RecordingError(writer.problem or "Session recording is off.")
    for record in records:
        writer.append(record)
    writer.close()
    if writer.problem is not None:
        raise RecordingError(writer.problem)
    # the count the user is told, as `sessions list` shows it: the environment text is context, not a message
    shown = writer.message_count - writer.context_count
    return ImportResult(session_id, writer.path, shown, converter.history_length, warnings)
