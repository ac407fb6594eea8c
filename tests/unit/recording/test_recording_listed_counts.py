"""Listed message counts leave out the hidden <session_context> turn, as resume's count does, old files included."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import msgspec
import pytest

from sidecar.core.history import text_content
from sidecar.core.recording import ForkRecord
from sidecar.recording.cli import add_parsers, main_sessions_show
from sidecar.recording.store import SessionStore

CONTEXT = "<session_context>\nThe date is today.\n</session_context>"


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore("/work/project", home=tmp_path / "home")


def test_listed_count_leaves_out_the_session_context_turn(store: SessionStore) -> None:
    writer = store.create("s1", model="m")
    writer.message(text_content("user", CONTEXT), kind="env")
    writer.message(text_content("user", "hello"), kind="user")
    writer.message(text_content("model", "hi"), kind="model")
    writer.message(text_content("user", "<memory_changes>GEMINI.md</memory_changes>"), kind="env")
    writer.sync()
    [info] = store.list()
    assert info.message_count == 3  # the memory-change turn is a message of the history; the context turn is not
    writer.message(text_content("user", CONTEXT), kind="env")  # after the last stats record (not synced yet)
    writer.message(text_content("user", "again"), kind="user")
    [info] = store.list()
    assert info.message_count == 4
    writer.close()
    resumed = store.open_for_append("s1")  # carries the context count on
    resumed.message(text_content("model", "sure"), kind="model")
    resumed.sync()
    [info] = store.list()
    assert info.message_count == 5
    resumed.close()


def test_a_branch_lists_its_parents_messages_without_the_context_turn(store: SessionStore) -> None:
    parent = store.create("p1", model="m")
    parent.message(text_content("user", CONTEXT), kind="env")
    parent.message(text_content("user", "hello"), kind="user")
    parent.sync()
    size, last = parent.size, parent.last_message_id
    parent.close()
    fork = ForkRecord(time="t", parent_session_id="p1", parent_size=size, parent_message_id=last, reason="fork")
    store.create("b1", model="m", fork=fork).close()
    branch = store.open_for_append("b1")
    branch.message(text_content("model", "hi"), kind="model")
    branch.sync()
    branch.close()
    counts = {info.session_id: info.message_count for info in store.list()}
    assert counts == {"p1": 1, "b1": 2}


def test_an_older_stats_record_without_the_context_count_is_replayed(store: SessionStore) -> None:
    writer = store.create("s1", model="m")
    path = writer.path
    writer.close()
    header = path.read_bytes().splitlines()[0]

    def message(mid: str, kind: str, role: str, text: str) -> bytes:
        record = {"type": "message", "time": "t", "id": mid, "kind": kind, "content": text_content(role, text)}
        return msgspec.json.encode(record)

    lines = [
        header,
        message("m1", "env", "user", CONTEXT),
        message("m2", "user", "user", "hello"),
        message("m3", "model", "model", "hi"),
        msgspec.json.encode({"type": "stats", "time": "t", "messageCount": 3, "compactionCount": 0}),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    [info] = store.list()
    assert (info.message_count, info.title) == (2, "hello")


def test_sessions_show_counts_as_the_list_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDECAR_HOME", str(tmp_path / "home"))
    project = str(tmp_path)
    writer = SessionStore(project).create("s1", model="m")
    writer.message(text_content("user", CONTEXT), kind="env")
    writer.message(text_content("user", "hello"), kind="user")
    writer.message(text_content("model", "hi"), kind="model")
    writer.close()
    parser = argparse.ArgumentParser(prog="sidecar")
    add_parsers(parser.add_subparsers(dest="command"))
    out = io.StringIO()
    assert main_sessions_show(parser.parse_args(["sessions", "show", "s1", "--project", project]), out) == 0
    assert " · 2 messages · 0 compactions\n" in out.getvalue()
