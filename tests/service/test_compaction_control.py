"""Summarise up to a message, preview / edit / apply a summary, and rate a compaction, through the chat services."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidecar.core.history import Content, FunctionCall, Part
from sidecar.protocol import errors
from sidecar.protocol.ide import OpenFile
from sidecar.protocol.sessions import TranscriptCompaction, TranscriptMessage
from sidecar.recording.stats import read_session, report
from tests.service.conftest import Rig


async def chat(rig: Rig, n: int, *, start: int = 0) -> None:
    for i in range(start, start + n):
        await rig.chat.send_message(f"Message {i}: please work on src/mod_{i}.py." + f" detail-{i}" * 150)


def entries(rig: Rig) -> list[object]:
    return list(rig.services.sessions.transcript(None).entries)


def mine(rig: Rig) -> list[str]:
    return [e.id for e in entries(rig) if isinstance(e, TranscriptMessage) and e.kind == "user"]


def compactions(rig: Rig) -> list[TranscriptCompaction]:
    return [e for e in entries(rig) if isinstance(e, TranscriptCompaction)]


def texts(contents: list[Content]) -> str:
    return json.dumps([c.parts[0].text for c in contents if c.parts and c.parts[0].text])


async def test_summarise_up_to_a_message_keeps_its_turn_verbatim(rig: Rig) -> None:
    await chat(rig, 2)
    rig.live.set_ide_context([OpenFile(path=str(rig.tmp / "project" / "a.py"), timestamp=1.0)], True)
    await chat(rig, 2, start=2)
    ids = mine(rig)
    conv = rig.live.conversation
    turn = conv.ids.index(ids[2]) - 1  # the editor context sent with message 2 belongs to its turn
    assert [e.kind for e in entries(rig) if isinstance(e, TranscriptMessage) and e.id == conv.ids[turn]] == [
        "ideContext"
    ]
    kept = conv.ids[turn:]
    result = await rig.services.compaction.compress(None, ids[2])
    assert result.status == "COMPRESSED"
    assert result.compaction_id is not None
    assert conv.ids[3:] == kept  # env, summary, ack, then the chosen turn and everything after it
    asked = rig.summary_requests()[0].contents()
    assert "Message 1:" in texts(asked) and "Message 2:" not in texts(asked)
    assert rig.rec.notices[-1].compaction_id == result.compaction_id


async def test_up_to_refuses_what_is_not_a_user_message_the_model_sees(rig: Rig) -> None:
    await chat(rig, 4)
    ids = mine(rig)
    model = next(e.id for e in entries(rig) if isinstance(e, TranscriptMessage) and e.kind == "model")
    for bad, words in [("nope", "there is no message"), (model, "pick one of your own"), (ids[0], "nothing comes")]:
        with pytest.raises(errors.SidecarError) as caught:
            await rig.services.compaction.compress(None, bad)
        assert caught.value.code == errors.INVALID_PARAMS and words in caught.value.message
    await rig.services.compaction.compress(None, ids[2])
    with pytest.raises(errors.SidecarError) as caught:
        await rig.services.compaction.compress(None, ids[1])  # summarised by the compaction just made
    assert "already summarised it" in caught.value.message


async def test_up_to_never_splits_a_call_from_its_response(rig: Rig) -> None:
    await chat(rig, 4)
    ids = mine(rig)
    conv = rig.live.conversation
    history = conv.history
    at = conv.ids.index(ids[2])
    history[at - 1] = Content(role="model", parts=[Part(function_call=FunctionCall(name="ls", args={}, id="x"))])
    conv.replace(history, conv.ids)
    with pytest.raises(errors.SidecarError) as caught:
        await rig.services.compaction.compress(None, ids[2])
    assert "separate a tool call from its response" in caught.value.message
    assert compactions(rig) == []


async def test_undo_after_an_up_to_compaction_restores_the_history(rig: Rig) -> None:
    await chat(rig, 4)
    conv = rig.live.conversation
    before = list(conv.wire())
    await rig.services.compaction.compress(None, mine(rig)[2])
    assert list(conv.wire()) != before
    undone = await rig.services.sessions.undo_compaction()
    assert undone.restored
    assert list(rig.live.conversation.wire()) == before


async def test_a_preview_leaves_the_history_and_the_recording_unchanged(rig: Rig) -> None:
    await chat(rig, 4)
    conv = rig.live.conversation
    before, recorded = list(conv.wire()), len(entries(rig))
    preview = await rig.services.compaction.preview("keep the module names", mine(rig)[2])
    assert preview.preview_id is not None and preview.status == "COMPRESSED"
    assert preview.snapshot is not None and preview.snapshot.startswith("<state_snapshot>")
    assert preview.new_token_count < preview.original_token_count
    assert preview.summarized_count + preview.kept_count == len(conv)
    # the model that writes summaries is named (it may differ from the chat model: compressionModel)
    assert preview.model == rig.summary_requests()[0].path.split("/models/")[1].split(":")[0]
    assert f"by {preview.model} " in preview.message
    assert list(conv.wire()) == before
    assert len(entries(rig)) == recorded and compactions(rig) == []
    assert rig.rec.notices == []
    assert "keep the module names" in json.dumps(rig.summary_requests()[0].body["contents"][-1])


async def test_an_edited_summary_is_applied_and_marked_edited(rig: Rig) -> None:
    await chat(rig, 4)
    preview = await rig.services.compaction.preview(None, mine(rig)[2])
    assert preview.preview_id is not None
    applied = await rig.services.compaction.apply(preview.preview_id, "The user wants src/mod_0.py renamed.")
    assert applied.status == "COMPRESSED" and applied.edited
    wrapped = "<state_snapshot>\nThe user wants src/mod_0.py renamed.\n</state_snapshot>"
    assert rig.live.conversation.history[1].parts[0].text == wrapped
    [made] = compactions(rig)
    assert made.edited and made.snapshot == wrapped and made.id == applied.compaction_id
    assert rig.rec.notices[-1].edited
    path = rig.live.recorder.path
    assert path is not None
    line = [json.loads(x) for x in Path(path).read_text().splitlines() if '"type":"compaction"' in x]
    assert line[-1]["edited"] is True


async def test_an_unedited_preview_applies_as_proposed(rig: Rig) -> None:
    await chat(rig, 4)
    preview = await rig.services.compaction.preview(None, None)
    assert preview.preview_id is not None
    assert preview.snapshot is not None
    applied = await rig.services.compaction.apply(preview.preview_id, preview.snapshot + "\n")  # as an editor saves
    assert applied.status == "COMPRESSED" and not applied.edited
    assert rig.live.conversation.history[1].parts[0].text == preview.snapshot
    assert not compactions(rig)[0].edited


@pytest.mark.parametrize(
    "text", ["   ", "<state_snapshot>open only", "before <state_snapshot>x</state_snapshot>", "a</state_snapshot>"]
)
async def test_a_malformed_edit_is_refused_and_the_preview_stays(rig: Rig, text: str) -> None:
    await chat(rig, 4)
    preview = await rig.services.compaction.preview(None, None)
    assert preview.preview_id is not None
    with pytest.raises(errors.SidecarError) as caught:
        await rig.services.compaction.apply(preview.preview_id, text)
    assert caught.value.code == errors.INVALID_PARAMS and "Cannot apply the summary" in caught.value.message
    assert (await rig.services.compaction.apply(preview.preview_id, None)).status == "COMPRESSED"


async def test_a_stale_preview_is_refused(rig: Rig) -> None:
    await chat(rig, 4)
    preview = await rig.services.compaction.preview(None, None)
    assert preview.preview_id is not None
    await chat(rig, 1, start=4)
    before = list(rig.live.conversation.wire())
    with pytest.raises(errors.SidecarError) as caught:
        await rig.services.compaction.apply(preview.preview_id, None)
    assert "changed since this summary was previewed" in caught.value.message
    assert list(rig.live.conversation.wire()) == before and compactions(rig) == []
    with pytest.raises(errors.SidecarError) as again:
        await rig.services.compaction.apply(preview.preview_id, None)
    assert "No compaction preview" in again.value.message


async def test_a_rating_is_recorded_shown_and_counted(rig: Rig) -> None:
    await chat(rig, 4)
    first = await rig.services.compaction.compress(None, None)
    rated = rig.services.compaction.rate(None, "lost", "it dropped the module names")
    assert rated.compaction_id == first.compaction_id and rated.rating == "lost"
    [made] = compactions(rig)
    assert made.rating == "lost" and made.rating_note == "it dropped the module names"
    rig.services.compaction.rate(first.compaction_id, "good", None)  # a later rating replaces the earlier one
    assert compactions(rig)[0].rating == "good"
    with pytest.raises(errors.SidecarError) as caught:
        rig.services.compaction.rate("c-nope", "good", None)
    assert "no compaction 'c-nope'" in caught.value.message
    path = rig.live.recorder.path
    assert path is not None
    counted = report([read_session(Path(path))])["ratings"]
    assert counted == {"good": 1, "lost": 0, "unrated": 0, "edited": 0}
