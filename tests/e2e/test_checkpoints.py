"""Checkpoints through real sidecar processes and the fake Gemini: a rewind puts the agent's file changes
back — in every approval mode, after a restart and resume, in a fork, after a compaction — conflicts are left alone
until forced, and open files go back through the editor's workspace/applyEdit."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import EditorClient, request
from tests.e2e.test_sessions import Sidecar


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"kind": "function_call", "name": name, "args": args, "match": "chat"}


@pytest.fixture
def dirs() -> Iterator[tuple[str, Path]]:
    with tempfile.TemporaryDirectory(prefix="home-") as home, tempfile.TemporaryDirectory(prefix="proj-") as proj:
        yield home, Path(proj).resolve()


async def started(home: str, root: Path, fake: Any, **settings: Any) -> Sidecar:
    side = Sidecar(home, fake.url, str(root))
    side.client.on("sidecar/confirmToolCall", lambda _params: {"decision": "allow"})
    await side.start(**settings)
    return side


async def users(side: Sidecar) -> list[dict[str, Any]]:
    entries = (await side.client.request("sidecar/getTranscript", {}))["entries"]
    return [e for e in entries if e["type"] == "message" and e["kind"] == "user"]


async def session_id(side: Sidecar) -> str:
    return (await side.client.request("sidecar/getTranscript", {}))["sessionId"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["default", "autoEdit", "yolo"])
async def test_every_mode_is_checkpointed_and_a_restarted_sidecar_puts_the_files_back(
    fake: Any, dirs: tuple[str, Path], mode: str
) -> None:
    home, root = dirs
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "gone.txt").write_text("the shell deletes me\n")
    side = await started(home, root, fake, approvalMode=mode)
    await side.say("a first question, no tools")
    fake.script(
        [
            call("replace", path="a.txt", old_string="beta", new_string="BETA"),
            call("write_file", path="src/new.py", content="print('new')\n"),
            call("run_shell_command", command="rm gone.txt"),
        ]
    )
    await side.say("change things")
    assert (root / "a.txt").read_text() == "alpha\nBETA\n" and not (root / "gone.txt").exists()
    target = (await users(side))[1]
    listed = await side.client.request("sidecar/listCheckpoints", {})
    assert listed["checkpointing"] is True
    by_message = {c["messageId"]: c for c in listed["checkpoints"]}
    assert by_message[target["id"]]["firstWords"] == "change things"
    assert {(f["path"], f["change"]) for f in by_message[target["id"]]["files"]} == {
        (str(root / "a.txt"), "modified"),
        (str(root / "src" / "new.py"), "created"),
        (str(root / "gone.txt"), "deleted"),
    }
    sid = await session_id(side)
    side.kill()  # no clean shutdown: what was recorded at the turn's end is what a restart has

    again = await started(home, root, fake, approvalMode=mode)
    await again.client.request("sidecar/resumeSession", {"sessionId": sid})
    preview = await again.client.request("sidecar/previewRewind", {"messageId": target["id"]})
    assert sorted(preview["restored"]) == [str(root / "a.txt"), str(root / "gone.txt")]
    assert preview["removed"] == [str(root / "src" / "new.py")] and preview["conflicts"] == []
    assert (root / "a.txt").read_text() == "alpha\nBETA\n", "a preview changes nothing"
    result = await again.client.request("sidecar/rewind", {"messageId": target["id"], "restoreFiles": True})
    assert sorted(result["restored"]) == sorted(preview["restored"]) and result["removed"] == preview["removed"]
    assert "2 files restored" in result["message"] and "1 file the agent created removed" in result["message"]
    assert (root / "a.txt").read_text() == "alpha\nbeta\n"
    assert (root / "gone.txt").read_text() == "the shell deletes me\n"
    assert not (root / "src" / "new.py").exists()
    await again.client.close()


async def test_a_user_edit_after_the_agents_is_a_conflict_until_forced(fake: Any, dirs: tuple[str, Path]) -> None:
    home, root = dirs
    (root / "a.txt").write_text("one\n")
    (root / "b.txt").write_text("two\n")
    side = await started(home, root, fake, approvalMode="yolo")
    fake.script([call("write_file", path="a.txt", content="ONE\n"), call("write_file", path="b.txt", content="TWO\n")])
    await side.say("shout both")
    (root / "a.txt").write_text("ONE\nand my own line\n")  # the user's edit after the agent's
    first = (await users(side))[0]
    preview = await side.client.request("sidecar/previewRewind", {"messageId": first["id"]})
    assert preview["conflicts"] == [
        {"path": str(root / "a.txt"), "reason": "changed since the agent's edit (+1 −0 lines)"}
    ]
    result = await side.client.request("sidecar/rewind", {"messageId": first["id"], "restoreFiles": True})
    assert result["restored"] == [str(root / "b.txt")] and result["conflicts"] == preview["conflicts"]
    assert "left as they are" in result["message"]
    assert (root / "a.txt").read_text() == "ONE\nand my own line\n", "not overwritten"
    assert (root / "b.txt").read_text() == "two\n"

    fake.script([call("write_file", path="c.txt", content="agent\n")])
    await side.say("write c")
    (root / "c.txt").write_text("mine now\n")
    later = (await users(side))[-1]
    forced = await side.client.request(
        "sidecar/rewind", {"messageId": later["id"], "restoreFiles": True, "force": True}
    )
    assert forced["removed"] == [str(root / "c.txt")] and forced["conflicts"] == []
    assert not (root / "c.txt").exists()
    plain = await side.client.request("sidecar/listCheckpoints", {})
    assert plain["checkpoints"] == [], "both messages are rewound: nothing left to rewind to"
    await side.client.close()


async def test_a_fork_shares_its_parents_checkpoints_even_after_the_parent_is_deleted(
    fake: Any, dirs: tuple[str, Path]
) -> None:
    home, root = dirs
    (root / "a.txt").write_text("original\n")
    side = await started(home, root, fake, approvalMode="yolo")
    fake.script([call("write_file", path="a.txt", content="changed in the parent\n")])
    await side.say("change a")
    first = (await users(side))[0]
    parent = await session_id(side)
    forked = await side.client.request("sidecar/forkSession", {})
    assert forked["parentSessionId"] == parent
    await side.client.request("sidecar/deleteSession", {"sessionId": parent})  # the branch keeps a copy
    listed = await side.client.request("sidecar/listCheckpoints", {})
    assert [f["path"] for c in listed["checkpoints"] for f in c["files"]] == [str(root / "a.txt")]
    result = await side.client.request("sidecar/rewind", {"messageId": first["id"], "restoreFiles": True})
    assert result["restored"] == [str(root / "a.txt")] and (root / "a.txt").read_text() == "original\n"
    await side.client.close()


async def test_a_rewind_after_a_compaction_that_summarised_the_edits_still_restores_them(
    fake: Any, dirs: tuple[str, Path]
) -> None:
    home, root = dirs
    (root / "a.txt").write_text("original\n")
    side = await started(home, root, fake, approvalMode="yolo")
    fake.script([call("write_file", path="a.txt", content="edited long ago\n")])
    await side.say("edit a")
    for number in range(4):  # enough said that a summary is smaller than what it replaces
        await side.say(f"more talk {number}: " + "a long explanation of the module layout " * 150)
    compressed = await side.client.request("sidecar/compress", {})
    assert compressed["status"] == "COMPRESSED"
    await side.say("after the compaction")
    sent = [r for r in fake.requests() if r.kind == "stream"][-1].body["contents"]
    calls = [p["functionCall"]["name"] for c in sent for p in c["parts"] if "functionCall" in p]
    assert "write_file" not in calls, "the edit's turn is summarised, not sent verbatim"
    first = (await users(side))[0]
    result = await side.client.request("sidecar/rewind", {"messageId": first["id"], "restoreFiles": True})
    assert result["restored"] == [str(root / "a.txt")] and (root / "a.txt").read_text() == "original\n"
    await side.client.close()


async def test_without_restore_files_the_files_stay_and_checkpointing_off_saves_nothing(
    fake: Any, dirs: tuple[str, Path]
) -> None:
    home, root = dirs
    (root / "a.txt").write_text("original\n")
    side = await started(home, root, fake, approvalMode="yolo", checkpointing=False)
    fake.script([call("write_file", path="a.txt", content="edited\n")])
    await side.say("edit a")
    listed = await side.client.request("sidecar/listCheckpoints", {})
    assert listed["checkpointing"] is False and [c["files"] for c in listed["checkpoints"]] == [[]]
    first = (await users(side))[0]
    preview = await side.client.request("sidecar/previewRewind", {"messageId": first["id"]})
    assert "Checkpointing is off" in preview["message"] and preview["restored"] == []
    result = await side.client.request("sidecar/rewind", {"messageId": first["id"]})
    assert "Files the agent changed were not touched" in result["message"] and result["restored"] == []
    assert (root / "a.txt").read_text() == "edited\n"
    await side.client.close()


@pytest.mark.settings(approvalMode="yolo")
async def test_an_edit_made_in_the_editor_is_put_back_through_apply_edit(client: EditorClient, fake: Any) -> None:
    root = Path(client.workspace_root)
    (root / "notes.txt").write_text("alpha\nbeta\n")
    fake.script(
        [
            call("replace", path="notes.txt", old_string="beta", new_string="BETA"),
            call("write_file", path="made.txt", content="unsaved in the editor\n"),
        ]
    )
    await request(client, "sidecar/sendMessage", {"text": "capitalise beta, make a file"})
    assert len(client.edits) == 2 and (root / "notes.txt").read_text() == "alpha\nbeta\n", "the editor has the edits"
    assert not (root / "made.txt").exists()
    transcript = await request(client, "sidecar/getTranscript", {})
    first = next(e for e in transcript["entries"] if e.get("kind") == "user")
    result = await request(client, "sidecar/rewind", {"messageId": first["id"], "restoreFiles": True})
    assert result["restored"] == [str(root / "notes.txt")] and "in the editor" in result["message"]
    assert result["removed"] == [str(root / "made.txt")] and result["skipped"] == []
    assert len(client.edits) == 4, "the restore went to the editor's buffers, not around them"
    new_texts = [e["newText"] for change in client.edits[2]["documentChanges"] for e in change["edits"]]
    assert new_texts == ["beta\n"]
    assert client.edits[3]["documentChanges"] == [
        {"kind": "delete", "uri": (root / "made.txt").as_uri(), "options": {"ignoreIfNotExists": True}}
    ]
