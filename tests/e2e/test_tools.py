"""The agent acts through the editor: tool calls scripted in the fake Gemini, run by the real sidecar."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import errors
from sidecar.rpc.client import RpcError
from tests.e2e.harness import EditorClient, notes, request
from tests.waiting import until


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"kind": "function_call", "name": name, "args": args, "match": "chat"}


def last_responses(fake: Any) -> list[dict[str, Any]]:
    """The functionResponse parts of the newest chat request."""
    contents = [r for r in fake.requests() if r.kind == "stream"][-1].body["contents"]
    return [p["functionResponse"] for p in contents[-1]["parts"] if "functionResponse" in p]


def statuses(client: EditorClient) -> list[tuple[str, str]]:
    return [(n["name"], n["status"]) for n in notes(client, "sidecar/toolCall")]


async def say(client: EditorClient, text: str) -> dict[str, Any]:
    return await request(client, "sidecar/sendMessage", {"text": text})  # type: ignore[no-any-return]


@pytest.fixture
def root(client: EditorClient) -> Path:
    path = Path(client.workspace_root)
    (path / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    return path


async def test_read_then_edit_through_apply_edit(client: EditorClient, fake: Any, root: Path) -> None:
    fake.script(
        [call("read_file", path="notes.txt"), call("replace", path="notes.txt", old_string="beta", new_string="BETA")]
    )
    reply = await say(client, "read notes.txt and capitalise beta")
    assert reply["text"]
    after_read = [r for r in fake.requests() if r.kind == "stream"][1]
    read = next(p for p in after_read.body["contents"][-1]["parts"] if "functionResponse" in p)["functionResponse"]
    assert "beta" in read["response"]["output"]
    assert last_responses(fake)[0]["response"].get("output"), last_responses(fake)
    (edit,) = client.edits
    text_edits = [e for change in edit["documentChanges"] for e in change["edits"]]
    assert any("BETA" in e["newText"] for e in text_edits)
    confirmation = client.confirmations[0]
    assert confirmation["toolName"] == "replace" and "+BETA" in confirmation["diff"]
    assert ("replace", "done") in statuses(client)
    assert (root / "notes.txt").read_text() == "alpha\nbeta\ngamma\n", "the editor applies edits, not the disk"
    progress = [str(n["value"].get("message", "")) for n in notes(client, "$/progress")]
    assert "Running 1 tool call…" in progress, progress  # one call each round, counted in words


async def test_failed_apply_edit_is_reported_to_the_model(client: EditorClient, fake: Any, root: Path) -> None:
    client.apply_result = {"applied": False, "reason": "the file is read-only"}
    fake.script([call("write_file", path="new.txt", content="hello")])
    await say(client, "create new.txt")
    (response,) = last_responses(fake)
    assert "read-only" in response["response"]["error"]


async def test_shell_allowed_and_denied(client: EditorClient, fake: Any, root: Path) -> None:
    client.decisions.extend(["allow", "deny"])
    fake.script([call("run_shell_command", command="echo from-the-shell")])
    await say(client, "run echo")
    assert "from-the-shell" in last_responses(fake)[0]["response"]["output"]
    fake.script([call("run_shell_command", command="touch should-not-exist")])
    await say(client, "run touch")
    assert "denied" in last_responses(fake)[0]["response"]["error"]
    assert not (root / "should-not-exist").exists()
    assert ("run_shell_command", "denied") in statuses(client)


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "escape/secret.txt"])
async def test_paths_outside_the_workspace_are_refused(client: EditorClient, fake: Any, root: Path, path: str) -> None:
    outside = root.parent / f"outside-{os.getpid()}"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("top secret")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    fake.script([call("read_file", path=path)])
    await say(client, "read it")
    (response,) = last_responses(fake)
    assert "error" in response["response"] and "top secret" not in str(response)
    assert "outside" in response["response"]["error"] or "workspace" in response["response"]["error"]


async def test_cancel_during_a_long_shell_command_leaves_no_process(
    client: EditorClient, fake: Any, root: Path
) -> None:
    marker = f"sidecar-sleep-{os.getpid()}"
    fake.script([call("run_shell_command", command=f"sleep 300 # {marker}")])
    future = client.request_now("sidecar/sendMessage", {"text": "run the long one"}, msg_id="long-1")
    await until(lambda: ("run_shell_command", "running") in statuses(client), "the shell command to start")
    await until(lambda: _pids_with(marker), "the shell command's process")
    client.cancel("long-1")
    with pytest.raises(RpcError) as caught:
        await asyncio.wait_for(future, 10)
    assert caught.value.code == errors.REQUEST_CANCELLED
    await until(lambda: not _pids_with(marker), "no process of the cancelled command left", timeout=10)
    assert ("run_shell_command", "cancelled") in statuses(client)
    reply = await say(client, "still working?")
    assert "still working?" in reply["text"]
    contents = [r for r in fake.requests() if r.kind == "stream"][-1].body["contents"]
    cancelled = [p["functionResponse"] for c in contents for p in c["parts"] if "functionResponse" in p]
    assert "cancelled" in cancelled[-1]["response"]["error"], "the cancelled call still got a response"


async def test_big_shell_output_is_saved_and_truncated(client: EditorClient, fake: Any, root: Path) -> None:
    fake.script([call("run_shell_command", command="python3 -c \"print('x' * 60000)\"")])
    await say(client, "print a lot")
    output = last_responses(fake)[0]["response"]["output"]
    assert "Output too large. Showing first" in output and "For full output see:" in output
    saved = output.split("For full output see: ", 1)[1].split("\n", 1)[0]
    assert Path(saved).read_text().count("x") >= 60_000


@pytest.mark.settings(approvalMode="yolo", maxToolRounds=2)
async def test_tool_rounds_are_capped(client: EditorClient, fake: Any, root: Path) -> None:
    fake.script([{**call("list_directory", path="."), "times": 5}])
    reply = await say(client, "loop forever")
    assert reply["finishReason"] == "MAX_TOOL_ROUNDS"
    assert len([r for r in fake.requests() if r.kind == "stream"]) == 3, "two tool rounds, then stop"
    assert client.confirmations == []
    fake.reset_script()
    await say(client, "what happened?")
    contents = [r for r in fake.requests() if r.kind == "stream"][-1].body["contents"]
    answered = [p["functionResponse"] for c in contents for p in c["parts"] if "functionResponse" in p]
    assert "maxToolRounds" in answered[-1]["response"]["error"], "the third call was answered, not left dangling"


async def test_untrusted_workspace_has_no_shell(client: EditorClient, fake: Any, root: Path) -> None:
    client.notify("sidecar/ideContext", {"openFiles": [], "isTrusted": False})
    fake.script([call("run_shell_command", command="echo hi")])
    await say(client, "try the shell")
    first_round = next(r for r in fake.requests() if r.kind == "stream").body
    names = [d["name"] for t in first_round["tools"] for d in t["functionDeclarations"]]
    assert "run_shell_command" not in names and "read_file" in names
    assert "not trusted" in last_responses(fake)[0]["response"]["error"]


def _pids_with(marker: str) -> list[str]:
    return [p for p in os.listdir("/proc") if p.isdigit() and marker in _cmdline(p)]


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


async def test_a_file_read_by_the_agent_and_changed_on_disk_is_reported(
    client: EditorClient, fake: Any, root: Path
) -> None:
    fake.script([call("read_file", path="notes.txt")])
    await say(client, "read notes.txt")
    # The watcher starts after `initialized` (with the services): a change made before it runs is not seen.
    await until(lambda: any("start-up complete" in line for line in client.stderr_lines), "the workspace watcher")
    (root / "notes.txt").write_text("changed behind the agent's back\n")
    for _ in range(300):
        await asyncio.sleep(0.02)
        await say(client, "anything new?")
        contents = [r for r in fake.requests() if r.kind == "stream"][-1].body["contents"]
        texts = [c["parts"][0].get("text", "") for c in contents[-2:]]
        if any("filesChangedOnDisk" in t for t in texts):
            break
    else:
        raise AssertionError("filesChangedOnDisk never reached the model")
    assert str(root / "notes.txt") in next(t for t in texts if "filesChangedOnDisk" in t)


async def test_an_edit_is_planned_on_the_synced_buffer_and_names_its_version(
    client: EditorClient, fake: Any, root: Path
) -> None:
    """The editor syncs its buffer (didOpen/didChange: VS Code always, Neovim for the workspace's files): the agent's
    edit is planned on that text, not the disk's or the server's record, and names the version it was planned on,
    so an editor whose buffer changed since refuses it."""
    uri = (root / "notes.txt").as_uri()
    document = {"uri": uri, "languageId": "plaintext", "version": 4, "text": "alpha\nunsaved\ngamma\n"}
    client.notify("textDocument/didOpen", {"textDocument": document})
    change = {"textDocument": {"uri": uri, "version": 5}, "contentChanges": [{"text": "alpha\nunsaved\nundone\n"}]}
    client.notify("textDocument/didChange", change)
    fake.script([call("replace", path="notes.txt", old_string="undone", new_string="UNDONE")])
    await say(client, "capitalise undone")
    assert "output" in last_responses(fake)[0]["response"], last_responses(fake)
    (edit,) = client.edits
    (text_change,) = edit["documentChanges"]
    assert text_change["textDocument"]["version"] == 5
    assert [e["range"]["start"]["line"] for e in text_change["edits"]] == [2], "the buffer's line, not the disk's"
