"""The MCP manager against real MCP servers (tests/mcp_client/server.py): start, tools, calls, failures, changes."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sidecar.mcp.config import ServerConfig, parse_servers
from sidecar.mcp.manager import McpManager
from sidecar.tools.shell import group_alive
from tests.waiting import until

SERVER = str(Path(__file__).with_name("server.py"))


def stdio(name: str, mode: str, tmp: Path, **extra: object) -> ServerConfig:
    servers, problems = parse_servers({name: {"command": sys.executable, "args": [SERVER, mode, str(tmp)], **extra}})
    assert problems == []
    return servers[name]


def ready(manager: McpManager, name: str) -> bool:
    connection = manager.connection(name)
    return connection is not None and connection.status == "ready"


def failed(manager: McpManager, name: str) -> str | None:
    connection = manager.connection(name)
    return connection.error if connection is not None and connection.status == "failed" else None


async def test_a_server_starts_in_the_background_and_its_tools_are_declared_and_called(tmp_path: Path) -> None:
    told: list[str] = []
    manager = McpManager(inform=told.append)
    os.environ["GEMINI_API_KEY"] = "canary-key-xyz"
    os.environ["MCP_EXTRA_SOURCE"] = "expanded"
    try:
        manager.configure({"calc": stdio("calc", "basic", tmp_path, env={"EXTRA": "$MCP_EXTRA_SOURCE"})})
        assert manager.servers()[0].status == "starting"  # configure returned before the server answered
        await until(lambda: ready(manager, "calc"), "the server to be ready")
        names = manager.tool_names()
        assert "mcp_calc_add" in names and "mcp_calc_picture" in names
        declaration = next(d for d in manager.declarations() if d["name"] == "mcp_calc_add")
        assert declaration["parametersJsonSchema"]["required"] == ["a"]
        out = await manager.call("mcp_calc_add", {"a": 2, "b": 3})
        assert not out.error
        assert out.text == "<untrusted_context>\nsum=5 env_key=- extra=expanded\n</untrusted_context>"
        image = await manager.call("mcp_calc_picture", {})
        assert image.media[0].inline_data is not None and image.media[0].inline_data.mime_type == "image/png"
        assert "provided the following image data with mime-type: image/png" in image.text
        error = await manager.call("mcp_calc_fail", {"reason": "nope"})
        assert error.error and "reported tool error" in error.text
        assert told == []
    finally:
        del os.environ["GEMINI_API_KEY"], os.environ["MCP_EXTRA_SOURCE"]
        await manager.aclose()


async def test_failures_are_told_once_in_words_and_the_others_still_start(tmp_path: Path) -> None:
    told: list[str] = []
    manager = McpManager(inform=told.append)
    configs = {
        "dies": stdio("dies", "dies", tmp_path),
        "silent": stdio("silent", "silent", tmp_path, timeout=1500),
        "garbage": stdio("garbage", "garbage", tmp_path),
        "missing": ServerConfig("missing", "stdio", command="/nonexistent/server"),
        "ok": stdio("ok", "basic", tmp_path),
    }
    try:
        manager.configure(configs)
        await until(lambda: ready(manager, "ok") and ready(manager, "garbage"), "the good servers")
        dies = await until(lambda: failed(manager, "dies"), "the dying server to fail")
        assert "cannot open the database at /nowhere" in dies  # its stderr tail
        silent = await until(lambda: failed(manager, "silent"), "the silent server to time out")
        assert "within 1500 ms" in silent
        await until(lambda: failed(manager, "missing"), "the missing command to fail")
        manager.configure(dict(configs))  # nothing changed: failed ones are retried, the rest left alone
        await until(lambda: failed(manager, "dies"), "the retry to fail again")
        assert sum("'dies'" in m for m in told) == 1
        assert {s.name: s.status for s in manager.servers()}["ok"] == "ready"
    finally:
        await manager.aclose()


async def test_timeout_and_cancellation_reach_the_server(tmp_path: Path) -> None:
    manager = McpManager()
    short = {"s": stdio("s", "basic", tmp_path, timeout=3000)}

    def started() -> bool:
        if failed(manager, "s"):  # a busy machine took longer than 3 s to start it: try again
            manager.configure(short)
        return ready(manager, "s")

    manager.configure(short)
    try:
        await until(started, "the server", timeout=60)
        out = await manager.call("mcp_s_slow", {})
        assert out.error and "timed out after 3 s" in out.text
        await until(lambda: (tmp_path / "cancelled").exists(), "the server to see the cancellation")
        (tmp_path / "cancelled").unlink()
        manager.configure({"s": stdio("s", "basic", tmp_path)})  # a long timeout now
        await until(lambda: ready(manager, "s"), "the restarted server")
        (tmp_path / "running").unlink(missing_ok=True)
        call = asyncio.create_task(manager.call("mcp_s_slow", {}))
        await until(lambda: (tmp_path / "running").exists(), "the call to reach the server")  # then cancel it
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await until(lambda: (tmp_path / "cancelled").exists(), "the server to see the turn's cancellation")
    finally:
        await manager.aclose()


async def test_a_crash_mid_call_is_told_to_the_model_and_the_server_is_failed(tmp_path: Path) -> None:
    manager = McpManager()
    manager.configure({"s": stdio("s", "basic", tmp_path)})
    try:
        await until(lambda: ready(manager, "s"), "the server")
        out = await manager.call("mcp_s_crash", {})
        assert out.error and "stopped during the call" in out.text
        assert "crashing on purpose" in out.text
        assert manager.servers()[0].status == "failed" and manager.tool_names() == []
    finally:
        await manager.aclose()


async def test_list_changed_and_settings_changes(tmp_path: Path) -> None:
    changes: list[int] = []
    manager = McpManager(on_change=lambda: changes.append(1))
    manager.configure({"a": stdio("a", "basic", tmp_path, excludeTools=["crash"])})
    try:
        await until(lambda: ready(manager, "a"), "server a")
        assert "mcp_a_crash" not in manager.tool_names() and "mcp_a_add" in manager.tool_names()
        await manager.call("mcp_a_grow", {})
        await until(lambda: "mcp_a_newtool" in manager.tool_names(), "the new tool after list_changed")
        first = manager.connection("a")
        a_group = int(next(tmp_path.glob("pid-*")).read_text())
        manager.configure({"a": first.config, "b": stdio("b", "basic", tmp_path, includeTools=["add"])})  # type: ignore[union-attr]
        await until(lambda: ready(manager, "b"), "server b")
        assert manager.connection("a") is first  # unchanged servers are not restarted
        assert [n for n in manager.tool_names() if n.startswith("mcp_b_")] == ["mcp_b_add"]
        manager.configure({"b": manager.connection("b").config})  # type: ignore[union-attr]
        assert [s.name for s in manager.servers()] == ["b"]
        assert not any(n.startswith("mcp_a_") for n in manager.tool_names())
        await until(lambda: not group_alive(a_group), "server a's process group to end")
    finally:
        await manager.aclose()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_http_server_with_a_header(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "MCP_TEST_DIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, SERVER, "http", str(port)], env=env, stderr=subprocess.DEVNULL)
    manager = McpManager()
    try:
        servers, problems = parse_servers(
            {"web": {"httpUrl": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Test": "1"}, "timeout": 20000}}
        )
        assert problems == []

        async def connected() -> bool:
            if failed(manager, "web"):
                manager.configure(servers)  # the server was still starting: a failed one is retried
            return ready(manager, "web")

        manager.configure(servers)
        await until(connected, "the HTTP server", timeout=30)
        out = await manager.call("mcp_web_add", {"a": 1})
        assert "sum=1" in out.text
    finally:
        await manager.aclose()
        process.terminate()
        process.wait()


def test_a_server_dies_with_a_sidecar_killed_by_sigkill(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import asyncio, sys
        sys.path.insert(0, {str(Path.cwd())!r})
        from sidecar.mcp.config import parse_servers
        from sidecar.mcp.manager import McpManager
        async def main():
            args = [{SERVER!r}, "basic", {str(tmp_path)!r}]
            servers, _ = parse_servers({{"s": {{"command": sys.executable, "args": args}}}})
            manager = McpManager()
            manager.configure(servers)
            while manager.servers()[0].status != "ready":
                await asyncio.sleep(0.05)
            print("ready", flush=True)
            await asyncio.sleep(3600)
        asyncio.run(main())
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "ready"
        pgid = int(next(tmp_path.glob("pid-*")).read_text())
        assert pgid != os.getpgrp() and group_alive(pgid)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        asyncio.run(until(lambda: not group_alive(pgid), "the server's group to end after SIGKILL"))
    finally:
        parent.kill()
        parent.wait()


async def test_resources_are_listed_and_read_through_read_mcp_resource(tmp_path: Path) -> None:
    from sidecar.mcp.gate import McpTools
    from sidecar.tools.registry import needs_confirmation

    manager = McpManager()
    manager.configure({"docs": stdio("docs", "basic", tmp_path)})
    try:
        await until(lambda: ready(manager, "docs"), "the server")
        assert ("docs", "test://greeting", "greeting") in manager.resources()
        tools = McpTools(manager)
        assert "read_mcp_resource" in [d["name"] for d in tools.declarations()]
        plan = tools.plan("read_mcp_resource", {"uri": "test://greeting"})
        assert plan is not None and not needs_confirmation(plan, "default", set())
        result = await tools.run(plan, 10_000, lambda text, name: "unused")
        assert result.ok
        assert result.response["output"] == "<untrusted_context>\nhello from a resource\n</untrusted_context>"
        missing = await manager.read_resource("test://nothing")
        assert missing.error and "test://greeting" in missing.text
        refused = tools.plan("read_mcp_resource", {"uri": 3})
        assert refused is not None and refused.error is not None
    finally:
        await manager.aclose()
