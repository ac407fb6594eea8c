"""Summarise up to a message, preview / edit / apply a summary and rate it, through a real sidecar over stdio."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from sidecar.rpc.client import RpcError
from tests.e2e.test_session_edits import cli, started, transcript, users


@pytest.fixture
def dirs() -> Iterator[tuple[str, str]]:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="home-") as home, tempfile.TemporaryDirectory(prefix="proj-") as proj:
        yield home, proj


def summary_texts(fake: Any) -> str:
    return json.dumps([r.body["contents"] for r in fake.requests() if r.summary])


async def test_up_to_preview_edit_apply_rate_over_stdio(fake: Any, dirs: tuple[str, str]) -> None:
    side = await started(dirs, fake)
    for word in ("ALPHA", "BRAVO", "CHARLIE", "DELTA"):
        await side.say(f"{word}: the {word.lower()} step" + " of the plan" * 60)
    mine = users((await transcript(side))["entries"])

    with pytest.raises(RpcError) as bad:
        await side.client.request("sidecar/compress", {"upToMessageId": "m-nope"})
    assert bad.value.code == -32602 and "Cannot summarise up to message m-nope" in bad.value.message

    done = await side.client.request("sidecar/compress", {"upToMessageId": mine[2]["id"]})
    assert done["status"] == "COMPRESSED" and done["compactionId"]
    assert "BRAVO" in summary_texts(fake) and "CHARLIE" not in summary_texts(fake)
    undone = await side.client.request("sidecar/undoCompaction", {})
    assert undone["restored"]

    before = len(fake.requests())
    preview = await side.client.request("sidecar/previewCompaction", {"upToMessageId": mine[3]["id"]})
    assert preview["previewId"] and preview["snapshot"].startswith("<state_snapshot>")
    assert preview["newTokenCount"] < preview["originalTokenCount"]
    assert [e for e in (await transcript(side))["entries"] if e["type"] == "compaction"][-1]["undone"]
    applied = await side.client.request(
        "sidecar/applyCompaction",
        {"previewId": preview["previewId"], "snapshot": "EDITED-BY-USER: keep the delta step."},
    )
    assert applied["status"] == "COMPRESSED" and applied["edited"]
    await side.say("and now?")
    assert "EDITED-BY-USER" in json.dumps([r.body for r in fake.requests()[before:] if not r.summary])

    rated = await side.client.request("sidecar/rateCompaction", {"rating": "lost", "note": "the step names"})
    assert rated["compactionId"] == applied["compactionId"]
    last = [e for e in (await transcript(side))["entries"] if e["type"] == "compaction"][-1]
    assert last["edited"] and last["rating"] == "lost" and last["ratingNote"] == "the step names"
    stats = cli(dirs[0], "sessions", "stats", "--project", dirs[1], "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["ratings"] == {"good": 0, "lost": 1, "unrated": 1, "edited": 1}
    text = cli(dirs[0], "sessions", "stats", "--project", dirs[1]).stdout
    assert "rated lost something: the step names" in text and "1 lost something" in text
    await side.client.close()
