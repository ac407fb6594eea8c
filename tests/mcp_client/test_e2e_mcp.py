"""MCP servers through the real sidecar process: settings, the model's calls, confirmation, status, lifecycle."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import errors
from sidecar.rpc.client import RpcError
from sidecar.tools.shell import group_alive
from tests.e2e.harness import EditorClient, notes, request
from tests.waiting import until

SERVER = str(Path(__file__).with_name("server.py"))


def stdio(mode: str, where: Path, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER, mode, str(where)], **extra}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"kind": "function_call", "name": name, "args": args, "match": "chat"}


def streams(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream"]


def declared(fake: Any, index: int = 0) -> list[str]:
    body = streams(fake)[index].body
    return [d["name"] for t in body["tools"] for d in t["functionDeclarations"]]


async def servers(client: EditorClient) -> dict[str, dict[str, Any]]:
    rows = await request(client, "sidecar/listMcpServers", {})
    return {row["name"]: row for row in rows}


async def status_is(client: EditorClient, name: str, status: str) -> dict[str, Any] | None:
    row = (await servers(client)).get(name)
    return row if row is not None and row["status"] == status else None


def groups(where: Path) -> list[int]:
    return [int(p.read_text()) for p in where.glob("pid-*")]


@pytest.fixture
def dirs() -> Any:
    root = Path(os.path.realpath(tempfile.mkdtemp(prefix="sidecar-mcp-ws-")))
    marks = Path(tempfile.mkdtemp(prefix="sidecar-mcp-marks-"))
    yield root, marks
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(marks, ignore_errors=True)


@pytest.fixture
async def editor(dirs: Any) -> AsyncIterator[EditorClient]:
    client = EditorClient("visual-studio-code", str(dirs[0]))
    await client.start()
    try:
        yield client
    finally:
        await client.stop()


async def test_a_stdio_server_from_settings_is_declared_confirmed_called_and_its_results_reach_the_model(
    editor: EditorClient, fake: Any, dirs: Any
) -> None:
    _, marks = dirs
    await editor.initialize(fake.url, mcpServers={"calc": stdio("basic", marks)})
    await until(lambda: status_is(editor, "calc", "ready"), "the server to be ready", timeout=30)
    assert any(n["servers"][0]["status"] == "ready" for n in notes(editor, "sidecar/mcpStatus"))
    fake.script([call("mcp_calc_add", a=2, b=40), call("mcp_calc_picture")])
    editor.decisions.extend(["allow", "allowAlways"])
    await request(editor, "sidecar/sendMessage", {"text": "add and draw"})
    assert "mcp_calc_add" in declared(fake) and "read_file" in declared(fake)
    asked = editor.confirmations[0]
    assert asked["toolName"] == "mcp_calc_add" and asked["args"] == {"a": 2, "b": 40}
    assert "MCP server calc" in asked["description"] and '"b": 40' in asked["description"]
    assert asked["mcpServer"] == "calc"
    contents = streams(fake)[-1].body["contents"]
    parts = [p for c in contents if c["role"] == "user" for p in c["parts"]]
    outputs = [p["functionResponse"]["response"].get("output", "") for p in parts if "functionResponse" in p]
    assert any("<untrusted_context>\nsum=42" in o for o in outputs), outputs
    assert any("image data with mime-type: image/png" in o for o in outputs)
    assert any(p.get("inlineData", {}).get("mimeType") == "image/png" for p in parts)
    fake.script([call("mcp_calc_picture")])
    await request(editor, "sidecar/sendMessage", {"text": "draw again"})
    assert len(editor.confirmations) == 2, "allow always for the tool: not asked again"
    fake.script([call("mcp_calc_fail", reason="x")])
    editor.decisions.append("allowAlwaysServer")
    await request(editor, "sidecar/sendMessage", {"text": "fail"})
    fake.script([call("mcp_calc_add", a=1), call("mcp_calc_grow")])
    await request(editor, "sidecar/sendMessage", {"text": "more"})
    assert [c["toolName"] for c in editor.confirmations] == ["mcp_calc_add", "mcp_calc_picture", "mcp_calc_fail"]
    contents = streams(fake)[-1].body["contents"]
    responses = [p["functionResponse"] for c in contents for p in c["parts"] if "functionResponse" in p]
    failed = next(r["response"] for r in responses if r["name"] == "mcp_calc_fail")
    assert "reported tool error" in failed["error"], "isError: the model is told the tool failed"


async def test_settings_changes_add_and_remove_servers_and_the_children_go_with_the_sidecar(
    editor: EditorClient, fake: Any, dirs: Any
) -> None:
    _, marks = dirs
    first, second = marks / "a", marks / "b"
    first.mkdir()
    second.mkdir()
    await editor.initialize(fake.url, mcpServers={"a": stdio("basic", first)})
    await until(lambda: status_is(editor, "a", "ready"), "server a", timeout=30)
    editor.notify(
        "workspace/didChangeConfiguration",
        {"settings": {"sidecar": {"mcpServers": {"b": stdio("basic", second), "bad": {"args": []}}}}},
    )
    await until(lambda: status_is(editor, "b", "ready"), "server b", timeout=30)
    assert "a" not in await servers(editor)
    (group_a,) = groups(first)
    await until(lambda: not group_alive(group_a), "server a's process group to end")
    warnings = [m["message"] for m in notes(editor, "window/showMessage")]
    assert any("'bad'" in m and "missing `httpUrl`" in m for m in warnings), warnings
    (group_b,) = groups(second)
    await editor.close()
    await until(lambda: not group_alive(group_b), "server b's group to end with the sidecar")


async def test_a_server_is_gone_after_the_sidecar_is_killed(editor: EditorClient, fake: Any, dirs: Any) -> None:
    _, marks = dirs
    await editor.initialize(fake.url, mcpServers={"s": stdio("basic", marks)})
    await until(lambda: status_is(editor, "s", "ready"), "the server", timeout=30)
    (group,) = groups(marks)
    editor.kill()
    await editor.wait_exit()
    await until(lambda: not group_alive(group), "the server's group to end after SIGKILL of the sidecar")


async def test_a_cancelled_turn_cancels_the_call_and_a_failed_server_is_reported_and_restarted(
    editor: EditorClient, fake: Any, dirs: Any
) -> None:
    _, marks = dirs
    await editor.initialize(fake.url, mcpServers={"s": stdio("basic", marks, trust=True)})
    await until(lambda: status_is(editor, "s", "ready"), "the server", timeout=30)
    fake.script([call("mcp_s_slow")])
    future = editor.request_now("sidecar/sendMessage", {"text": "go slow"}, msg_id="slow-1")
    await until(lambda: any(n["status"] == "running" for n in notes(editor, "sidecar/toolCall")), "the call")
    editor.cancel("slow-1")
    with pytest.raises(RpcError) as caught:
        await asyncio.wait_for(future, 10)
    assert caught.value.code == errors.REQUEST_CANCELLED
    await until(lambda: (marks / "cancelled").exists(), "the server to see the MCP cancellation")
    assert editor.confirmations == [], "trust: true from the user's settings: not asked"
    fake.script([call("mcp_s_crash")])
    await request(editor, "sidecar/sendMessage", {"text": "crash it"})
    response = streams(fake)[-1].body["contents"][-1]["parts"][0]["functionResponse"]["response"]
    assert "stopped during the call" in response["error"] and "crashing on purpose" in response["error"]
    failed = await until(lambda: status_is(editor, "s", "failed"), "the failed status")
    assert "crashing on purpose" in failed["error"]
    assert (await request(editor, "sidecar/restartMcpServer", {"name": "s"}))["restarted"] is True
    await until(lambda: status_is(editor, "s", "ready"), "the restarted server", timeout=30)
    assert (await request(editor, "sidecar/restartMcpServer", {"name": "nope"}))["restarted"] is False


async def test_a_workspace_files_servers_start_only_when_trusted_and_never_trusted(
    editor: EditorClient, fake: Any, dirs: Any
) -> None:
    root, marks = dirs
    (root / ".sidecar").mkdir()
    entry = stdio("basic", marks, trust=True)
    (root / ".sidecar" / "settings.json").write_text(json.dumps({"mcpServers": {"repo": entry}}))
    await editor.initialize(fake.url)
    fake.script([call("mcp_repo_add", a=1)])
    await request(editor, "sidecar/sendMessage", {"text": "hello"})
    assert await servers(editor) == {}
    assert not any(n.startswith("mcp_") for n in declared(fake))
    assert "Unknown tool" in streams(fake)[-1].body["contents"][-1]["parts"][0]["functionResponse"]["response"]["error"]
    assert groups(marks) == [], "an untrusted workspace's server never started"
    editor.decisions.append("allow")  # the one-time approval of the workspace's server
    editor.notify("sidecar/ideContext", {"openFiles": [], "isTrusted": True})
    await until(lambda: status_is(editor, "repo", "ready"), "the server once the workspace is trusted", timeout=30)
    assert editor.confirmations[0]["toolName"] == "Workspace MCP server"
    fake.script([call("mcp_repo_add", a=1)])
    editor.decisions.append("deny")
    await request(editor, "sidecar/sendMessage", {"text": "use it"})
    assert editor.confirmations[1]["toolName"] == "mcp_repo_add", "trust is ignored"
    warnings = [m["message"] for m in notes(editor, "window/showMessage")]
    assert any("cannot set `trust`" in m for m in warnings), warnings


async def test_disable_enable_prompts_and_a_server_dying_while_idle_over_the_wire(
    editor: EditorClient, fake: Any, dirs: Any
) -> None:
    _, marks = dirs
    (marks / "rev").mkdir()
    await editor.initialize(fake.url, mcpServers={"lic": stdio("exits", marks), "rev": stdio("basic", marks / "rev")})
    await until(lambda: status_is(editor, "lic", "ready"), "server lic", timeout=30)
    await until(lambda: status_is(editor, "rev", "ready"), "server rev", timeout=30)
    # prompts: both servers offer `review`; the first in name order keeps the name
    prompts = await request(editor, "sidecar/listMcpPrompts", {})
    assert [(p["name"], p["server"]) for p in prompts] == [("review", "lic")]
    assert prompts[0]["arguments"] == [{"name": "code", "required": True}, {"name": "focus"}]
    expanded = await request(editor, "sidecar/getMcpPrompt", {"name": "review", "arguments": {"code": "a.py"}})
    assert expanded == {"text": "Please review a.py focusing on anything"}
    refused = await request(editor, "sidecar/getMcpPrompt", {"name": "review", "text": ""})
    assert refused == {"error": "Missing required argument: --code"}
    # disable: the process stops, the tools leave the next request, editors are told; enable brings it back
    (rev_group,) = groups(marks / "rev")
    assert await request(editor, "sidecar/setMcpServerEnabled", {"name": "rev", "enabled": False}) == {"applied": True}
    assert await status_is(editor, "rev", "disabled")
    assert not group_alive(rev_group)
    assert any(
        s["name"] == "rev" and s["status"] == "disabled"
        for n in notes(editor, "sidecar/mcpStatus")
        for s in n["servers"]
    )
    await request(editor, "sidecar/sendMessage", {"text": "which tools?"})
    assert "mcp_lic_add" in declared(fake, -1) and not any(n.startswith("mcp_rev_") for n in declared(fake, -1))
    assert (await request(editor, "sidecar/restartMcpServer", {"name": "rev"}))["restarted"] is False
    missing = await request(editor, "sidecar/setMcpServerEnabled", {"name": "nope", "enabled": False})
    assert missing == {"applied": False}
    assert await request(editor, "sidecar/setMcpServerEnabled", {"name": "rev", "enabled": True}) == {"applied": True}
    await until(lambda: status_is(editor, "rev", "ready"), "server rev enabled again", timeout=30)
    # a server that exits while idle: failed at once with its stderr, told once, the editors notified
    (marks / "exit-now").write_text("yes")
    failed = await until(lambda: status_is(editor, "lic", "failed"), "the idle death noticed", timeout=30)
    assert "exited while idle" in failed["error"] and "license server" in failed["error"]
    await until(
        lambda: any(
            s["name"] == "lic" and s["status"] == "failed"
            for n in notes(editor, "sidecar/mcpStatus")
            for s in n["servers"]
        ),
        "sidecar/mcpStatus with the failure",
    )
    warnings = [m["message"] for m in notes(editor, "window/showMessage") if "exited while idle" in m["message"]]
    assert len(warnings) == 1, warnings


async def test_a_big_image_result_is_counted_as_the_api_counts_it_and_the_session_goes_on(
    editor: EditorClient, fake: Any, dirs: Any
) -> None:
    """A 3 MB image from an MCP tool counted as its base64 / 4 (a million tokens): the turn ended and every later
    message was refused until a compaction. Now the image counts its tiles (6 × 258 tokens) and reaches the model.
    (The fake Gemini reports a prompt's tokens as its JSON bytes / 4, images included, unlike the API: the next
    message's check would use that count, so this test stops at the turn.)"""
    _, marks = dirs
    await editor.initialize(fake.url, mcpServers={"pics": stdio("basic", marks, trust=True)}, tokenLimit=200_000)
    await until(lambda: status_is(editor, "pics", "ready"), "the server to be ready", timeout=30)
    fake.script([call("mcp_pics_screenshot", megabytes=3)])
    await request(editor, "sidecar/sendMessage", {"text": "take a screenshot"}, timeout=60)
    parts = [p for c in streams(fake)[-1].body["contents"] if c["role"] == "user" for p in c["parts"]]
    images = [p["inlineData"] for p in parts if "inlineData" in p]
    assert len(images) == 1 and len(images[0]["data"]) > 4_000_000, "the image reached the model whole"


async def test_the_first_prompt_waits_for_a_server_still_starting_and_is_offered_its_tools(
    editor: EditorClient, fake: Any, dirs: Any
) -> None:
    _, marks = dirs
    await editor.initialize(fake.url, mcpServers={"calc": stdio("gated", marks)})
    turn = asyncio.create_task(request(editor, "sidecar/sendMessage", {"text": "at once"}))

    def waiting(note: dict[str, Any]) -> bool:
        return "Waiting for MCP server 'calc'" in str(note["value"].get("message", ""))

    await editor.wait_note("$/progress", waiting, timeout=30)
    assert not streams(fake), "nothing is sent while the server starts"
    (marks / "start-now").write_text("")
    await turn
    assert "mcp_calc_add" in declared(fake, 0), "the first request declares the server's tools"
    warnings = [n["message"] for n in notes(editor, "window/showMessage")]
    assert not any("goes on without" in w for w in warnings)


async def test_a_server_that_never_finishes_starting_is_waited_for_at_most_the_bound_and_named(
    editor: EditorClient, fake: Any, dirs: Any
) -> None:
    _, marks = dirs
    await editor.initialize(fake.url, mcpServers={"stuck": stdio("silent", marks)})  # its timeout: 10 minutes
    await request(editor, "sidecar/sendMessage", {"text": "at once"}, timeout=60)
    assert not [n for n in declared(fake, 0) if n.startswith("mcp_")], "the turn went on without the server"
    warnings = [n["message"] for n in notes(editor, "window/showMessage")]
    assert any(
        "MCP server 'stuck' did not finish starting within 10 s" in w and "goes on without its tools" in w
        for w in warnings
    ), warnings
    assert (await servers(editor))["stuck"]["status"] == "starting", "the bound ended the wait, not a failure"
    await request(editor, "sidecar/sendMessage", {"text": "again"})
    assert len([w for w in (n["message"] for n in notes(editor, "window/showMessage")) if "goes on without" in w]) == 1


async def test_a_workspace_server_asks_once_loses_a_name_clash_and_never_expands_a_secret(fake: Any, dirs: Any) -> None:
    root, marks = dirs
    (root / ".sidecar").mkdir()
    settings = root / ".sidecar" / "settings.json"
    user_marks, denied_marks = marks / "user", marks / "denied"
    user_marks.mkdir()
    denied_marks.mkdir()
    settings.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ws": stdio("basic", marks, env={"EXTRA": "key=${GEMINI_API_KEY} $GOOGLE_APPLICATION_CREDENTIALS"}),
                    "calc": stdio("basic", marks),  # the user's server has this name: the user's wins
                    "denied": stdio("basic", denied_marks),
                }
            }
        )
    )
    editor = EditorClient(
        "visual-studio-code",
        str(root),
        GEMINI_API_KEY="AIzaSECRET-env-key-1234567890",
        GOOGLE_APPLICATION_CREDENTIALS="/home/me/adc.json",
    )
    await editor.start()
    try:
        answers = {"denied": "deny", "ws": "allow"}  # by server; a tool call is allowed
        editor.on(
            "sidecar/confirmToolCall",
            lambda params: (
                editor.confirmations.append(params),
                {"decision": answers.get(params["args"].get("server"), "allow")},
            )[1],
        )
        await editor.initialize(fake.url, isTrusted=True, mcpServers={"calc": stdio("basic", user_marks)})
        await until(lambda: status_is(editor, "ws", "ready"), "the approved workspace server", timeout=30)
        await until(lambda: status_is(editor, "calc", "ready"), "the user's server", timeout=30)
        asked = {c["args"]["server"]: c for c in editor.confirmations if c["toolName"] == "Workspace MCP server"}
        assert set(asked) == {"ws", "denied"}, "the user's own server is never asked about; the clash never starts"
        assert str(SERVER) in asked["ws"]["description"] and "basic" in asked["ws"]["args"]["commandLine"]
        assert "denied" not in await servers(editor) and groups(denied_marks) == []
        assert len(groups(user_marks)) == 1, "the user's calc runs, not the workspace's"
        warnings = [m["message"] for m in notes(editor, "window/showMessage")]
        assert any("'calc'" in m and "yours is kept" in m for m in warnings), warnings
        assert any("GEMINI_API_KEY" in m and "expands to nothing" in m for m in warnings), warnings
        fake.script([call("mcp_ws_add", a=1)])
        await request(editor, "sidecar/sendMessage", {"text": "use it"})
        contents = streams(fake)[-1].body["contents"]
        outputs = [
            p["functionResponse"]["response"].get("output", "")
            for c in contents
            for p in c["parts"]
            if "functionResponse" in p
        ]
        assert any("extra=key= " in o for o in outputs), outputs
        assert not any("AIzaSECRET" in o or "adc.json" in o for o in outputs), "a workspace server got a secret"
        await editor.stop()
        editor = EditorClient("visual-studio-code", str(root))
        await editor.start()
        await editor.initialize(fake.url, isTrusted=True)
        await until(lambda: status_is(editor, "ws", "ready"), "the workspace server approved before", timeout=30)
        assert not any(
            c["toolName"] == "Workspace MCP server" and c["args"]["server"] == "ws" for c in editor.confirmations
        ), "an approval is kept for the project"
    finally:
        await editor.stop()
