"""The mask record: a replay shows the masked contents, marks the transcript, survives an undo; a bad one is refused."""

from __future__ import annotations

import msgspec
import pytest

from sidecar.core.history import Content, FunctionResponse, Part, text_content
from sidecar.core.recording import MaskRecord, MessageRecord, Record, UndoCompactionRecord
from sidecar.core.replay import Replay, ReplayError
from sidecar.protocol.sessions import TranscriptMessage
from tests.unit.core.test_recording_core import DECODER, T, compress, msg, session


def result(mid: str, output: str) -> MessageRecord:
    part = Part(function_response=FunctionResponse(name="read_file", id=mid, response={"output": output}))
    return MessageRecord(time=T, id=mid, kind="toolResult", content=Content(role="user", parts=[part]))


MASKED = text_content("user", "<tool_output_masked>preview</tool_output_masked>")


def replay(*records: Record) -> Replay:
    r = Replay()
    for record in (session(), *records):
        r.apply(record)
    return r


def test_a_mask_record_round_trips_and_replaces_the_content_the_model_sees() -> None:
    mask = MaskRecord(time=T, replacements={"m2": MASKED}, masked_count=1, tokens_saved=120)
    assert DECODER.decode(msgspec.json.encode(mask)) == mask
    r = replay(msg("m1", "user", "read it"), result("m2", "x" * 500), mask, msg("m3", "model", "done"))
    assert r.history[1] == MASKED and r.history_ids == ["m1", "m2", "m3"]
    marked = {e.id: e.masked for e in r.transcript if isinstance(e, TranscriptMessage)}
    assert marked == {"m1": False, "m2": True, "m3": False}


def test_undo_of_a_compaction_brings_back_the_items_masked_before_it() -> None:
    r = replay(
        msg("m1", "user", "read it"),
        result("m2", "x" * 500),
        MaskRecord(time=T, replacements={"m2": MASKED}, masked_count=1, tokens_saved=120),
        msg("m3", "model", "done"),
        compress("c1", "m3"),
        UndoCompactionRecord(time=T, compaction_id="c1"),
    )
    assert r.history_ids == ["m1", "m2", "m3"] and r.history[1] == MASKED


def test_a_mask_of_a_message_not_in_the_history_is_refused_in_words() -> None:
    r = replay(msg("m1", "user", "hi"))
    with pytest.raises(ReplayError, match="a masking replaces 'm9', which is not in the history"):
        r.apply(MaskRecord(time=T, replacements={"m9": MASKED}, masked_count=1, tokens_saved=1))
    assert r.history_ids == ["m1"]
