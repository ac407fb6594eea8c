"""Two windows on one session: real sidecar processes on one workspace and one SIDECAR_HOME."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from argparse import Namespace
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.core.history import parse_contents
from sidecar.fakegemini.validate import check_contents
from sidecar.recording.cli import main_sessions_list
from tests.e2e.test_sessions import Sidecar, chat_contents
from tests.waiting import until


@pytest.fixture
def dirs() -> Iterator[tuple[str, str]]:
    """(SIDECAR_HOME, workspace folder) shared by the sidecars of one test."""
    with tempfile.TemporaryDirectory(prefix="home-") as home, tempfile.TemporaryDirectory(prefix="proj-") as proj:
        yield home, proj


NOTICE = "is open in another window; continuing in a new branch"


def user_texts(entries: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in entries if e["type"] == "message" and e["kind"] == "user"]


async def started(home: str, fake: Any, workspace: str) -> Sidecar:
    side = Sidecar(home, fake.url, workspace)
    await side.start()
    return side


async def until_usage(side: Sidecar, session_id: str) -> dict[str, Any]:
    """The first tokenUsage push for `session_id` (the state wanted, not the next push)."""
    usage: dict[str, Any] = await until(
        lambda: next((u for u in reversed(side.usage) if u["sessionId"] == session_id), None),
        f"a tokenUsage for {session_id}",
    )
    return usage


async def test_second_window_forks_and_both_windows_keep_every_message(fake: Any, dirs: tuple[str, str]) -> None:
    home, workspace = dirs
    a = await started(home, fake, workspace)
    await a.say("A1: the parser is in lib/parse.py")
    await a.say("A2: add a test for empty input")
    session = (await a.client.request("sidecar/getTranscript", {}))["sessionId"]

    b = await started(home, fake, workspace)
    resumed = await b.client.request("sidecar/resumeSession", {"sessionId": session})
    branch = resumed["sessionId"]
    assert branch != session and resumed["forked"] is True and resumed["parentSessionId"] == session
    assert f"({session[:8]}) {NOTICE} ({branch[:8]})" in resumed["message"]
    assert session not in resumed["message"] and branch not in resumed["message"], "8 characters, not the whole id"
    assert resumed["messageCount"] > 0, "the branch starts with A's history"
    await until_usage(b, branch)

    await a.say("A3: said in window A after the fork")
    await b.say("B1: said in window B")
    await a.say("A4: window A again")
    await b.say("B2: window B again")
    await a.client.close()
    await b.client.close()

    c = await started(home, fake, workspace)
    listed = {s["sessionId"]: s for s in await c.client.request("sidecar/listSessions", {})}
    assert set(listed) == {session, branch}
    assert listed[branch]["parentSessionId"] == session and listed[session]["parentSessionId"] is None
    parent = await c.client.request("sidecar/getTranscript", {"sessionId": session})
    assert user_texts(parent["entries"]) == [
        "A1: the parser is in lib/parse.py",
        "A2: add a test for empty input",
        "A3: said in window A after the fork",
        "A4: window A again",
    ]
    forked = await c.client.request("sidecar/getTranscript", {"sessionId": branch})
    assert user_texts(forked["entries"]) == [
        "A1: the parser is in lib/parse.py",
        "A2: add a test for empty input",
        "B1: said in window B",
        "B2: window B again",
    ], "the branch reads its beginning through from A's file"
    assert [e["parentSessionId"] for e in forked["entries"] if e["type"] == "fork"] == [session]
    ids = [e["id"] for e in forked["entries"] if e["type"] == "message"]
    assert len(ids) == len(set(ids)), "message ids stay unique across the fork"

    for sid, last in ((session, "A4: window A again"), (branch, "B2: window B again")):
        again = await c.client.request("sidecar/resumeSession", {"sessionId": sid})
        assert again["sessionId"] == sid and again["forked"] is False, "nobody holds it now: no new branch"
        await c.say(f"continuing {sid}")
        contents = chat_contents(fake)
        check_contents(parse_contents(contents))  # roles, call/response pairing: valid for the API
        texts = [c["parts"][0].get("text", "") for c in contents if c["role"] == "user"]
        assert last in texts and texts[-1] == f"continuing {sid}"
    await c.client.close()


async def test_a_killed_holder_releases_the_session(fake: Any, dirs: tuple[str, str]) -> None:
    home, workspace = dirs
    a = await started(home, fake, workspace)
    await a.say("recorded by A, which is then killed")
    session = (await a.client.request("sidecar/getTranscript", {}))["sessionId"]
    b = await started(home, fake, workspace)  # B waits while A holds the session
    a.kill()
    await a.client._proc.wait()  # type: ignore[union-attr]
    resumed = await b.client.request("sidecar/resumeSession", {"sessionId": session})
    assert resumed["sessionId"] == session and resumed["forked"] is False, "the lock died with A: no branch"
    await b.say("B continues A's own session")
    transcript = await b.client.request("sidecar/getTranscript", {})
    assert user_texts(transcript["entries"]) == ["recorded by A, which is then killed", "B continues A's own session"]
    await b.client.close()


async def test_two_sidecars_starting_at_once_never_collide(fake: Any, dirs: tuple[str, str]) -> None:
    home, workspace = dirs
    a, b = await asyncio.gather(started(home, fake, workspace), started(home, fake, workspace))
    await asyncio.gather(a.say("from A"), b.say("from B"))
    ta, tb = await asyncio.gather(
        a.client.request("sidecar/getTranscript", {}), b.client.request("sidecar/getTranscript", {})
    )
    assert ta["sessionId"] != tb["sessionId"]
    assert user_texts(ta["entries"]) == ["from A"] and user_texts(tb["entries"]) == ["from B"]
    files = sorted(p.stem for p in Path(home).rglob("*.jsonl"))
    assert files == sorted([ta["sessionId"], tb["sessionId"]])
    await asyncio.gather(a.client.close(), b.client.close())


WRITER = textwrap.dedent(
    """
    import sys
    from sidecar.core.history import text_content
    from sidecar.recording.store import SessionStore
    store = SessionStore(sys.argv[1])
    writer = store.create("busy", model="m")
    for i in range(int(sys.argv[2])):
        writer.message(text_content("user", f"line {i} " + "x" * (i % 700)), kind="user")
        if i % 7 == 0:
            writer.sync()
    writer.close()
    """
)


def test_listing_while_another_process_writes_is_consistent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "SIDECAR_HOME": str(home)}
    total = 3000
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(project), str(total)], env=env)
    seen: list[int] = []
    monkeypatch.setenv("SIDECAR_HOME", str(home))
    try:
        while True:
            done = proc.poll() is not None
            out = io.StringIO()
            assert main_sessions_list(Namespace(project=str(project), json=True, all=False), out) == 0
            infos = json.loads(out.getvalue())  # a whole, parseable answer every time
            if infos:
                [info] = infos
                assert info["sessionId"] == "busy" and 0 <= info["messageCount"] <= total
                seen.append(info["messageCount"])
            if done:
                break
    finally:
        proc.wait()
    assert proc.returncode == 0
    assert seen == sorted(seen), "counts never go backwards"
    assert seen[-1] == total
