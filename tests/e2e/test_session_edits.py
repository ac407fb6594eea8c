"""Fork, rewind, rename, delete, search and pins through real sidecar processes over stdio."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from sidecar.chat.actions import local_minute
from sidecar.core.history import parse_contents
from sidecar.fakegemini.validate import check_contents
from sidecar.rpc.client import RpcError
from tests.e2e.harness import server_env
from tests.e2e.test_sessions import Sidecar, chat_contents
from tests.waiting import until

PIN = "PINNED-FACT: deploys happen only on Tuesdays, from the release branch"


@pytest.fixture
def dirs() -> Iterator[tuple[str, str]]:
    with tempfile.TemporaryDirectory(prefix="home-") as home, tempfile.TemporaryDirectory(prefix="proj-") as proj:
        yield home, proj


async def started(dirs: tuple[str, str], fake: Any, **settings: Any) -> Sidecar:
    side = Sidecar(dirs[0], fake.url, dirs[1])
    await side.start(**settings)
    return side


async def transcript(side: Sidecar, session_id: str | None = None) -> dict[str, Any]:
    params = {"sessionId": session_id} if session_id else {}
    return await side.client.request("sidecar/getTranscript", params)  # type: ignore[no-any-return]


def users(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e["type"] == "message" and e["kind"] == "user"]


def user_texts_sent(fake: Any) -> list[str]:
    """The user turns' texts of the last request, after the <session_context> that opens every history (checked)."""
    texts = [c["parts"][0].get("text", "") for c in chat_contents(fake) if c["role"] == "user"]
    assert texts and texts[0].startswith("<session_context>"), texts[:1]
    return texts[1:]


def last_chat(fake: Any) -> Any:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary][-1]


def cli(home: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = server_env(SIDECAR_HOME=home)
    return subprocess.run([sys.executable, "-m", "sidecar", *args], env=env, capture_output=True, text=True)


async def test_fork_before_the_third_message_leaves_the_parent_as_it_was(fake: Any, dirs: tuple[str, str]) -> None:
    side = await started(dirs, fake)
    for text in ("one: the plan", "two: the details", "three: a wrong turn", "four: more of it"):
        await side.say(text)
    parent = await transcript(side)
    third = users(parent["entries"])[2]
    forked = await side.client.request("sidecar/forkSession", {"beforeMessageId": third["id"]})
    assert forked["parentSessionId"] == parent["sessionId"] and forked["sessionId"] != parent["sessionId"]
    assert forked["messageCount"] > 0
    await side.say("three, differently")
    sent = [t for t in user_texts_sent(fake) if not t.startswith("Here is")]
    assert sent == ["one: the plan", "two: the details", "three, differently"]
    check_contents(parse_contents(chat_contents(fake)))
    assert await transcript(side, parent["sessionId"]) == parent, "the parent is untouched"
    mine = await transcript(side)
    assert mine["sessionId"] == forked["sessionId"]
    assert [e["text"] for e in users(mine["entries"])] == ["one: the plan", "two: the details", "three, differently"]
    listed = {s["sessionId"]: s for s in await side.client.request("sidecar/listSessions", {})}
    assert listed[forked["sessionId"]]["parentSessionId"] == parent["sessionId"]
    # a fork of the whole live session (no params), and a fork of a message the branch inherited
    whole = await side.client.request("sidecar/forkSession", {})
    assert whole["parentSessionId"] == forked["sessionId"]
    deeper = await side.client.request("sidecar/forkSession", {"beforeMessageId": users(mine["entries"])[1]["id"]})
    assert deeper["parentSessionId"] == parent["sessionId"], "cut in the part read through from the first session"
    await side.say("two, again")
    assert [t for t in user_texts_sent(fake) if not t.startswith("Here is")] == ["one: the plan", "two, again"]
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/forkSession", {"beforeMessageId": "m999"})
    assert caught.value.code == -32004 and "no message 'm999'" in caught.value.message
    await side.client.close()


async def test_rewind_hides_the_messages_from_the_model_and_keeps_them_in_the_transcript(
    fake: Any, dirs: tuple[str, str]
) -> None:
    side = await started(dirs, fake)
    await side.say("keep: first question")
    await side.say("REWOUND-SECRET: a message to take back")
    await side.say("REWOUND-TOO: what came after it")
    entries = (await transcript(side))["entries"]
    target = users(entries)[1]
    mark = len(fake.requests())
    result = await side.client.request("sidecar/rewind", {"messageId": target["id"]})
    assert result["text"] == "REWOUND-SECRET: a message to take back"
    assert "Files the agent changed were not touched" in result["message"]
    # the message is named by its first words and time, never by its internal id
    sent = local_minute(target["time"])  # local, as the editors show times (the server runs on the user's machine)
    assert f"your message \u201cREWOUND-SECRET: a message to take back\u201d (sent {sent})" in result["message"]
    assert target["id"] not in result["message"]
    await side.say("after the rewind")
    await side.client.request("sidecar/compress", {})
    await side.say("after a compaction too")
    later = json.dumps([r.body for r in fake.requests()[mark:]])
    assert "REWOUND-SECRET" not in later and "REWOUND-TOO" not in later, "the model never sees them again"
    after = (await transcript(side))["entries"]
    marks = {e["text"]: e.get("rewound", False) for e in users(after)}
    assert marks == {
        "keep: first question": False,
        "REWOUND-SECRET: a message to take back": True,
        "REWOUND-TOO: what came after it": True,
        "after the rewind": False,
        "after a compaction too": False,
    }
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/rewind", {"messageId": target["id"]})
    assert "already rewound" in caught.value.message
    session = (await transcript(side))["sessionId"]
    await side.client.close()

    again = await started(dirs, fake)
    await again.client.request("sidecar/resumeSession", {"sessionId": session})
    await again.say("resumed after the rewind")
    sent = json.dumps(chat_contents(fake))
    assert "REWOUND-SECRET" not in sent and "after a compaction too" in sent
    await again.client.close()


async def three_sessions(side: Sidecar) -> list[str]:
    """Three recorded sessions, oldest first (a fourth, empty one is live)."""
    ids = []
    for text in ("alpha work", "beta work with a unicorn", "gamma work"):
        await side.say(text)
        ids.append((await transcript(side))["sessionId"])
        await side.client.request("sidecar/newSession", {})
    return ids


async def test_rename_sets_the_title_and_a_query_finds_exactly_it(fake: Any, dirs: tuple[str, str]) -> None:
    side = await started(dirs, fake)
    ids = await three_sessions(side)
    renamed = await side.client.request("sidecar/renameSession", {"sessionId": ids[0], "title": "Zebra migration"})
    assert renamed == {"sessionId": ids[0], "title": "Zebra migration"}
    found = await side.client.request("sidecar/listSessions", {"query": "zebra"})
    assert [s["sessionId"] for s in found["sessions"]] == [ids[0]] and found["nextCursor"] is None
    assert found["sessions"][0]["title"] == "Zebra migration"
    by_text = await side.client.request("sidecar/listSessions", {"query": "UNICORN"})
    assert [s["sessionId"] for s in by_text["sessions"]] == [ids[1]]
    result = cli(dirs[0], "sessions", "list", "--project", dirs[1], "--query", "zebra")
    assert result.returncode == 0 and ids[0] in result.stdout and ids[1] not in result.stdout
    await side.client.close()


async def test_paging_is_newest_first_and_covers_every_session(fake: Any, dirs: tuple[str, str]) -> None:
    side = await started(dirs, fake)
    ids = await three_sessions(side)
    pages: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = await side.client.request("sidecar/listSessions", {"limit": 1, **({"cursor": cursor} if cursor else {})})
        assert len(page["sessions"]) <= 1
        pages += page["sessions"]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert sorted(s["sessionId"] for s in pages) == sorted(ids) and len(pages) == 3
    keys = [(s["lastUpdated"], s["sessionId"]) for s in pages]
    assert keys == sorted(keys, reverse=True), "newest first (ties by session id)"
    updated = {s["sessionId"]: s["lastUpdated"] for s in pages}
    assert [updated[i] for i in ids] == sorted(updated[i] for i in ids), "created one after the other"
    plain = await side.client.request("sidecar/listSessions", {})
    assert isinstance(plain, list), "no params: the bare list, as before paging"
    assert [s["sessionId"] for s in plain] == [s["sessionId"] for s in pages], "the same order as the pages"
    await side.client.close()


async def test_bad_list_and_rename_params_are_refused_in_words(fake: Any, dirs: tuple[str, str]) -> None:
    side = await started(dirs, fake)
    ids = await three_sessions(side)
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/listSessions", {"cursor": "not-a-cursor!"})
    assert caught.value.code == -32602 and "cursor" in caught.value.message
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/renameSession", {"sessionId": ids[1], "title": "  "})
    assert "title is empty" in caught.value.message
    await side.client.close()


async def test_delete_moves_to_the_trash_and_restore_brings_it_back(fake: Any, dirs: tuple[str, str]) -> None:
    side = await started(dirs, fake)
    await side.say("a session to delete")
    sid = (await transcript(side))["sessionId"]
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/deleteSession", {"sessionId": sid})
    assert "live session and cannot be deleted" in caught.value.message
    await side.client.request("sidecar/newSession", {})
    deleted = await side.client.request("sidecar/deleteSession", {"sessionId": sid})
    assert "trash" in deleted["message"] and "restored for 30 days" in deleted["message"]
    assert "`" not in deleted["message"] and "sidecar sessions" not in deleted["message"], "no CLI hint in the toast"
    assert sid not in [s["sessionId"] for s in await side.client.request("sidecar/listSessions", {})]
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/resumeSession", {"sessionId": sid})
    assert caught.value.code == -32004 and "deleted" in caught.value.message and "Restore it" in caught.value.message
    restored = cli(dirs[0], "sessions", "restore", sid, "--project", dirs[1])
    assert restored.returncode == 0, restored.stderr
    assert sid in [s["sessionId"] for s in await side.client.request("sidecar/listSessions", {})]
    resumed = await side.client.request("sidecar/resumeSession", {"sessionId": sid})
    assert resumed["sessionId"] == sid
    await side.client.request("sidecar/newSession", {})
    removed = cli(dirs[0], "sessions", "rm", sid, "--project", dirs[1])
    assert removed.returncode == 0 and "trash" in removed.stdout
    again = cli(dirs[0], "sessions", "restore", "no-such-id", "--project", dirs[1])
    assert again.returncode == 1 and "No deleted session" in again.stderr
    await side.client.close()


async def test_deleting_a_parent_keeps_its_branch_and_restore_session_brings_it_back(
    fake: Any, dirs: tuple[str, str]
) -> None:
    """Deleting and restoring sessions over the wire: a parent with a branch is deleted, the branch keeps its whole
    history, sidecar/listDeletedSessions lists it and sidecar/restoreSession brings it back."""
    side = await started(dirs, fake)
    await side.say("the parent's first words")
    parent = (await transcript(side))["sessionId"]
    fork = await side.client.request("sidecar/forkSession", {})
    await side.say("said in the branch")
    await side.client.request("sidecar/newSession", {})
    deleted = await side.client.request("sidecar/deleteSession", {"sessionId": parent})
    assert "\u201cthe parent's first words\u201d" in deleted["message"] and parent[:8] in deleted["message"]
    assert parent not in deleted["message"], "8 characters of the id, not the whole id"
    trash = await side.client.request("sidecar/listDeletedSessions", {})
    assert trash["keepDays"] == 30 and [e["sessionId"] for e in trash["sessions"]] == [parent]
    assert trash["sessions"][0]["title"] == "the parent's first words" and trash["sessions"][0]["deletedAt"]
    await side.client.request("sidecar/resumeSession", {"sessionId": fork["sessionId"]})
    texts = [e["text"] for e in users((await transcript(side))["entries"])]
    assert texts == ["the parent's first words", "said in the branch"]
    await side.say("and on")
    assert user_texts_sent(fake)[-3:] == ["the parent's first words", "said in the branch", "and on"]
    restored = await side.client.request("sidecar/restoreSession", {"sessionId": parent})
    assert restored["sessionId"] == parent and restored["title"] == "the parent's first words"
    assert "restored" in restored["message"]
    listed = {s["sessionId"]: s for s in await side.client.request("sidecar/listSessions", {})}
    assert parent in listed and listed[fork["sessionId"]]["parentSessionId"] == parent
    assert (await side.client.request("sidecar/listDeletedSessions", {}))["sessions"] == []
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/restoreSession", {"sessionId": parent})
    assert caught.value.code == -32004 and "No deleted session" in caught.value.message
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/restoreSession", {"sessionId": "../../etc/passwd"})
    assert caught.value.code == -32004 and "invalid session id" in caught.value.message
    await side.client.close()


async def test_a_pin_reaches_the_model_after_every_history_rewrite(fake: Any, dirs: tuple[str, str]) -> None:
    side = await started(dirs, fake, tokenLimit=6000, compressionThreshold=0.5)
    await side.say("start")
    before = side.usage[-1]["promptTokenCount"]
    pinned = await side.client.request("sidecar/pin", {"text": PIN})
    assert (await side.client.request("sidecar/listPins", {}))["pins"] == [{"pinId": pinned["pinId"], "text": PIN}]
    await until(lambda: side.usage[-1]["promptTokenCount"] > before, "the pin to count in the usage shown")

    def carries_pin() -> bool:
        return PIN in json.dumps(last_chat(fake).body.get("systemInstruction"))

    await side.say("first turn with the pin")
    assert carries_pin()
    padding = " ".join(f"word{i}" for i in range(120))
    # Counted before the fillers: the summary may be prepared in the background while they are sent,
    # and the manual compaction below then applies it; either way every summary call made since the pin keeps it.
    summaries = len([r for r in fake.requests() if r.summary])
    for i in range(4):
        await side.say(f"filler {i}: {padding}")
    assert (await side.client.request("sidecar/compress", {}))["status"] == "COMPRESSED"
    asked = [r for r in fake.requests() if r.summary][summaries:]
    assert asked and all(PIN in json.dumps(r.body["contents"][-1]) for r in asked), "the summarizer must keep it"
    await side.say("after a manual compaction")
    assert carries_pin()
    result = await side.client.request("sidecar/compress", {"instructions": "focus on the filler"})
    assert result["status"] in ("COMPRESSED", "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT", "NOOP")
    await side.say("after a focused compaction")
    assert carries_pin()
    compactions = len(side.compressed)
    for i in range(12):
        await side.say(f"more {i}: {padding}")
        if any(c["trigger"] == "auto" for c in side.compressed[compactions:]):
            break
    assert any(c["trigger"] == "auto" and c["status"] == "COMPRESSED" for c in side.compressed[compactions:])
    assert carries_pin(), "after an automatic compaction"
    assert (await side.client.request("sidecar/undoCompaction", {}))["restored"] is True
    await side.say("after undo")
    assert carries_pin()
    sid = (await transcript(side))["sessionId"]
    await side.client.close()

    again = await started(dirs, fake)
    await again.client.request("sidecar/resumeSession", {"sessionId": sid})
    await again.say("after resume")
    assert carries_pin()
    await again.client.request("sidecar/forkSession", {})
    await again.say("in a fork")
    assert carries_pin()
    assert [p["text"] for p in (await again.client.request("sidecar/listPins", {}))["pins"]] == [PIN]
    await again.client.request("sidecar/unpin", {"pinId": pinned["pinId"]})
    await again.say("unpinned")
    assert not carries_pin()
    with pytest.raises(RpcError) as caught:
        await again.client.request("sidecar/unpin", {"pinId": pinned["pinId"]})
    assert "No pinned fact" in caught.value.message
    with pytest.raises(RpcError) as caught:
        await again.client.request("sidecar/pin", {"text": "   "})
    assert caught.value.code == -32602
    await again.client.close()


@pytest.mark.parametrize("method", ["sidecar/forkSession", "sidecar/rewind"])
async def test_sigkill_during_fork_or_rewind_loses_nothing(fake: Any, dirs: tuple[str, str], method: str) -> None:
    side = await started(dirs, fake)
    said = ["k1: first", "k2: second", "k3: third"]
    for text in said:
        await side.say(text)
    state = await transcript(side)
    params = {"beforeMessageId" if method.endswith("Session") else "messageId": users(state["entries"])[1]["id"]}
    pending = asyncio.ensure_future(side.client.request(method, params))
    await asyncio.sleep(0)  # the request is on its way
    side.kill()
    await side.client._proc.wait()  # type: ignore[union-attr]
    pending.cancel()

    again = await started(dirs, fake)
    listed = await again.client.request("sidecar/listSessions", {})
    assert state["sessionId"] in [s["sessionId"] for s in listed]
    for info in listed:  # whatever got written (a branch or not, a rewind or not) reads back whole
        entries = (await transcript(again, info["sessionId"]))["entries"]
        assert [e["text"] for e in users(entries)][:1] == ["k1: first"]
    kept = (await transcript(again, state["sessionId"]))["entries"]
    assert [e["text"] for e in users(kept)] == said, "every message is still in the transcript"
    resumed = await again.client.request("sidecar/resumeSession", {"sessionId": state["sessionId"]})
    assert resumed["sessionId"] == state["sessionId"]
    await again.say("after the kill")
    check_contents(parse_contents(chat_contents(fake)))
    await again.client.close()


async def test_message_counts_leave_out_the_hidden_session_context(fake: Any, dirs: tuple[str, str]) -> None:
    """A fork or rewind before the first message holds only the hidden <session_context> turn: 0 messages, not 1."""
    side = await started(dirs, fake)
    await side.say("one: the plan")
    first = users((await transcript(side))["entries"])[0]
    forked = await side.client.request("sidecar/forkSession", {"beforeMessageId": first["id"]})
    assert forked["messageCount"] == 0
    await side.say("one, again")
    again = users((await transcript(side))["entries"])[-1]
    rewound = await side.client.request("sidecar/rewind", {"messageId": again["id"]})
    assert rewound["messageCount"] == 0
    resumed = await side.client.request("sidecar/resumeSession", {"sessionId": forked["parentSessionId"]})
    assert resumed["messageCount"] == 2, "the user's message and the reply, not the session context"
