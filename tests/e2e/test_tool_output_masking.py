"""Old tool outputs masked before requests, through the real server: the request the fake gets, the notice, read_file
reading a masked output back, and the same masked view after a resume and after undoing a compaction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import EditorClient, notes, request

MASKING = {"protectionTokens": 2_000, "minPrunableTokens": 1_500, "paybackRequests": 0}
TAG = "<tool_output_masked>"


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"kind": "function_call", "name": name, "args": args, "match": "chat"}


def last_contents(fake: Any) -> list[dict[str, Any]]:
    return [r for r in fake.requests() if r.kind == "stream"][-1].body["contents"]  # type: ignore[no-any-return]


def response_of(contents: list[dict[str, Any]], marker: str) -> dict[str, Any]:
    """The history item whose function response holds `marker` (masked or not)."""
    for content in contents:
        for part in content.get("parts", []):
            if marker in str(part.get("functionResponse", {}).get("response", "")):
                return content
    raise AssertionError(f"no function response holds {marker!r}")


async def say(client: EditorClient, text: str) -> dict[str, Any]:
    return await request(client, "sidecar/sendMessage", {"text": text})  # type: ignore[no-any-return]


@pytest.mark.settings(toolOutputMasking=MASKING, tokenLimit=1_000_000)
async def test_masked_outputs_are_announced_read_back_and_kept_masked_after_resume_and_undo(
    client: EditorClient, fake: Any
) -> None:
    root = Path(client.workspace_root)
    for i in range(5):  # about 1,000 tokens each
        (root / f"f{i}.txt").write_text("".join(f"file {i} line {k}\n" for k in range(280)))
    fake.script([call("read_file", path=f"f{i}.txt") for i in range(5)])
    await say(client, "read the five files")

    contents = last_contents(fake)
    first = response_of(contents, "file 0 line")
    output = first["parts"][0]["functionResponse"]["response"]["output"]
    assert output.startswith(TAG) and "file 0 line 279" in output and "file 0 line 100" not in output
    assert TAG not in str(response_of(contents, "file 4 line")), "the newest output is sent whole"
    (notice,) = notes(client, "sidecar/toolOutputsMasked")
    assert notice["maskedCount"] == 2 and notice["message"].startswith("Masked 2 old tool outputs (")

    # the model reads a masked output back from the path its preview names
    saved = output.split("Full output available at: ")[1].split("\n")[0]
    fake.script([call("read_file", path=saved)])
    await say(client, "read the first file's full output")
    back = last_contents(fake)[-1]["parts"][0]["functionResponse"]["response"]["output"]
    assert "file 0 line 100" in back and "file 0 line 279" in back

    transcript = await request(client, "sidecar/getTranscript", {})
    masked = [e for e in transcript["entries"] if e.get("masked")]
    told = sum(n["maskedCount"] for n in notes(client, "sidecar/toolOutputsMasked"))  # one output per message here
    assert len(masked) == told >= 2 and {e["kind"] for e in masked} == {"toolResult"}
    session_id = transcript["sessionId"]

    # resume: the replayed history shows the model the same masked item, byte for byte
    await request(client, "sidecar/newSession", {})
    await request(client, "sidecar/resumeSession", {"sessionId": session_id})
    await say(client, "after the resume")
    assert response_of(last_contents(fake), "file 0 line") == first

    # undo of a compaction: the history before it had the item masked, and so has the restored one
    assert (await request(client, "sidecar/compress", {}))["status"] == "COMPRESSED"
    assert (await request(client, "sidecar/undoCompaction", {}))["restored"] is True
    await say(client, "after the undo")
    assert response_of(last_contents(fake), "file 0 line") == first
