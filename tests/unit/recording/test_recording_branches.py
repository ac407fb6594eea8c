"""Branches, rewinds over compactions, pins, renames and the trash: replay and store, with real files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import msgspec
import pytest

from sidecar.core.history import text_content
from sidecar.core.pins import Pin, pinned_block, with_pins
from sidecar.core.recording import PinRecord, RenameRecord, RewindRecord, UnpinRecord
from sidecar.core.replay import ReplayError
from sidecar.recording.branches import Cut, branches_of, locate
from sidecar.recording.search import decode_cursor, page
from sidecar.recording.store import CorruptSession, SessionStore
from sidecar.recording.trash import delete, purge, restore, trash_directory
from tests.unit.core.test_recording_core import T, compress, msg, replay, texts


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(str(tmp_path / "project"), home=tmp_path / "home")


def chat(store: SessionStore, sid: str, *said: str) -> None:
    writer = store.create(sid, model="m")
    for i, text in enumerate(said):
        writer.message(text_content("user", text), kind="user", turn_id=f"t{i}")
        writer.message(text_content("model", f"re: {text}"), kind="model", turn_id=f"t{i}")
    writer.close()


def branch(store: SessionStore, sid: str, cut: Cut, before: str | None = None) -> None:
    from sidecar.core.recording import ForkRecord

    fork = ForkRecord(
        time=T,
        parent_session_id=cut.session_id,
        parent_size=cut.size,
        parent_message_id=cut.last_message_id,
        before_message_id=before,
    )
    store.create(sid, model="m", fork=fork).close()


def test_rewind_undoes_the_compactions_recorded_after_the_message() -> None:
    r = replay(
        msg("m1", "user", "one"),
        msg("m2", "model", "1"),
        compress("c0", "m2"),  # before m3: stays
        msg("m3", "user", "two"),
        msg("m4", "model", "2"),
        compress("c1", "m4"),  # summarised m3 away
        msg("m5", "user", "three"),
        compress("c2", "m5"),
    )
    assert "m3" not in r.history_ids
    r.apply(RewindRecord(time=T, to_id="m3"))
    assert r.history_ids == ["c0.summary", "c0.ack", "m2"], "c1 and c2 (after m3) are undone; c0 stays"
    assert r.undoable == ["c0"] and texts(r)[-1] == "1"
    marks = {e.id: getattr(e, "rewound", None) for e in r.transcript}
    assert marks["m2"] is False and marks["m3"] is marks["m4"] is marks["m5"] is True
    assert [getattr(e, "undone", None) for e in r.transcript if e.id in ("c0", "c1", "c2")] == [False, True, True]
    with pytest.raises(ReplayError, match="rewind to 'm3'"):
        r.apply(RewindRecord(time=T, to_id="m3"))  # already gone


def test_pins_and_renames_replay() -> None:
    r = replay(
        msg("m1", "user", "first words"),
        PinRecord(time=T, id="p1", text="keep A"),
        PinRecord(time=T, id="p2", text="keep B"),
        UnpinRecord(time=T, pin_id="p1"),
        RenameRecord(time=T, title="Named"),
    )
    assert r.pinned == [Pin("p2", "keep B")] and r.title == "Named"
    with pytest.raises(ReplayError, match="not pinned"):
        r.apply(UnpinRecord(time=T, pin_id="p1"))
    with pytest.raises(ReplayError, match="used twice"):
        r.apply(PinRecord(time=T, id="p2", text="again"))


def test_pins_reach_the_system_instruction_verbatim() -> None:
    pins = [Pin("p1", "line one\n  indented `code`")]
    assert "line one\n  indented `code`" in (with_pins("BASE", pins) or "")
    assert (with_pins("BASE", pins) or "").startswith("BASE\n\n<pinned_facts>")
    assert with_pins("BASE", []) == "BASE" and with_pins(None, pins) == pinned_block(pins)


def test_a_branch_reads_through_its_parent_and_leaves_it_alone(store: SessionStore) -> None:
    chat(store, "p", "one", "two", "three")
    parent_bytes = store.path("p").read_bytes()
    loaded = store.load("p")
    branch(store, "b", Cut("p", loaded.valid_size, loaded.last_message_id))
    writer = store.open_for_append("b")
    writer.message(text_content("user", "four in b"), kind="user")
    writer.close()
    writer = store.open_for_append("p")
    writer.message(text_content("user", "four in p"), kind="user")
    writer.close()
    b = store.load("b")
    assert texts_of(b.history) == ["one", "re: one", "two", "re: two", "three", "re: three", "four in b"]
    assert b.fork is not None and b.fork.parent_session_id == "p" and b.message_count == 7
    assert [e.id for e in b.transcript if hasattr(e, "kind")][-1] == "m7"
    assert store.path("p").read_bytes().startswith(parent_bytes)
    infos = {i.session_id: i for i in store.list()}
    assert infos["b"].parent_session_id == "p" and infos["p"].parent_session_id is None
    assert infos["b"].message_count == 7 and infos["b"].title == "one"
    assert branches_of(store.directory, "p") == ["b"]


def test_a_cut_before_a_message_is_found_in_the_file_that_recorded_it(store: SessionStore) -> None:
    chat(store, "p", "one", "two", "three")
    cut = locate(store.directory, "p", "m5")
    assert cut.session_id == "p" and cut.last_message_id == "m4"
    branch(store, "b", cut, before="m5")
    assert texts_of(store.load("b").history) == ["one", "re: one", "two", "re: two"]
    deeper = locate(store.directory, "b", "m3")  # inherited by b: it lives in p's file
    assert deeper.session_id == "p" and deeper.last_message_id == "m2"
    with pytest.raises(Exception, match="No message 'm9'"):
        locate(store.directory, "b", "m9")


def test_a_branch_whose_parent_is_gone_is_refused_in_words(store: SessionStore) -> None:
    chat(store, "p", "one")
    loaded = store.load("p")
    branch(store, "b", Cut("p", loaded.valid_size, loaded.last_message_id))
    store.path("p").rename(store.path("p").with_suffix(".moved"))
    with pytest.raises(CorruptSession, match="line 2: the session it branches from, p, is missing"):
        store.load("b")


def test_a_branch_pointing_into_the_middle_of_a_record_is_refused(store: SessionStore) -> None:
    chat(store, "p", "one")
    loaded = store.load("p")
    branch(store, "b", Cut("p", loaded.valid_size - 5, loaded.last_message_id))
    with pytest.raises(CorruptSession, match="line 2"):
        store.load("b")


def test_delete_goes_to_the_trash_restore_brings_it_back_and_old_trash_is_purged(store: SessionStore) -> None:
    chat(store, "p", "one")
    (store.directory / "p").mkdir()
    (store.directory / "p" / "tool-output.txt").write_text("saved")
    delete(store, "p")
    assert not store.path("p").exists() and [i.session_id for i in store.list()] == []
    assert (trash_directory(store) / "p" / "tool-output.txt").read_text() == "saved"
    restore(store, "p")
    assert store.load("p").message_count == 2 and (store.directory / "p" / "tool-output.txt").exists()
    delete(store, "p")
    marker = trash_directory(store) / "p.deleted"
    old = time.time() - 31 * 86400
    os.utime(marker, (old, old))
    assert purge(store) == ["p"] and not (trash_directory(store) / "p.jsonl").exists()


def test_delete_refuses_a_session_open_elsewhere(store: SessionStore) -> None:
    chat(store, "p", "one")
    writer = store.open_for_append("p")
    with pytest.raises(Exception, match="open in another window"):
        delete(store, "p")
    writer.close()
    delete(store, "p")


def test_deleting_a_parent_keeps_its_branches_whole_and_restore_brings_it_back(store: SessionStore) -> None:
    """A parent with branches (and a branch of a branch) can be deleted; every branch keeps its whole
    history, also after the trash is emptied, and can still be forked; restore brings the parent back."""
    chat(store, "g", "one", "two")
    g = store.load("g")
    branch(store, "p", Cut("g", g.valid_size, g.last_message_id))
    writer = store.open_for_append("p")
    writer.message(text_content("user", "three in p"), kind="user")
    writer.close()
    p = store.load("p")
    branch(store, "b", Cut("p", p.valid_size, p.last_message_id))
    branch(store, "early", locate(store.directory, "p", "m3"), before="m3")  # reads only g's first turn
    writer = store.open_for_append("b")
    writer.message(text_content("user", "four in b"), kind="user")
    writer.close()
    expected = {sid: texts_of(store.load(sid).history) for sid in ("p", "b", "early")}
    writer = store.open_for_append("b")  # open in another window: a branch being written is kept whole too
    delete(store, "g")
    delete(store, "p")
    writer.close()
    assert {i.session_id for i in store.list()} == {"b", "early"}
    for marker in trash_directory(store).glob("*.deleted"):
        old = time.time() - 31 * 86400
        os.utime(marker, (old, old))
    assert sorted(purge(store)) == ["g", "p"] and not list(trash_directory(store).glob("*.jsonl"))
    assert (
        texts_of(store.load("b").history)
        == expected["b"]
        == ["one", "re: one", "two", "re: two", "three in p", "four in b"]
    )
    assert texts_of(store.load("early").history) == expected["early"] == ["one", "re: one"]
    assert store.load("b").transcript[-1].id == "m6"  # type: ignore[union-attr]
    cut = locate(store.directory, "b", "m3")  # in g's part, which only b's copy holds now
    assert cut.session_id == "g" and cut.copy_folder is not None
    deleted_b = store.load("b")
    delete(store, "b")  # a branch of copies can itself be deleted and restored
    restore(store, "b")
    assert texts_of(store.load("b").history) == texts_of(deleted_b.history)


def test_restoring_a_deleted_parent_brings_it_back_beside_its_branches(store: SessionStore) -> None:
    chat(store, "p", "one")
    loaded = store.load("p")
    branch(store, "b", Cut("p", loaded.valid_size, loaded.last_message_id))
    branch(store, "gone", Cut("p", loaded.valid_size, loaded.last_message_id))
    delete(store, "gone")  # a deleted branch keeps its beginning too, for when it is restored
    delete(store, "p")
    restore(store, "p")
    infos = {i.session_id: i for i in store.list()}
    assert infos["b"].parent_session_id == "p" and store.load("p").message_count == 2
    delete(store, "p")
    marker = trash_directory(store) / "p.deleted"
    old = time.time() - 31 * 86400
    os.utime(marker, (old, old))
    (trash_directory(store) / "gone.deleted").touch()
    assert purge(store) == ["p"]
    restore(store, "gone")
    assert texts_of(store.load("gone").history) == texts_of(store.load("b").history) == ["one", "re: one"]


def test_paging_is_newest_first_and_stable(store: SessionStore) -> None:
    for sid in ("a", "b", "c"):
        chat(store, sid, f"hello {sid}")
    # c the oldest; a and b updated in the same instant: the session id breaks the tie, the same way every time.
    when = {"a": "2026-01-02T00:00:00.000Z", "b": "2026-01-02T00:00:00.000Z", "c": "2026-01-01T00:00:00.000Z"}
    infos = [msgspec.structs.replace(i, last_updated=when[i.session_id]) for i in store.list()]
    first, cursor = page(infos, query=None, limit=2, cursor=None)
    assert [i.session_id for i in first] == ["b", "a"]
    assert cursor is not None and decode_cursor(cursor)[1] == first[-1].session_id
    rest, end = page(infos, query=None, limit=2, cursor=cursor)
    assert end is None and [i.session_id for i in rest] == ["c"]
    assert [i.session_id for i in page(list(reversed(infos)), query=None, limit=3, cursor=None)[0]] == ["b", "a", "c"]
    assert [i.session_id for i in page(infos, query="HELLO B", limit=None, cursor=None)[0]] == ["b"]
    with pytest.raises(ValueError, match="limit must be"):
        page(infos, query=None, limit=0, cursor=None)


def test_listing_shows_a_rename_made_after_the_last_stats_record(store: SessionStore) -> None:
    chat(store, "p", "one")
    with open(store.path("p"), "ab") as f:
        f.write(msgspec.json.encode(RenameRecord(time=T, title="Renamed")) + b"\n")
    assert store.list()[0].title == "Renamed"


def texts_of(history: list[object]) -> list[str]:
    from sidecar.core.transcript import display_text

    return [display_text(c) for c in history]  # type: ignore[arg-type]
