"""read_file of a file the model still sees, unchanged, in an earlier result answers a short note (unless `force` or
a range is asked), through the real sidecar process against the fake Gemini."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.harness import EditorClient, request


def read(call_id: str, **args: Any) -> dict[str, Any]:
    return {"kind": "function_call", "name": "read_file", "args": args, "id": call_id, "match": "chat"}


def response(fake: Any, call_id: str) -> str:
    """The output the model got for call `call_id` (from the request that carried it)."""
    for record in reversed(fake.requests()):
        for content in record.body.get("contents", []) if isinstance(record.body, dict) else []:
            for part in content["parts"]:
                answer = part.get("functionResponse")
                if answer is not None and answer.get("id") == call_id:
                    return str(answer["response"].get("output", answer["response"]))
    raise AssertionError(f"no response to {call_id}")


async def ask(client: EditorClient, fake: Any, call_id: str, **args: Any) -> str:
    fake.script([read(call_id, **args)])
    await request(client, "sidecar/sendMessage", {"text": f"read ({call_id})"})
    return response(fake, call_id)


async def test_a_second_read_of_an_unchanged_file_is_a_note_until_forced_or_changed(
    client: EditorClient, fake: Any
) -> None:
    source = Path(client.workspace_root) / "parser.py"
    source.write_text("".join(f"def rule_{n}():\n    return {n}\n" for n in range(40)))
    first = await ask(client, fake, "r1", path="parser.py")
    assert "def rule_39" in first
    again = await ask(client, fake, "r2", path="parser.py")
    assert again.startswith("[parser.py is unchanged since read_file call r1") and "def rule_" not in again
    third = await ask(client, fake, "r3", path=str(source))  # another spelling of the same file
    assert third.startswith("[parser.py is unchanged since read_file call r1")
    forced = await ask(client, fake, "r4", path="parser.py", force=True)
    assert forced == first
    ranged = await ask(client, fake, "r5", path="parser.py", start_line=1, end_line=4)
    assert "def rule_1" in ranged and "unchanged" not in ranged
    source.write_text(source.read_text() + "def rule_new():\n    return 0\n")
    changed = await ask(client, fake, "r6", path="parser.py")
    assert "def rule_new" in changed
    after = await ask(client, fake, "r7", path="parser.py")
    assert after.startswith("[parser.py is unchanged since read_file call r6")


async def test_after_a_compaction_a_file_too_large_to_come_back_is_read_in_full_again(
    client: EditorClient, fake: Any
) -> None:
    """The earlier result was summarised away and the file is over the working set's 5,000 tokens a file, so it was
    not re-attached either: the model gets the whole file again."""
    lines = "".join(f"note {n}: a line of notes about the parser\n" for n in range(700))  # ~7,000 tokens
    (Path(client.workspace_root) / "notes.md").write_text("# Notes\n" + lines)
    first = await ask(client, fake, "n1", path="notes.md")
    for i in range(4):  # the newest 30% of the history: the read is in the summarised part
        await request(client, "sidecar/sendMessage", {"text": f"go on {i} " + "padding words " * 800})
    assert (await request(client, "sidecar/compress", {}))["status"] == "COMPRESSED"
    again = await ask(client, fake, "n2", path="notes.md")
    assert again == first, "the earlier result was compacted away: the model gets the file again"
