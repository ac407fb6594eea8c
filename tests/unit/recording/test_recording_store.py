"""Session files on disk: resume equals the live history, append-only compaction, torn lines, corruption, listing."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import msgspec
import pytest

from sidecar.core.compaction import find_split_point, truncate_history_to_budget
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.recording import FORMAT_VERSION, LastUsage, RewindRecord, head_ids
from sidecar.protocol.sessions import TranscriptCompaction
from sidecar.recording.layout import data_home
from sidecar.recording.store import (
    CorruptSession,
    SessionLocked,
    SessionNotFound,
    SessionStore,
    SessionWriter,
    UnsupportedVersion,
    project_id,
)


class Live:
    """What the server does: a live history with ids, mirrored into a SessionWriter."""

    def __init__(self, writer: SessionWriter) -> None:
        self.writer = writer
        self.history: list[Content] = []
        self.ids: list[str] = []
        self.turn = 0

    def add(self, content: Content, kind: str, **meta: object) -> str:
        mid = self.writer.message(content, kind=kind, turn_id=f"t{self.turn}", meta=dict(meta) or None)
        self.history.append(content)
        self.ids.append(mid)
        return mid

    def chat(self, text: str, *, tool: bool = False, usage: int | None = None) -> None:
        self.turn += 1
        self.add(text_content("user", text), "user")
        if tool:
            call = Part(
                function_call=FunctionCall(name="read_file", args={"path": f"{text}.py"}, id=f"call{self.turn}")
            )
            self.add(Content(role="model", parts=[call]), "toolCall", status="success", displayName="ReadFile")
            response = FunctionResponse(name="read_file", id=f"call{self.turn}", response={"output": "x" * 4000})
            self.add(Content(role="user", parts=[Part(function_response=response)]), "toolResult")
        reply = self.add(text_content("model", f"reply to {text}"), "model")
        self.writer.usage(usage or 100 * len(self.history), "api", reply, {"promptTokenCount": usage})
        self.writer.sync()

    def compact(self, cid: str, *, env: bool = True, budget: int = 500) -> None:
        truncated = truncate_history_to_budget(
            self.history, budget=budget, tool_output_threshold=50, save=lambda text, name: f"/tmp/{name}.txt"
        )
        split = find_split_point(self.history, 0.7)  # (split on the originals, so the tail holds truncated outputs)
        kept_ids, kept = self.ids[split:], truncated[split:]
        replacements = {i: c for i, c, old in zip(kept_ids, kept, self.history[split:], strict=True) if c != old}
        summary = text_content("user", f"<state_snapshot>{cid}</state_snapshot>")
        ack = text_content("model", "Got it. Thanks for the additional context!")
        env_content = text_content("user", "<session_context>env</session_context>") if env else None
        self.writer.compaction(
            trigger="auto",
            status="COMPRESSED",
            original_tokens=5000,
            new_tokens=1200,
            snapshot=summary.parts[0].text,
            summary=summary,
            ack=ack,
            env=env_content,
            kept_from=kept_ids[0] if kept_ids else None,
            replacements=replacements,
            compaction_id=cid,
        )
        head = [summary, ack] if env_content is None else [env_content, summary, ack]
        self.history = head + kept
        self.ids = head_ids(cid, env) + kept_ids


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore("/work/project", home=tmp_path / "home")


def new_live(store: SessionStore, sid: str = "s1") -> Live:
    return Live(store.create(sid, model="gemini-2.5-flash"))


def test_paths_and_permissions(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create("s1", model="m")
    assert writer.path == tmp_path / "home" / "sessions" / project_id("/work/project") / "s1.jsonl"
    assert project_id("/work/project").startswith("project-") and len(project_id("/x/project")) == len("project-") + 8
    assert project_id("/a/project") != project_id("/b/project")
    for directory in (tmp_path / "home", tmp_path / "home" / "sessions", store.directory):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(writer.path.stat().st_mode) == 0o600
    writer.close()


def test_data_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SIDECAR_HOME", str(tmp_path / "sc"))
    assert data_home() == tmp_path / "sc"
    monkeypatch.delenv("SIDECAR_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_home() == tmp_path / "xdg" / "sidecar"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert data_home() == tmp_path / ".local" / "share" / "sidecar"


def test_resume_equals_the_live_history_through_compaction_chains(store: SessionStore) -> None:
    live = new_live(store)
    for i in range(6):
        live.chat(f"q{i}", tool=i % 2 == 0)
    live.compact("c1")
    for i in range(6, 10):
        live.chat(f"q{i}", tool=True)
    live.compact("c2")  # a chain: c2 compacts c1's summary and ack
    live.chat("q10", usage=4242)
    live.writer.close()
    loaded = store.load("s1")
    assert loaded.warnings == []
    assert loaded.history == live.history and loaded.history_ids == live.ids
    assert loaded.last_usage == LastUsage(4242, "api")
    assert loaded.compaction_count == 2 and loaded.undoable == ["c1", "c2"]
    assert loaded.title == "q0" and loaded.metadata.model == "gemini-2.5-flash"
    kinds = [e.kind for e in loaded.transcript if not isinstance(e, TranscriptCompaction)]
    assert len(kinds) == loaded.message_count == live.writer.message_count
    assert [e.id for e in loaded.transcript if isinstance(e, TranscriptCompaction)] == ["c1", "c2"]
    compactions = [json.loads(x) for x in loaded.path.read_bytes().splitlines() if b'"compaction"' in x]
    assert any(c.get("replacements") for c in compactions)  # truncated tool outputs in a kept tail


def test_resume_then_continue_and_compact_again(store: SessionStore) -> None:
    live = new_live(store)
    for i in range(5):
        live.chat(f"q{i}", tool=True)
    live.compact("c1")
    live.writer.close()
    loaded = store.load("s1")
    writer = store.open_for_append("s1", loaded)
    resumed = Live(writer)
    resumed.history, resumed.ids = loaded.history, loaded.history_ids
    resumed.chat("after resume", tool=True)
    resumed.compact("c2", env=False)
    resumed.chat("more")
    writer.close()
    again = store.load("s1")
    assert again.history == resumed.history and again.history_ids == resumed.ids
    assert len({e.id for e in again.transcript}) == len(again.transcript)  # ids stay unique across resumes


def test_compaction_appends_one_record_and_rewrites_nothing(store: SessionStore) -> None:
    live = new_live(store)
    for i in range(8):
        live.chat(f"q{i}", tool=True)
    before = live.writer.path.read_bytes()
    live.compact("c1")
    after = live.writer.path.read_bytes()
    assert after.startswith(before)
    added = [json.loads(line) for line in after[len(before) :].splitlines()]
    assert [r["type"] for r in added] == ["compaction", "stats"]
    # kept messages are referenced by id, so their recorded tool-call metadata stays where it was
    kept_tool_calls = [i for i in live.ids if not i.startswith("c1.")]
    original = {r["id"]: r for r in map(json.loads, before.splitlines()) if r["type"] == "message"}
    assert any(original[i].get("meta", {}).get("displayName") == "ReadFile" for i in kept_tool_calls)


def test_undo_compaction_is_recorded_and_replayed(store: SessionStore) -> None:
    live = new_live(store)
    for i in range(5):
        live.chat(f"q{i}", usage=900 + i)
    pre_history, pre_ids = list(live.history), list(live.ids)
    live.compact("c1")
    with pytest.raises(ValueError, match="latest"):
        live.writer.undo_compaction("c0")
    live.writer.undo_compaction("c1")
    live.writer.close()
    loaded = store.load("s1")
    assert loaded.history == pre_history and loaded.history_ids == pre_ids
    assert loaded.last_usage == LastUsage(904, "api") and loaded.undoable == []
    assert [e.undone for e in loaded.transcript if isinstance(e, TranscriptCompaction)] == [True]


def test_info_error_rewind_and_validation(store: SessionStore) -> None:
    writer = store.create("s1", model="m")
    a = writer.message(text_content("user", "hello"), kind="user")
    writer.message(None, kind="error", text="Gemini API: quota exceeded")
    b = writer.message(text_content("user", "again"), kind="user")
    writer.rewind(b)
    with pytest.raises(ValueError):
        writer.message(text_content("user", "x"), kind="info")
    with pytest.raises(ValueError):
        writer.message(None, kind="bogus", text="x")
    with pytest.raises(ValueError):
        writer.compaction(trigger="manual", status="COMPRESSED", original_tokens=1, new_tokens=1)
    writer.close()
    loaded = store.load("s1")
    assert loaded.history_ids == [a] and [e.id for e in loaded.transcript] == ["m1", "m2", "m3"]


def test_torn_last_line_loads_reports_once_and_is_repaired(store: SessionStore) -> None:
    live = new_live(store)
    live.chat("one")
    live.writer.close()
    path = live.writer.path
    good = path.read_bytes()
    line = msgspec.json.encode({"type": "message", "id": "m3", "kind": "user", "time": "t", "content": {}})
    path.write_bytes(good + line[: len(line) // 2])
    loaded = store.load("s1")
    assert len(loaded.warnings) == 1 and "incomplete" in loaded.warnings[0]
    assert loaded.history_ids == ["m1", "m2"]
    writer = store.open_for_append("s1", loaded)
    assert path.read_bytes() == good
    assert Path(str(path) + ".torn").read_bytes() == line[: len(line) // 2] + b"\n"
    writer.message(text_content("user", "two"), kind="user")
    writer.close()
    again = store.load("s1")
    assert again.warnings == [] and again.history_ids == ["m1", "m2", "m3"]


def test_whole_last_record_without_newline_is_kept(store: SessionStore) -> None:
    writer = store.create("s1", model="m")
    writer.message(text_content("user", "one"), kind="user")
    writer.close()
    path = writer.path
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    loaded = store.load("s1")
    assert loaded.warnings == [] and loaded.needs_newline
    writer = store.open_for_append("s1", loaded)
    writer.message(text_content("model", "1"), kind="model")
    writer.close()
    assert store.load("s1").history_ids == ["m1", "m2"]


def test_corrupted_middle_line_is_refused_naming_the_line(store: SessionStore) -> None:
    live = new_live(store)
    live.chat("one")
    live.chat("two")
    live.writer.close()
    path = live.writer.path
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = b'{"type":"message","id":"m2", oops\n'
    damaged = b"".join(lines)
    path.write_bytes(damaged)
    with pytest.raises(CorruptSession, match=r"damaged at line 4: JSON is malformed") as info:
        store.load("s1")
    assert info.value.line == 4 and str(path) in str(info.value)
    with pytest.raises(CorruptSession):
        store.open_for_append("s1")
    assert path.read_bytes() == damaged  # nothing overwritten
    salvaged = store.load("s1", salvage=True)
    assert salvaged.warnings == [
        f"{path.name} line 4 was skipped: JSON is malformed: object keys must be strings (byte 29)."
    ]
    assert "m2" not in salvaged.history_ids and "m4" in salvaged.history_ids


def test_semantically_inconsistent_line_is_refused(store: SessionStore) -> None:
    writer = store.create("s1", model="m")
    writer.message(text_content("user", "one"), kind="user")
    writer.append(RewindRecord(time="t", to_id="m9"))
    writer.close()
    with pytest.raises(CorruptSession, match="line 4: rewind to 'm9'"):
        store.load("s1")


def test_future_version_is_refused_and_left_alone(store: SessionStore) -> None:
    store.create("s1", model="m").close()
    path = store.path("s1")
    header = json.loads(path.read_bytes().splitlines()[0])
    header["version"] = FORMAT_VERSION + 1
    future = (json.dumps(header) + "\n" + '{"type":"hologram","time":"t"}\n').encode()
    path.write_bytes(future)
    expected = rf"format {FORMAT_VERSION + 1}, but this sidecar reads format {FORMAT_VERSION}"
    with pytest.raises(UnsupportedVersion, match=expected):
        store.load("s1")
    with pytest.raises(UnsupportedVersion):
        store.open_for_append("s1")
    assert path.read_bytes() == future
    assert store.list() == []


def test_not_a_session_and_missing(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.load("nope")
    store.directory.mkdir(parents=True)
    store.path("x").write_text('{"hello": 1}\n')
    with pytest.raises(CorruptSession, match="line 1"):
        store.load("x")
    store.path("e").write_text("")
    with pytest.raises(CorruptSession, match="empty"):
        store.load("e")
    with pytest.raises(ValueError):
        store.path("../escape")


def test_list_newest_first_with_counts_from_the_tail(store: SessionStore) -> None:
    first = new_live(store, "aaa")
    first.chat("first session")
    first.writer.close()
    second = new_live(store, "bbb")
    second.chat("second session", tool=True)
    second.compact("c1")
    second.chat("x" * 300_000)  # a big record after the last-but-one stats record
    second.writer.message(None, kind="info", text="unsynced")  # after the last stats record
    infos = store.list()
    assert [i.session_id for i in infos] == ["bbb", "aaa"]
    assert (infos[0].message_count, infos[0].compaction_count, infos[0].title) == (7, 1, "second session")
    assert (infos[1].message_count, infos[1].title) == (2, "first session")
    assert infos[0].last_updated >= infos[0].start_time
    second.writer.close()
    assert store.resolve("bb") == "bbb"


def test_list_without_stats_falls_back_to_replay(store: SessionStore) -> None:
    writer = store.create("s1", model="m")
    path = writer.path
    writer.close()
    header = path.read_bytes().splitlines()[0]
    line = msgspec.json.encode({"type": "message", "id": "m1", "kind": "user", "time": "t", "text": "only"})
    path.write_bytes(header + b"\n" + line + b"\n")
    [info] = store.list()
    assert (info.message_count, info.title) == (1, "only")


def test_a_second_writer_is_refused_while_the_first_is_open(store: SessionStore) -> None:
    writer = store.create("s1", model="m")
    before = writer.path.read_bytes()
    with pytest.raises(SessionLocked, match="open in another window"):
        store.open_for_append("s1")
    assert writer.path.read_bytes() == before, "the refused opener changed nothing"
    writer.close()
    third = store.open_for_append("s1")
    assert not third.disabled
    third.close()


def test_writes_after_close_are_ignored(store: SessionStore) -> None:
    writer = store.create("s1", model="m")
    writer.close()
    size = writer.path.stat().st_size
    writer.message(text_content("user", "late"), kind="user")
    writer.close()
    assert writer.path.stat().st_size == size
