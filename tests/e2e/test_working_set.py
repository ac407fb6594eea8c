"""After a compaction the files the summarised part worked on come back, current content within a budget, marked as
re-attached; through the real sidecar process against the fake Gemini."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sidecar.core.working_set import reattached_files
from tests.e2e.harness import EditorClient, request

PADDING = " ".join(f"word{i}" for i in range(100))


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"kind": "function_call", "name": name, "args": args, "id": call_id, "match": "chat"}


def reattached_part(record: Any) -> str:
    """The re-attached files part of a request's snapshot turn."""
    for content in record.body["contents"]:
        texts = [p.get("text", "") for p in content["parts"]]
        if texts and "<state_snapshot>" in texts[0]:
            return next((t for t in texts[1:] if t.startswith("<reattached_files>")), "")
    raise AssertionError("no snapshot turn in the request")


@pytest.mark.settings(tokenLimit=200_000, backgroundCompaction=False)
async def test_the_files_worked_on_come_back_after_a_compaction(
    client: EditorClient, fake: Any, tmp_path: Path
) -> None:
    root = Path(client.workspace_root)
    (root / "small.py").write_text("VALUE = 1\n")
    (root / "big.py").write_text("".join(f"def f{n}(): return {n}  # padding to make it big\n" for n in range(600)))
    (root / "old.py").write_text("OLD = True\n")
    (root / "gone.py").write_text("GONE = True\n")
    (root / "escape.py").write_text("INSIDE = True\n")
    outside = tmp_path  # not in the workspace
    (outside / "secret.py").write_text("SECRET = 'outside the workspace'\n")
    for i, name in enumerate(["big.py", "old.py", "gone.py", "escape.py", "small.py"]):
        fake.script([call("read_file", f"r{i}", path=name)])
        await request(client, "sidecar/sendMessage", {"text": f"Read {name}. {PADDING}"})
    fake.script([call("write_file", "w1", path="new.py", content="NEW = 2\n")])
    await request(client, "sidecar/sendMessage", {"text": f"Write new.py. {PADDING}"})
    for i in range(8):  # the newest 30% (by size) are plain turns: the file work is all in the summarised part
        await request(client, "sidecar/sendMessage", {"text": f"Next {i}. {PADDING * 3}"})
    (root / "small.py").write_text("VALUE = 2  # changed after it was read\n")
    (root / "gone.py").unlink()
    (root / "escape.py").unlink()
    (root / "escape.py").symlink_to(outside / "secret.py")  # swapped for a way out since it was read
    assert (await request(client, "sidecar/compress", {}))["status"] == "COMPRESSED"
    await request(client, "sidecar/sendMessage", {"text": "go on"})
    part = reattached_part(chats(fake)[-1])
    assert reattached_files(part) == ["new.py", "small.py", "old.py"], "most recent first, within the budget"
    assert "- not re-attached: big.py (~" in part and "over the 5,000" in part
    assert "- not re-attached: gone.py" in part
    assert "- not re-attached: escape.py" in part and "SECRET" not in part, "read as read_file reads: confined"
    assert "VALUE = 2  # changed after it was read" in part, "the current content, not what was read"
    assert "NEW = 2" in part and "OLD = True" in part and "def f599" not in part
    assert "do not read them again" in part
    # reading a re-attached file again, unchanged, answers the note; a changed one is read in full
    fake.script([call("read_file", "again", path="old.py")])
    await request(client, "sidecar/sendMessage", {"text": "read old.py again"})
    answers = [
        p["functionResponse"] for c in chats(fake)[-1].body["contents"] for p in c["parts"] if "functionResponse" in p
    ]
    assert answers[-1]["response"]["output"].startswith(
        "[old.py is unchanged since it was re-attached after the conversation summary"
    )
    (root / "old.py").write_text("OLD = False\n")
    fake.script([call("read_file", "changed", path="old.py")])
    await request(client, "sidecar/sendMessage", {"text": "and once more"})
    answers = [
        p["functionResponse"] for c in chats(fake)[-1].body["contents"] for p in c["parts"] if "functionResponse" in p
    ]
    assert "OLD = False" in answers[-1]["response"]["output"]
