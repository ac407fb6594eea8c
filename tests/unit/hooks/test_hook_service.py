"""The hook service with real hook scripts: stdin JSON, order, matchers, failures told once, workspace approval."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sidecar.config.settings import Hooks, HookSpec, Settings
from sidecar.hooks.service import HookService
from sidecar.protocol.tools import ConfirmToolCallParams, ToolDecision
from sidecar.session import Session


class NoRecording:
    path = None


def script(folder: Path, name: str, body: str) -> str:
    """A hook command: a small Python script that reads its stdin JSON as `event`."""
    path = folder / f"{name}.py"
    path.write_text("import json, sys\nevent = json.load(sys.stdin)\n" + body)
    return f"{sys.executable} {path}"


def service(tmp_path: Path, told: list[str], **events: list[HookSpec]) -> tuple[HookService, Session]:
    session = Session(workspace_folders=[str(tmp_path)])
    session.settings = msgspec.structs.replace(Settings(), hooks=Hooks(**events))
    return HookService(session, NoRecording(), told.append), session


@pytest.mark.process
async def test_before_agent_gets_the_prompt_and_adds_context(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    command = script(
        tmp_path,
        "ctx",
        f"open({str(seen)!r}, 'w').write(json.dumps(event))\n"
        "print(json.dumps({'additionalContext': 'ticket ' + event['prompt'].upper()}))\n",
    )
    told: list[str] = []
    hooks, session = service(tmp_path, told, before_agent=[HookSpec(command)])
    out = await hooks.before_agent("fix it")
    assert out.additional_context == "ticket FIX IT" and not out.blocked
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "BeforeAgent" and event["prompt"] == "fix it"
    assert event["session_id"] == session.conversation.session_id and event["cwd"] == str(tmp_path)
    assert told == []


@pytest.mark.process
async def test_hooks_run_in_order_and_a_block_wins(tmp_path: Path) -> None:
    log = tmp_path / "order"
    context = "print(json.dumps({'additionalContext': 'A'}))"
    first = script(tmp_path, "a", f"open({str(log)!r}, 'a').write('a')\n{context}")
    second = script(tmp_path, "b", f"open({str(log)!r}, 'a').write('b')\nsys.stderr.write('not today')\nsys.exit(2)")
    hooks, _ = service(tmp_path, [], before_agent=[HookSpec(first), HookSpec(second)])
    out = await hooks.before_agent("x")
    assert log.read_text() == "ab"
    assert out.blocked and out.reason == "not today" and out.additional_context == "A"


@pytest.mark.process
async def test_session_start_matches_the_source_and_wraps_the_context(tmp_path: Path) -> None:
    echo = script(tmp_path, "src", "print(json.dumps({'additionalContext': 'started <' + event['source'] + '>'}))")
    hooks, _ = service(
        tmp_path, [], session_start=[HookSpec(echo), HookSpec(echo, matcher="resume"), HookSpec(echo, matcher="*")]
    )
    assert await hooks.session_start_context("new") == [
        "<hook_context>started &lt;new&gt;</hook_context>",
        "<hook_context>started &lt;new&gt;</hook_context>",
    ]
    assert len(await hooks.session_start_context("resume")) == 3


@pytest.mark.process
async def test_a_failing_or_slow_hook_is_told_once_and_the_work_goes_on(tmp_path: Path) -> None:
    slow = script(tmp_path, "slow", "import time\ntime.sleep(30)\n")
    broken = script(tmp_path, "broken", "sys.stderr.write('Traceback: boom')\nsys.exit(1)\n")
    told: list[str] = []
    hooks, _ = service(tmp_path, told, before_agent=[HookSpec(slow, timeout=300), HookSpec(broken)])
    for _ in range(2):
        out = await hooks.before_agent("x")
        assert not out.blocked and out.additional_context == ""
    assert told == [
        f"The BeforeAgent hook `{slow}` timed out after 300 ms; your message was sent without it (the sidecar's log "
        "has its output).",
        f"The BeforeAgent hook `{broken}` exited with code 1; your message was sent without it (the sidecar's log "
        "has its output).",
    ]


@pytest.mark.process
async def test_a_hook_that_cannot_start_is_a_failure_in_words(tmp_path: Path) -> None:
    told: list[str] = []
    hooks, _ = service(tmp_path, told, before_agent=[HookSpec("/nonexistent/hook-command")])
    assert not (await hooks.before_agent("x")).blocked
    assert len(told) == 1 and "exited with code 127" in told[0]


@pytest.mark.process
async def test_the_api_key_is_not_in_the_hook_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "canary-key")
    dump = tmp_path / "env"
    command = script(tmp_path, "env", f"import os\nopen({str(dump)!r}, 'w').write(json.dumps(dict(os.environ)))")
    hooks, session = service(tmp_path, [], pre_compress=[HookSpec(command)])
    await hooks.pre_compress("manual")
    env: dict[str, Any] = json.loads(dump.read_text())
    assert "GEMINI_API_KEY" not in env and env["SIDECAR_SESSION_ID"] == session.conversation.session_id


@pytest.mark.process
async def test_workspace_hooks_wait_for_the_approval(tmp_path: Path) -> None:
    """The workspace file's hooks are the tail of each list (config/layers.py); they run once approved."""
    log = tmp_path / "ran"
    own = script(tmp_path, "own", f"open({str(log)!r}, 'a').write('own ')")
    theirs = script(tmp_path, "theirs", f"open({str(log)!r}, 'a').write('theirs ')")
    _, session = service(tmp_path, [], before_agent=[HookSpec(own), HookSpec(theirs)])
    session.sources.workspace_hooks = Hooks(before_agent=[HookSpec(theirs)])
    asked: list[ConfirmToolCallParams] = []
    answer: list[ToolDecision] = ["deny"]

    async def ask(params: ConfirmToolCallParams) -> ToolDecision:
        asked.append(params)
        return answer[0]

    class Project:
        home = tmp_path / "data"
        project_id = "p1"

    from sidecar.hooks.approval import HookApproval

    approving = HookService(session, NoRecording(), lambda _m: None, HookApproval(session, ask, lambda: Project()))
    await approving.before_agent("x")
    assert log.read_text() == "own ", "refused: only the user's own hook ran"
    await approving.before_agent("x")
    assert len(asked) == 1, "a refusal holds for the process"
    assert asked[0].tool_name == "Workspace hooks"
    assert asked[0].args == {"commands": [theirs], "events": ["BeforeAgent"]}
    answer[0] = "allow"
    log.unlink()
    fresh = HookService(session, NoRecording(), lambda _m: None, HookApproval(session, ask, lambda: Project()))
    await fresh.before_agent("x")
    assert log.read_text() == "own theirs "
    never = HookService(session, NoRecording(), lambda _m: None, None)
    log.unlink()
    await never.before_agent("x")
    assert log.read_text() == "own ", "without an approval channel (ACP) a workspace's hooks never run"
