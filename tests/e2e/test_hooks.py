"""Hooks end to end (docs/hooks.md): the real server, the fake Gemini and real hook scripts written by the test."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio

from tests.reliability.checks import chat_requests
from tests.reliability.conftest import make_dirs
from tests.reliability.proc import Sidecar, records

Spawn = Callable[..., Awaitable[Sidecar]]
WARNING = 2


@pytest_asyncio.fixture
async def dirs() -> AsyncIterator[tuple[Path, Path]]:
    home, workspace = make_dirs()
    yield home, workspace
    shutil.rmtree(home.parent, ignore_errors=True)


@pytest_asyncio.fixture
async def spawn(dirs: tuple[Path, Path], fake: Any) -> AsyncIterator[Spawn]:
    """`await spawn(**settings)`: a started sidecar on this test's home and workspace (stopped at teardown)."""
    started: list[Sidecar] = []

    async def start(**settings: Any) -> Sidecar:
        side = Sidecar(*dirs, fake.url)
        started.append(side)
        return await side.start(**settings)

    yield start
    for side in started:
        await side.stop()


def hook(folder: Path, name: str, body: str, **spec: Any) -> dict[str, Any]:
    """A hook entry running a small Python script that has its stdin JSON as `event` (and json, sys imported)."""
    script = folder / f"{name}.py"
    script.write_text("import json, sys\nevent = json.load(sys.stdin)\n" + body)
    return {"command": f"{sys.executable} {script}", **spec}


def user_parts(request: Any) -> list[dict[str, Any]]:
    """The parts of the last user content of a chat request."""
    content = [c for c in request.body["contents"] if c["role"] == "user"][-1]
    return content["parts"]  # type: ignore[no-any-return]


def trust(side: Sidecar, trusted: bool | None) -> None:
    side.notify("sidecar/ideContext", {"openFiles": [], "isTrusted": trusted})


def plant(workspace: Path, hooks: dict[str, Any]) -> None:
    settings = workspace / ".sidecar" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"sidecar": {"hooks": hooks}}))


CONTEXT = "print(json.dumps({'additionalContext': 'ticket <42> for: ' + event['prompt']}))\n"


async def test_before_agent_context_reaches_the_model_is_recorded_and_resumed(
    spawn: Spawn, fake: Any, dirs: tuple[Path, Path]
) -> None:
    home, workspace = dirs
    seen = home.parent / "seen.json"
    body = f"open({str(seen)!r}, 'w').write(json.dumps(event))\n" + CONTEXT
    side = await spawn(hooks={"BeforeAgent": [hook(home.parent, "ctx", body)]})
    reply = await side.say("what is the ticket?")
    assert reply["finishReason"] == "STOP"
    wrapped = "<hook_context>ticket &lt;42&gt; for: what is the ticket?</hook_context>"
    assert user_parts(chat_requests(fake)[-1]) == [{"text": "what is the ticket?"}, {"text": wrapped}]
    event = json.loads(seen.read_text())
    assert {k: event[k] for k in ("hook_event_name", "prompt", "cwd", "session_id")} == {
        "hook_event_name": "BeforeAgent",
        "prompt": "what is the ticket?",
        "cwd": str(workspace),
        "session_id": side.session_id(),
    }

    session_id = side.session_id()
    (mine,) = [r for r in records(side.session_path()) if r["type"] == "message" and r["kind"] == "user"]
    assert mine["content"]["parts"] == [{"text": "what is the ticket?"}, {"text": wrapped}], "recorded as sent"
    transcript = await side.request("sidecar/getTranscript", {"sessionId": session_id})
    shown = [e["text"] for e in transcript["entries"] if e.get("kind") == "user"]
    assert shown == ["what is the ticket?"], "the transcript shows the message as typed"
    await side.stop()

    again = await spawn()  # no hooks now: the resumed history still carries what the model got
    await again.request("sidecar/resumeSession", {"sessionId": session_id})
    await again.say("and now?")
    contents = chat_requests(fake)[-1].body["contents"]
    assert {"role": "user", "parts": [{"text": "what is the ticket?"}, {"text": wrapped}]} in contents


async def test_before_agent_block_sends_nothing_and_says_why(spawn: Spawn, fake: Any, dirs: tuple[Path, Path]) -> None:
    home, _ = dirs
    body = "if 'prod' in event['prompt']:\n    sys.stderr.write('no deploys on Friday')\n    sys.exit(2)\n"
    side = await spawn(hooks={"BeforeAgent": [hook(home.parent, "gate", body)]})
    await side.say("hello")
    sent = len(chat_requests(fake))
    blocked = await side.say("deploy to prod")
    assert blocked["finishReason"] == "HOOK_BLOCKED" and blocked["text"] == ""
    assert len(chat_requests(fake)) == sent, "the model was not called"
    assert "Sidecar: Your message was not sent: a BeforeAgent hook blocked it: no deploys on Friday" in side.messages(
        WARNING
    )
    await side.say("what now?")
    assert "deploy to prod" not in json.dumps(chat_requests(fake)[-1].body["contents"]), "never sent later either"
    transcript = await side.request("sidecar/getTranscript", {"sessionId": side.session_id()})
    notes = [e["text"] for e in transcript["entries"] if e.get("kind") == "info"]
    assert "Not sent (a BeforeAgent hook blocked it: no deploys on Friday): deploy to prod" in notes
    mine = [e["text"] for e in transcript["entries"] if e.get("kind") == "user"]
    assert mine == ["hello", "what now?"]


async def test_editor_and_workspace_hooks_are_concatenated_in_order(
    spawn: Spawn, fake: Any, dirs: tuple[Path, Path]
) -> None:
    """A trusted, approved workspace file's hooks run after the editor's, for every event; before, its list
    replaced the editor's."""
    home, workspace = dirs
    ran = home.parent / "ran"

    def marking(name: str) -> dict[str, Any]:
        body = f"open({str(ran)!r}, 'a').write('{name} ' + event['hook_event_name'] + '\\n')\n"
        return hook(home.parent, name, body + f"print(json.dumps({{'additionalContext': '{name}'}}))\n")

    plant(workspace, {"BeforeAgent": [marking("workspace")], "PreCompress": [marking("workspace")]})
    side = await spawn(
        tokenLimit=20_000, hooks={"BeforeAgent": [marking("editor")], "PreCompress": [marking("editor")]}
    )
    trust(side, True)
    side.client.on("sidecar/confirmToolCall", lambda _params: {"decision": "allow"})
    await side.say("one")
    assert ran.read_text() == "editor BeforeAgent\nworkspace BeforeAgent\n"
    assert user_parts(chat_requests(fake)[-1])[1:] == [{"text": "<hook_context>editor\nworkspace</hook_context>"}]
    ran.unlink()
    for i in range(3):
        await side.say(f"turn {i}: " + "context " * 60)
    ran.unlink()
    assert (await side.request("sidecar/compress", {}))["status"] == "COMPRESSED"
    assert ran.read_text() == "editor PreCompress\nworkspace PreCompress\n"
    (question,) = [r["params"] for r in side.client.server_requests if r["method"] == "sidecar/confirmToolCall"]
    assert question["args"]["events"] == ["PreCompress", "BeforeAgent"], "one approval for the file's whole list"


async def test_an_untrusted_workspace_hooks_do_not_run(spawn: Spawn, fake: Any, dirs: tuple[Path, Path]) -> None:
    home, workspace = dirs
    ran = home.parent / "ran"
    body = f"open({str(ran)!r}, 'a').write('workspace\\n')\n"
    plant(workspace, {"BeforeAgent": [hook(home.parent, "ws", body)]})
    editor = hook(home.parent, "ed", f"open({str(ran)!r}, 'a').write('editor\\n')\n")
    side = await spawn(hooks={"BeforeAgent": [editor]})
    for trusted in (None, False):
        trust(side, trusted)
        await side.say(f"trusted={trusted}")
    assert ran.read_text() == "editor\neditor\n", "only the editor's own hook ran"
    assert not [r for r in side.client.server_requests if r["method"] == "sidecar/confirmToolCall"]


async def test_a_slow_hook_times_out_the_turn_goes_on_and_the_user_is_told_once(
    spawn: Spawn, fake: Any, dirs: tuple[Path, Path]
) -> None:
    home, _ = dirs
    slow = hook(home.parent, "slow", "import time\ntime.sleep(60)\n", timeout=500)
    side = await spawn(hooks={"BeforeAgent": [slow]})
    for text in ("first", "second"):
        reply = await side.say(text)
        assert reply["finishReason"] == "STOP" and reply["text"]
        assert user_parts(chat_requests(fake)[-1]) == [{"text": text}]
    told = [m for m in side.messages(WARNING) if "BeforeAgent hook" in m]
    assert told == [
        f"Sidecar: The BeforeAgent hook `{slow['command']}` timed out after 500 ms; your message was sent without "
        "it (the sidecar's log has its output)."
    ]
    assert any("timed out after 500 ms" in line for line in side.stderr)
