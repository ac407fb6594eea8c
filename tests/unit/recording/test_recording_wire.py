"""Resumed histories kept as their recorded JSON: bytes as written, checked on reading, decoded only on demand."""

from __future__ import annotations

import functools
import json
import operator
import types
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sidecar.core.content_json import MIRRORS, check_content
from sidecar.core.history import Blob, Content, FileData, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.recording import (
    FileRecord,
    MessageRecord,
    RawMessageRecord,
    Record,
    SessionRecord,
    transcript_message,
)
from sidecar.core.replay import Replay
from sidecar.protocol.sessions import TranscriptMessage
from sidecar.recording.store import CorruptSession, LoadedSession, SessionStore

EMOJI = "fix the parser \U0001f41b then ship \U0001f680"
CALL = Content(role="model", parts=[Part(function_call=FunctionCall(name="read_file", args={"path": "a.py"}, id="c1"))])
OUTPUT = "x = 1 ✅\n" * 300
RESPONSE = FunctionResponse(name="read_file", id="c1", response={"output": OUTPUT})
RESULT = Content(role="user", parts=[Part(function_response=RESPONSE)])
ODD = Content(
    role="user",
    parts=[
        Part(text="look", thought_signature="sig"),
        Part(inline_data=Blob(mime_type="image/png", data="iVBORw0K")),
        Part(file_data=FileData(file_uri="gs://b/f.txt")),
        Part(text="hidden", thought=True),
    ],
)
_RAW_MESSAGE = msgspec.json.Decoder(RawMessageRecord)

SESSION_LINE = msgspec.json.encode(
    SessionRecord(time="t", version=1, session_id="s", project_root="/p", project_id="p", model="m")
)


def message_line(mid: str, kind: str, content: Any) -> bytes:
    return msgspec.json.encode({"type": "message", "time": "t", "id": mid, "kind": kind, "content": content})


def load_records(*lines: bytes) -> list[FileRecord]:
    return msgspec.json.Decoder(FileRecord).decode_lines(b"\n".join(lines) + b"\n")


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore("/work/project", home=tmp_path / "home")


def write_session(store: SessionStore) -> list[Content]:
    """A session with every kind of content, a typed-text override, a display-only message and a compaction."""
    writer = store.create("s1", model="m")
    writer.message(text_content("user", EMOJI), kind="user", turn_id="t1")
    writer.message(CALL, kind="toolCall", turn_id="t1", meta={"status": "success"})
    writer.message(RESULT, kind="toolResult", turn_id="t1")
    writer.message(None, kind="error", text="Gemini API: 500 \U0001f525")
    writer.message(text_content("model", "done \U0001f600"), kind="model", turn_id="t1")
    writer.message(text_content("user", "<ide_context>big</ide_context>"), kind="ideContext", text="typed \u26a0\ufe0f")
    writer.message(ODD, kind="user", turn_id="t2")
    summary = text_content("user", "<state_snapshot>s \U0001f9ea</state_snapshot>")
    ack = text_content("model", "Got it.")
    short = text_content("user", "Output too large. \U0001f4a1")
    writer.compaction(
        trigger="manual",
        status="COMPRESSED",
        original_tokens=900,
        new_tokens=100,
        snapshot="s",
        summary=summary,
        ack=ack,
        kept_from="m3",
        replacements={"m3": short},
        compaction_id="c1",
    )
    writer.message(text_content("model", "after \U0001f680"), kind="model", turn_id="t2")
    writer.close()
    kept = [text_content("model", "done \U0001f600"), text_content("user", "<ide_context>big</ide_context>"), ODD]
    return [summary, ack, short, *kept, text_content("model", "after \U0001f680")]


def recorded_contents(path: Path) -> dict[str, bytes]:
    """Each message's content JSON, sliced from its line as written."""
    out = {}
    for line in path.read_bytes().splitlines():
        if json.loads(line)["type"] == "message":
            rec = _RAW_MESSAGE.decode(line)
            if rec.content:
                out[rec.id] = bytes(rec.content)
    return out


def test_the_history_is_the_recorded_json_as_bytes(store: SessionStore) -> None:
    write_session(store)
    loaded = store.load("s1")
    recorded = recorded_contents(loaded.path)
    assert loaded.history_ids == ["c1.summary", "c1.ack", "m3", "m5", "m6", "m7", "m8"]
    assert all(type(item) is bytes for item in loaded.history_wire)
    for mid, item in zip(loaded.history_ids[3:], loaded.history_wire[3:], strict=True):
        assert item == recorded[mid]  # the very slice of the file, not a re-encoding
    assert loaded.history_wire[:3] == [msgspec.json.encode(c) for c in loaded.history[:3]]


def test_a_resumed_history_decodes_to_what_was_written(store: SessionStore) -> None:
    expected = write_session(store)
    loaded = store.load("s1")
    assert loaded.history == expected
    assert loaded.history[0].parts[0].text == "<state_snapshot>s \U0001f9ea</state_snapshot>"
    assert loaded.message_count == 8 and loaded.title == EMOJI


def test_transcript_texts_and_roles_are_those_of_the_decoded_records(store: SessionStore) -> None:
    write_session(store)
    loaded = store.load("s1")
    decoder = msgspec.json.Decoder(Record)
    lines = loaded.path.read_bytes().splitlines()
    from_structs = [transcript_message(r) for r in map(decoder.decode, lines) if isinstance(r, MessageRecord)]
    messages = [e for e in loaded.transcript if isinstance(e, TranscriptMessage)]
    assert messages == from_structs
    assert messages[0].text == EMOJI and messages[1].text == '→ read_file({"path":"a.py"})'
    assert messages[2].text == "← read_file: " + OUTPUT[:199] + "…" and messages[2].role == "user"
    assert messages[5].text == "typed \u26a0\ufe0f" and messages[5].role == "user"  # the typed text wins
    assert messages[6].text == "look\n[attachment image/png]\n[file gs://b/f.txt]"


def test_a_replay_keeps_no_decoded_contents(store: SessionStore) -> None:
    write_session(store)
    loaded = store.load("s1")
    assert loaded.replay is not None
    kept = [r.content for r in loaded.replay.log if isinstance(r, RawMessageRecord)]
    assert all(isinstance(c, msgspec.Raw) for c in kept)  # JSON only, sharing the history's bytes
    assert sum(map(len, kept)) == sum(map(len, recorded_contents(loaded.path).values()))


def test_in_memory_records_replay_to_their_encoding() -> None:
    replay = Replay()
    for record in load_records(SESSION_LINE, message_line("m1", "user", text_content("user", EMOJI))):
        replay.apply(record)
    replay.apply(MessageRecord(time="t", id="m2", kind="toolResult", content=RESULT))
    assert replay.wire == [msgspec.json.encode(text_content("user", EMOJI)), msgspec.json.encode(RESULT)]
    assert replay.history == [text_content("user", EMOJI), RESULT]


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ({"role": "user", "parts": [{"text": 5}]}, "Expected `str | null`, got `int` - at `$.content.parts[0].text`"),
        (7, "Expected `object | null`, got `int` - at `$.content`"),
        ({"parts": {"text": "x"}}, "Expected `array`, got `object` - at `$.content.parts`"),
        ({"parts": [{"functionCall": {"args": [1]}}]}, "got `array` - at `$.content.parts[0].functionCall.args`"),
        ({"parts": [{"functionResponse": {"parts": [3]}}]}, "at `$.content.parts[0].functionResponse.parts[0]`"),
        ({"parts": [{"thought": "yes"}]}, "Expected `bool | null`, got `str` - at `$.content.parts[0].thought`"),
    ],
)
def test_a_wrong_typed_content_is_refused_naming_the_line_and_field(
    store: SessionStore, content: Any, where: str
) -> None:
    expected = write_session(store)
    path = store.path("s1")
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(3, message_line("m99", "user", content) + b"\n")
    path.write_bytes(b"".join(lines))
    with pytest.raises(CorruptSession, match="damaged at line 4: ") as info:
        store.load("s1")
    assert info.value.line == 4 and where in info.value.reason
    salvaged = store.load("s1", salvage=True)  # the slow path, by line, also closes the file's mapping cleanly
    [warning] = salvaged.warnings
    assert "line 4 was skipped" in warning and where in warning
    assert "m99" not in salvaged.history_ids and salvaged.history == expected


def test_a_last_line_without_newline_and_a_wrong_typed_content_is_skipped_as_torn(store: SessionStore) -> None:
    expected = write_session(store)
    path = store.path("s1")
    path.write_bytes(path.read_bytes() + message_line("m99", "user", {"parts": [{"text": 1}]}))
    loaded = store.load("s1")
    assert len(loaded.warnings) == 1 and "incomplete" in loaded.warnings[0]
    assert loaded.history == expected and not loaded.needs_newline


def test_null_content_is_display_only(store: SessionStore) -> None:
    store.create("s1", model="m").close()
    path = store.path("s1")
    with path.open("ab") as f:
        f.write(message_line("m1", "user", text_content("user", "hi")) + b"\n")
        f.write(message_line("m2", "info", None) + b"\n")
    loaded = store.load("s1")
    assert loaded.history_ids == ["m1"] and [e.id for e in loaded.transcript] == ["m1", "m2"]


def test_loading_releases_the_mapped_file(store: SessionStore) -> None:
    """A Raw viewing the mapping would make closing it raise BufferError: every path must leave none behind."""
    write_session(store)
    path = store.path("s1")
    good = path.read_bytes()
    lines = good.splitlines(keepends=True)
    variants = {
        "whole": good,
        "torn": good + b'{"type":"message","id":"m9","content":{"parts":[',
        "no newline": good.rstrip(b"\n"),
        "bad content": b"".join([*lines[:4], message_line("m9", "user", 1) + b"\n", *lines[4:]]),
        "bad json": b"".join([*lines[:4], b'{"type": oops\n', *lines[4:]]),
    }
    for name, data in variants.items():
        path.write_bytes(data)
        loaded = store.load("s1", salvage=True)  # raises BufferError if a view of the mapping survived
        assert isinstance(loaded, LoadedSession), name
        assert all(type(item) is bytes for item in loaded.history_wire), name


# ---------------------------------------------------------------- the check accepts exactly what Content does


def _mirrored(tp: Any) -> Any:
    if tp is Any:
        return msgspec.Raw
    if tp in MIRRORS:
        return MIRRORS[tp]
    args = typing.get_args(tp)
    if not args:
        return tp
    mapped = tuple(_mirrored(a) for a in args)
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        return functools.reduce(operator.or_, mapped)
    return typing.get_origin(tp)[mapped]


@pytest.mark.parametrize("original", list(MIRRORS), ids=lambda t: t.__name__)
def test_the_check_types_mirror_the_history_types(original: type[msgspec.Struct]) -> None:
    mirror = MIRRORS[original]
    assert mirror.__struct_fields__ == original.__struct_fields__
    assert mirror.__struct_encode_fields__ == original.__struct_encode_fields__
    assert len(mirror.__struct_defaults__) == len(original.__struct_defaults__)  # nothing newly required
    hints = typing.get_type_hints(original)
    assert typing.get_type_hints(mirror) == {name: _mirrored(tp) for name, tp in hints.items()}
    assert original.__struct_config__.forbid_unknown_fields == mirror.__struct_config__.forbid_unknown_fields


@pytest.mark.parametrize(
    "item",
    [
        {"role": "user", "parts": [{"text": "a"}]},
        {},
        {"parts": [{"functionResponse": {"response": [1, "x", None], "willContinue": True, "parts": [{"a": 1}]}}]},
        {"parts": [{"functionCall": {"args": {"k": {"deep": [1.5]}}}, "mediaResolution": {"level": 1}}]},
        {"parts": [{"executableCode": {"code": "x"}, "unknownField": 3}]},
        {"role": 1},
        {"parts": [{"functionCall": {"args": "no"}}]},
        {"parts": [{"inlineData": {"data": 5}}]},
        {"parts": [{"videoMetadata": []}]},
        [],
        "text",
        None,
    ],
)
def test_the_check_agrees_with_decoding(item: Any) -> None:
    data = msgspec.json.encode(item)
    try:
        decoded = msgspec.json.decode(data, type=Content | None)
    except msgspec.ValidationError as exc:
        with pytest.raises(msgspec.ValidationError) as info:
            check_content(data)
        text = str(exc)
        named = text.replace("at `$", "at `$.content") if "at `$" in text else f"{text} - at `$.content`"
        assert str(info.value) == named
    else:
        assert check_content(data) is (decoded is not None)
