"""Checkpoints below the chat loop: the ledger, the blob store, taking them around the registry's edits and shell
commands, putting files back (disk, conflicts, force, protected paths, skipped files) and pruning."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sidecar.checkpoints.prune import Pruner, prune, session_files
from sidecar.checkpoints.service import CheckpointService
from sidecar.checkpoints.store import BlobStore, digest_of
from sidecar.core.checkpoints import rewind_targets, turn_files
from sidecar.core.history import text_content
from sidecar.core.recording import FileChangeRecord, FilesRestoredRecord
from sidecar.recording.recorder import Recorder
from sidecar.session import Session
from sidecar.tools import ToolRegistry

T = "2026-01-01T00:00:00.000Z"


def change(position: int, message: str, path: str, before: str | None, after: str | None, existed: bool = True) -> Any:
    record = FileChangeRecord(time=T, message_id=message, path=path, before=before, after=after, existed=existed)
    return (position, record)


def test_turn_files_name_each_file_once_with_its_change_over_the_turn() -> None:
    records = [
        change(1, "m1", "/w/a", "A0", "A1"),
        change(2, "m1", "/w/a", "A1", "A2"),
        change(3, "m1", "/w/new", None, "N1", existed=False),
        change(4, "m1", "/w/tmp", None, "T", existed=False),
        change(5, "m1", "/w/tmp", "T", None),
        change(8, "m5", "/w/b", "B0", None),
    ]
    turns = turn_files(records)
    assert [(f.path, f.change) for f in turns["m1"]] == [("/w/a", "modified"), ("/w/new", "created")]
    assert [(f.path, f.change) for f in turns["m5"]] == [("/w/b", "deleted")]


def test_rewind_targets_go_back_to_the_first_change_after_the_message_and_know_what_was_left() -> None:
    records = [
        change(1, "m1", "/w/a", "A0", "A1"),
        change(6, "m5", "/w/a", "A1", "A2"),
        change(7, "m5", "/w/c", None, "C1", existed=False),
        (9, FilesRestoredRecord(time=T, to_id="m8", files={"/w/c": None})),
        change(12, "m11", "/w/a", "A2", "A3"),
    ]
    by_path = {t.path: t for t in rewind_targets(records, 5)}
    assert (by_path["/w/a"].before, by_path["/w/a"].left, by_path["/w/a"].change) == ("A1", "A3", "modified")
    assert (by_path["/w/c"].existed, by_path["/w/c"].left) == (False, None), "a restore record moves what was left"
    assert [t.path for t in rewind_targets(records, 0)] == ["/w/a", "/w/c"]
    assert rewind_targets(records, 0)[0].before == "A0"


def test_blob_store_writes_once_privately_and_never_returns_damaged_content(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / ".checkpoints")
    digest = store.put(b"hello")
    assert digest == digest_of(b"hello") and store.put(b"hello") == digest and store.get(digest) == b"hello"
    path = store.path(digest)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    path.write_bytes(b"tampered")
    assert store.get(digest) is None, "content that does not match its digest is never restored"
    assert store.get("0" * 64) is None
    with pytest.raises(ValueError):
        store.path("../../etc/passwd")


class Rig:
    def __init__(self, tmp_path: Path, **settings: Any) -> None:
        self.root = tmp_path / "ws"
        self.root.mkdir()
        self.session = Session(workspace_folders=[str(self.root)])
        self.session.settings = msgspec.structs.replace(self.session.settings, **settings)
        self.recorder = Recorder(self.session, lambda text: None, home=tmp_path / "home")
        self.recorder.start("0f0f0f0f-0000-4000-8000-000000000001")
        self.registry = ToolRegistry(
            self.session.folders, save_output=lambda text, tool: tmp_path / "out", output_threshold=lambda: 10_000
        )
        #: The running turn's user message, as the live conversation names it (None: no turn).
        self.turn: str | None = None
        self.service = CheckpointService(
            self.session,
            self.recorder,
            turn=lambda: self.turn,
            workspace=self.registry.workspace,
            buffers=self.registry.buffers,
        )
        self.registry.watch = self.service.checkpointer

    def user(self, text: str) -> str:
        self.turn = self.recorder.message(text_content("user", text), "user", "turn")
        return self.turn

    async def tool(self, name: str, **args: Any) -> Any:
        plan = self.registry.plan(name, args, trusted=True)
        assert plan.error is None, plan.error
        result = await self.registry.run(plan, apply_edit=None)
        assert result.ok, result.response
        return result

    async def rewind_files(self, message_id: str, *, force: bool = False) -> Any:
        loaded = self.recorder.reload()
        plan = await self.service.plan(loaded, message_id, force=force)
        return await self.service.restore(plan, message_id)


async def test_edits_are_saved_before_they_run_and_restored_with_created_files_removed(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    (rig.root / "a.txt").write_text("original\n")
    first = rig.user("change a and create b")
    await rig.tool("replace", path="a.txt", old_string="original", new_string="first edit")
    await rig.tool("write_file", path="sub/b.txt", content="new file\n")
    second = rig.user("change a again")
    await rig.tool("write_file", path="a.txt", content="second edit\n")
    loaded = rig.recorder.reload()
    listed = rig.service.list_of(loaded, "s")
    files = {c.message_id: [(f.path, f.change) for f in c.files] for c in listed.checkpoints}
    a, b = str(rig.root / "a.txt"), str(rig.root / "sub" / "b.txt")
    assert files == {first: [(a, "modified"), (b, "created")], second: [(a, "modified")]}
    done = await rig.rewind_files(second)
    assert (done.restored, done.removed) == ([a], []) and (rig.root / "a.txt").read_text() == "first edit\n"
    done = await rig.rewind_files(first)
    assert (done.restored, done.removed, done.conflicts) == ([a], [b], [])
    assert (rig.root / "a.txt").read_text() == "original\n" and not (rig.root / "sub" / "b.txt").exists()


async def test_a_file_changed_since_the_agent_left_it_is_a_conflict_until_forced(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    (rig.root / "a.txt").write_text("one\ntwo\n")
    first = rig.user("edit a")
    await rig.tool("replace", path="a.txt", old_string="two", new_string="TWO")
    (rig.root / "a.txt").write_text("one\nTWO\nmine\n")  # the user's own change after the agent's
    done = await rig.rewind_files(first)
    assert done.restored == [] and [c.path for c in done.conflicts] == [str(rig.root / "a.txt")]
    assert done.conflicts[0].reason == "changed since the agent's edit (+1 −0 lines)"
    assert (rig.root / "a.txt").read_text() == "one\nTWO\nmine\n", "not overwritten"
    done = await rig.rewind_files(first, force=True)
    assert done.restored == [str(rig.root / "a.txt")] and (rig.root / "a.txt").read_text() == "one\ntwo\n"


async def test_protected_paths_and_files_outside_the_workspace_are_not_written_without_force(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    (rig.root / "AGENTS.md").write_text("be careful\n")
    first = rig.user("edit the instructions")
    await rig.tool("write_file", path="AGENTS.md", content="be reckless\n")
    done = await rig.rewind_files(first)
    assert [c.path for c in done.conflicts] == [str(rig.root / "AGENTS.md")]
    assert "protected path" in done.conflicts[0].reason
    assert (rig.root / "AGENTS.md").read_text() == "be reckless\n"
    outside = tmp_path / "outside.txt"
    rig.recorder.file_record(
        FileChangeRecord(time=T, message_id=first, path=str(outside), before=rig.service.blobs().put(b"x"), after=None)
    )
    done = await rig.rewind_files(first, force=True)
    assert (rig.root / "AGENTS.md").read_text() == "be careful\n", "force is the user's say"
    assert [s.path for s in done.skipped] == [str(outside)] and "outside the workspace" in done.skipped[0].reason
    assert not outside.exists()


@pytest.mark.process
async def test_shell_commands_are_checked_for_the_files_they_name(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    (rig.root / "gone.txt").write_text("delete me\n")
    (rig.root / "kept.txt").write_text("untouched\n")
    first = rig.user("run the shell")
    await rig.tool("run_shell_command", command="rm gone.txt && echo made > made.txt && cat kept.txt")
    listed = rig.service.list_of(rig.recorder.reload(), "s")
    [checkpoint] = listed.checkpoints
    assert {(f.path, f.change) for f in checkpoint.files} == {
        (str(rig.root / "gone.txt"), "deleted"),
        (str(rig.root / "made.txt"), "created"),
    }
    done = await rig.rewind_files(first)
    assert done.restored == [str(rig.root / "gone.txt")] and done.removed == [str(rig.root / "made.txt")]
    assert (rig.root / "gone.txt").read_text() == "delete me\n" and not (rig.root / "made.txt").exists()


@pytest.mark.process
async def test_files_over_the_limit_are_skipped_and_named(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    big = rig.root / "big.bin"
    big.write_bytes(b"x" * (10 * 1024 * 1024))
    first = rig.user("truncate the big file")
    await rig.tool("run_shell_command", command="truncate -s 10 big.bin")
    loaded = rig.recorder.reload()
    [checkpoint] = rig.service.list_of(loaded, "s").checkpoints
    [listed] = checkpoint.files
    assert listed.change == "modified" and listed.skipped is not None and "too large" in listed.skipped
    done = await rig.rewind_files(first)
    assert [s.path for s in done.skipped] == [str(big)]
    assert "too large to save (10,485,760 bytes" in done.skipped[0].reason
    assert big.stat().st_size == 10


async def test_nothing_is_saved_with_checkpointing_off(tmp_path: Path) -> None:
    rig = Rig(tmp_path, checkpointing=False)
    (rig.root / "a.txt").write_text("original\n")
    rig.user("edit")
    await rig.tool("write_file", path="a.txt", content="changed\n")
    assert rig.recorder.reload().file_records == [] and rig.service.blobs().blobs() == []


async def test_checkpoints_belong_to_the_turn_the_live_conversation_names_not_the_recordings_last_message(
    tmp_path: Path,
) -> None:
    """The recording's latest user message is not the turn: after the live conversation switched (rewind, undo,
    resume) no turn is running until the next one records its message, and an edit then is not checkpointed."""
    rig = Rig(tmp_path)
    (rig.root / "a.txt").write_text("original\n")
    first = rig.user("edit a")
    await rig.tool("write_file", path="a.txt", content="first\n")
    rig.turn = None  # the live conversation switched: no turn of it is running
    await rig.tool("write_file", path="a.txt", content="outside a turn\n")
    changes = [
        (r.message_id, r.path) for _at, r in rig.recorder.reload().file_records if isinstance(r, FileChangeRecord)
    ]
    assert changes == [(first, str(rig.root / "a.txt"))]


async def test_pruning_removes_unnamed_blobs_and_keeps_what_an_open_session_needs(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    (rig.root / "a.txt").write_text("a" * 4000)
    rig.user("edit")
    await rig.tool("write_file", path="a.txt", content="b" * 4000)
    blobs = rig.service.blobs()
    orphan = blobs.put(b"no session names this")
    store = rig.recorder.store
    files = session_files(store.directory, tmp_path / "home" / "trash" / store.project_id)
    named = {b.digest for b in blobs.blobs()} - {orphan}
    later = time.time() + 7200  # past the grace period of fresh blobs
    assert prune(blobs, files, cap_bytes=None, now=later) == [orphan]
    assert prune(blobs, files, cap_bytes=1, now=later) == [], "the live session (held open) still needs them"
    rig.recorder.close()  # no longer open anywhere: over the cap, its blobs may go, oldest first
    assert set(prune(blobs, files, cap_bytes=1, now=later)) == named


async def test_blobs_of_a_purged_session_go_with_it_and_a_deleted_ones_stay(tmp_path: Path) -> None:
    from sidecar.recording import trash

    rig = Rig(tmp_path)
    (rig.root / "a.txt").write_text("kept by the trash\n")
    rig.user("edit")
    await rig.tool("write_file", path="a.txt", content="changed\n")
    old = rig.recorder.session_id
    assert old is not None
    rig.recorder.start("0f0f0f0f-0000-4000-8000-000000000002")
    rig.user("another session, no edits")
    store, blobs = rig.recorder.store, rig.service.blobs()
    saved = {b.digest for b in blobs.blobs()}
    assert len(saved) == 2
    trash.delete(store, old)
    pruner = Pruner(rig.session, rig.recorder, rig.service.blobs)
    for blob in blobs.blobs():  # old enough to be pruned
        os.utime(blobs.path(blob.digest), (time.time() - 7200, time.time() - 7200))
    assert pruner.run() == [], "a deleted session can be restored from the trash: its contents stay"
    assert trash.purge(store, now=time.time() + 31 * 86400) == [old]
    assert set(pruner.run()) == saved, "purged for good: the contents only it named go too"


async def test_the_store_cap_holds_when_writing(tmp_path: Path) -> None:
    """44 MB were stored under a 5 MB cap: pruning ran later and kept every blob younger than an hour. Now a blob
    that would pass checkpointStoreMb is not written; the rewind names the file whose content was not saved."""
    rig = Rig(tmp_path, checkpoint_store_mb=1)
    names = [f"f{i}.txt" for i in range(4)]
    for i, name in enumerate(names):
        (rig.root / name).write_text(str(i) * (300 * 1024))
    first = rig.user("empty the four files")
    for name in names:
        await rig.tool("write_file", path=name, content="")
    stored = sum(blob.size for blob in rig.service.blobs().blobs())
    assert stored <= 1024 * 1024, f"{stored:,} bytes stored under a 1 MB cap"
    done = await rig.rewind_files(first)
    assert sorted(done.restored) == [str(rig.root / n) for n in names[:3]]
    [skipped] = done.skipped
    assert skipped.path == str(rig.root / "f3.txt")
    assert "not saved: the checkpoint store is full" in skipped.reason and "checkpointStoreMb" in skipped.reason
