"""Pure record format and replay: round trips, compaction chains, undo, rewind, usage hydration, transcript."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.recording import (
    FORMAT_VERSION,
    CompactionRecord,
    LastUsage,
    MessageRecord,
    Record,
    RewindRecord,
    SessionRecord,
    StatsRecord,
    UndoCompactionRecord,
    UsageRecord,
    display_text,
    head_ids,
)
from sidecar.core.replay import Replay, ReplayError
from sidecar.protocol.sessions import TranscriptCompaction, TranscriptMessage

T = "2026-08-21T10:00:00.000Z"
DECODER = msgspec.json.Decoder(Record)


def session() -> SessionRecord:
    return SessionRecord(time=T, version=FORMAT_VERSION, session_id="s", project_root="/p", project_id="p-1", model="m")


def msg(mid: str, role: str, text: str, kind: str | None = None, **extra: Any) -> MessageRecord:
    return MessageRecord(time=T, id=mid, kind=kind or role, content=text_content(role, text), **extra)  # type: ignore[arg-type]


def compress(cid: str, kept_from: str | None, *, env: bool = False, **extra: Any) -> CompactionRecord:
    return CompactionRecord(
        time=T,
        id=cid,
        trigger="manual",
        status="COMPRESSED",
        original_token_count=1000,
        new_token_count=100,
        snapshot=f"<state_snapshot>{cid}</state_snapshot>",
        summary=text_content("user", f"summary {cid}"),
        ack=text_content("model", "Got it. Thanks for the additional context!"),
        env=text_content("user", "<session_context>env</session_context>") if env else None,
        kept_from=kept_from,
        **extra,
    )


def replay(*records: Record) -> Replay:
    r = Replay()
    for record in (session(), *records):
        r.apply(record)
    return r


def texts(r: Replay) -> list[str]:
    return [display_text(c) for c in r.history]


TOOL_CALL = Content(role="model", parts=[Part(function_call=FunctionCall(name="read_file", args={"path": "a.py"}))])
TOOL_RESULT = Content(
    role="user", parts=[Part(function_response=FunctionResponse(name="read_file", response={"output": "x" * 500}))]
)

ALL_RECORDS: list[Record] = [
    session(),
    msg("m1", "user", "hi", turn_id="t1", meta={"any": [1, {"x": None}]}),
    MessageRecord(time=T, id="m2", kind="toolCall", content=TOOL_CALL, meta={"tokens": {"input": 5}}),
    MessageRecord(time=T, id="m3", kind="toolResult", content=TOOL_RESULT),
    MessageRecord(time=T, id="m4", kind="error", text="Gemini API: 500"),
    UsageRecord(time=T, prompt_token_count=42, source="api", message_id="m2", raw={"promptTokenCount": 42}),
    compress("c1", "m1", env=True, replacements={"m3": text_content("user", "truncated")}),
    CompactionRecord(time=T, id="c2", trigger="auto", status="NOOP", original_token_count=5, new_token_count=5),
    UndoCompactionRecord(time=T, compaction_id="c1"),
    RewindRecord(time=T, to_id="m3"),
    StatsRecord(time=T, message_count=4, compaction_count=1, title="hi"),
]


@pytest.mark.parametrize("record", ALL_RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_kind_round_trips(record: Record) -> None:
    line = msgspec.json.encode(record)
    assert b"\n" not in line
    assert DECODER.decode(line) == record
    assert msgspec.json.decode(line)["type"] == record.__struct_config__.tag


def test_wire_names_are_camel_case_and_defaults_omitted() -> None:
    wire = msgspec.json.decode(msgspec.json.encode(ALL_RECORDS[1]))
    assert wire == {
        "type": "message",
        "time": T,
        "id": "m1",
        "kind": "user",
        "turnId": "t1",
        "content": {"role": "user", "parts": [{"text": "hi"}]},
        "meta": {"any": [1, {"x": None}]},
    }
    assert msgspec.json.decode(msgspec.json.encode(session()))["version"] == FORMAT_VERSION


def test_the_whole_log_replays_consistently() -> None:
    r = replay(*ALL_RECORDS[1:])
    assert r.history_ids == ["m1", "m2"]  # undo restored m1..m3 and the rewind dropped m3
    assert r.message_count == 4 and r.compaction_count == 1 and r.title == "hi"
    assert [e.undone for e in r.transcript if isinstance(e, TranscriptCompaction)] == [True, False]


def test_chat_compaction_more_chat() -> None:
    r = replay(
        msg("m1", "user", "one"),
        msg("m2", "model", "1"),
        msg("m3", "user", "two"),
        msg("m4", "model", "2"),
        compress("c1", "m3", env=True),
        msg("m5", "user", "three"),
        msg("m6", "model", "3"),
    )
    assert r.history_ids == [*head_ids("c1", True), "m3", "m4", "m5", "m6"]
    assert texts(r) == [
        "<session_context>env</session_context>",
        "summary c1",
        "Got it. Thanks for the additional context!",
        "two",
        "2",
        "three",
        "3",
    ]
    assert r.undoable == ["c1"]


def test_compaction_keeping_nothing() -> None:
    r = replay(msg("m1", "user", "one"), msg("m2", "model", "1"), compress("c1", None))
    assert r.history_ids == ["c1.summary", "c1.ack"]


def test_chain_may_keep_from_the_previous_summary() -> None:
    r = replay(
        msg("m1", "user", "one"),
        msg("m2", "model", "1"),
        compress("c1", None, env=True),
        msg("m3", "user", "two"),
        msg("m4", "model", "2"),
        compress("c2", "c1.summary", env=True),
        msg("m5", "user", "three"),
        compress("c3", "m5"),
    )
    assert r.history_ids == ["c3.summary", "c3.ack", "m5"]
    r2 = replay(
        msg("m1", "user", "one"),
        msg("m2", "model", "1"),
        compress("c1", None, env=True),
        msg("m3", "user", "two"),
        compress("c2", "c1.summary"),
    )
    assert r2.history_ids == ["c2.summary", "c2.ack", "c1.summary", "c1.ack", "m3"]
    assert r2.compaction_count == 2


def test_kept_messages_keep_their_records_and_replacements_apply() -> None:
    r = replay(
        msg("m1", "user", "old"),
        MessageRecord(time=T, id="m2", kind="toolCall", content=TOOL_CALL),
        MessageRecord(time=T, id="m3", kind="toolResult", content=TOOL_RESULT),
        msg("m4", "model", "done"),
        msg("m5", "user", "next"),
        MessageRecord(time=T, id="m6", kind="toolCall", content=TOOL_CALL),
        MessageRecord(time=T, id="m7", kind="toolResult", content=TOOL_RESULT),
        compress("c1", "m5", replacements={"m7": text_content("user", "cut")}),
    )
    assert r.history_ids == ["c1.summary", "c1.ack", "m5", "m6", "m7"]
    assert r.history[3] is TOOL_CALL or r.history[3] == TOOL_CALL
    assert display_text(r.history[4]) == "cut"


def test_content_truncated_replaces_only() -> None:
    truncated = CompactionRecord(
        time=T,
        id="c1",
        trigger="auto",
        status="CONTENT_TRUNCATED",
        original_token_count=900,
        new_token_count=400,
        replacements={"m2": text_content("user", "short")},
    )
    r = replay(
        msg("m1", "user", "a"), MessageRecord(time=T, id="m2", kind="toolResult", content=TOOL_RESULT), truncated
    )
    assert r.history_ids == ["m1", "m2"] and texts(r) == ["a", "short"]
    assert r.compaction_count == 0 and r.undoable == ["c1"]
    assert r.last_usage == LastUsage(400, "estimate")


@pytest.mark.parametrize(
    "status", ["NOOP", "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT", "COMPRESSION_FAILED_EMPTY_SUMMARY", "SOMETHING_NEW"]
)
def test_failed_attempts_change_nothing_but_show(status: str) -> None:
    failed = CompactionRecord(
        time=T, id="c1", trigger="auto", status=status, original_token_count=10, new_token_count=20
    )
    r = replay(msg("m1", "user", "a"), UsageRecord(time=T, prompt_token_count=10, source="api"), failed)
    assert r.history_ids == ["m1"] and r.undoable == []
    assert r.last_usage == LastUsage(10, "api")
    assert msgspec.to_builtins(r.transcript[-1]) == {
        "type": "compaction",
        "id": "c1",
        "time": T,
        "trigger": "auto",
        "status": status,
        "originalTokenCount": 10,
        "newTokenCount": 20,
        "undone": False,
    }


def test_undo_restores_the_history_before_the_latest_compaction() -> None:
    before = [msg("m1", "user", "one"), msg("m2", "model", "1"), msg("m3", "user", "two"), msg("m4", "model", "2")]
    r = replay(
        *before,
        UsageRecord(time=T, prompt_token_count=777, source="api"),
        compress("c1", "m3"),
        UndoCompactionRecord(time=T, compaction_id="c1"),
    )
    assert r.history_ids == ["m1", "m2", "m3", "m4"] and r.undoable == []
    assert r.last_usage == LastUsage(777, "api")


def test_undo_keeps_messages_added_after_the_compaction() -> None:
    r = replay(
        msg("m1", "user", "one"),
        msg("m2", "model", "1"),
        msg("m3", "user", "two"),
        compress("c1", "m3"),
        msg("m4", "model", "2"),
        msg("m5", "user", "three"),
        UndoCompactionRecord(time=T, compaction_id="c1"),
    )
    assert r.history_ids == ["m1", "m2", "m3", "m4", "m5"]


def test_undo_chain_and_reversal_of_replacements() -> None:
    r = replay(
        msg("m1", "user", "one"),
        MessageRecord(time=T, id="m2", kind="toolResult", content=TOOL_RESULT),
        compress("c1", "m2", replacements={"m2": text_content("user", "cut")}),
        msg("m3", "user", "two"),
        compress("c2", "m3"),
    )
    assert r.undoable == ["c1", "c2"]
    r.apply(UndoCompactionRecord(time=T, compaction_id="c2"))
    assert r.history_ids == ["c1.summary", "c1.ack", "m2", "m3"] and texts(r)[2] == "cut"
    r.apply(UndoCompactionRecord(time=T, compaction_id="c1"))
    assert r.history_ids == ["m1", "m2", "m3"] and r.history[1] == TOOL_RESULT


def test_only_the_latest_compaction_can_be_undone() -> None:
    r = replay(msg("m1", "user", "one"), compress("c1", "m1"), msg("m2", "user", "two"), compress("c2", "m2"))
    with pytest.raises(ReplayError, match="latest undoable one is c2"):
        r.apply(UndoCompactionRecord(time=T, compaction_id="c1"))
    assert r.history_ids == ["c2.summary", "c2.ack", "m2"]  # unchanged


def test_inconsistent_records_are_refused_without_changing_state() -> None:
    r = replay(msg("m1", "user", "one"))
    cases: list[tuple[Record, str]] = [
        (compress("c1", "nope"), "keeps from 'nope'"),
        (compress("c1", "m1", replacements={"zz": text_content("user", "x")}), "replaces 'zz'"),
        (RewindRecord(time=T, to_id="zz"), "rewind to 'zz'"),
        (session(), "second session record"),
    ]
    for bad, text in cases:
        with pytest.raises(ReplayError, match=text):
            r.apply(bad)
        assert r.history_ids == ["m1"] and len(r.transcript) == 1
    with pytest.raises(ReplayError, match="session record first"):
        Replay().apply(msg("m1", "user", "x"))


def test_usage_hydration() -> None:
    r = replay(msg("m1", "user", "one"), UsageRecord(time=T, prompt_token_count=50, source="api"))
    assert r.last_usage == LastUsage(50, "api")
    r.apply(msg("m2", "model", "1"))  # an append keeps the last recorded usage
    assert r.last_usage == LastUsage(50, "api")
    r.apply(compress("c1", None))
    assert r.last_usage == LastUsage(100, "estimate")  # the compaction's new token count
    r.apply(UsageRecord(time=T, prompt_token_count=130, source="api"))
    assert r.last_usage == LastUsage(130, "api")
    assert replay(msg("m1", "user", "x")).last_usage is None


def test_rewind_drops_from_history_not_from_transcript() -> None:
    r = replay(
        msg("m1", "user", "one"),
        msg("m2", "model", "1"),
        UsageRecord(time=T, prompt_token_count=50, source="api"),
        msg("m3", "user", "two"),
        RewindRecord(time=T, to_id="m3"),
    )
    assert r.history_ids == ["m1", "m2"] and len(r.transcript) == 3
    assert r.last_usage == LastUsage(50, "api")  # recorded before the dropped message
    r.apply(RewindRecord(time=T, to_id="m2"))
    assert r.last_usage is None


def test_transcript_entries() -> None:
    r = replay(
        msg("m1", "user", "hello\nworld", turn_id="t1"),
        MessageRecord(time=T, id="m2", kind="toolCall", content=TOOL_CALL),
        MessageRecord(time=T, id="m3", kind="toolResult", content=TOOL_RESULT),
        MessageRecord(time=T, id="m4", kind="info", text="Compressing…"),
        MessageRecord(time=T, id="m5", kind="user", content=text_content("user", "<ctx>"), text="typed"),
    )
    wire = msgspec.to_builtins(r.transcript)
    assert wire[0] == {
        "type": "message",
        "id": "m1",
        "time": T,
        "role": "user",
        "kind": "user",
        "text": "hello\nworld",
        "turnId": "t1",
    }
    assert wire[1]["text"] == '→ read_file({"path":"a.py"})' and wire[1]["role"] == "model"
    assert wire[2]["text"].startswith("← read_file: xxx") and len(wire[2]["text"]) < 220
    assert wire[3] == {
        "type": "message",
        "id": "m4",
        "time": T,
        "role": "model",
        "kind": "info",
        "text": "Compressing…",
    }
    assert wire[4]["text"] == "typed"  # the display text wins over the model-facing content
    assert r.history_ids == ["m1", "m2", "m3", "m5"]
    assert r.title == "hello"
    decoded = msgspec.convert(wire, list[TranscriptMessage | TranscriptCompaction])
    assert decoded == r.transcript
