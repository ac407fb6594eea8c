"""The MCP manager against real servers: a server that dies while idle, per-server disable/enable, prompts for the
editors (listed with their arguments, expanded by name or from an argument line)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sidecar.mcp.manager import McpManager
from sidecar.mcp.prompts import get_prompt, prompt_infos
from sidecar.protocol.mcp import GetMcpPromptParams
from sidecar.tools.shell import group_alive
from tests.mcp_client.test_manager import failed, ready, stdio
from tests.waiting import until


async def test_a_server_that_dies_while_idle_is_failed_at_once_with_its_stderr_and_told(tmp_path: Path) -> None:
    told: list[str] = []
    changes: list[list[str]] = []
    manager = McpManager(inform=told.append)
    manager.on_change = lambda: changes.append([s.status for s in manager.servers()])
    manager.configure({"lic": stdio("lic", "exits", tmp_path)})
    try:
        await until(lambda: ready(manager, "lic"), "the server to be ready")
        assert "mcp_lic_add" in manager.tool_names()
        (tmp_path / "exit-now").write_text("yes")  # it exits with no call running
        error = await until(lambda: failed(manager, "lic"), "the idle server's death to be noticed")
        assert "exited while idle" in error and "lost the connection to the license server" in error
        assert manager.tool_names() == []  # its tools are no longer declared
        assert changes[-1] == ["failed"]  # the editors are told (sidecar/mcpStatus follows on_change)
        assert told == [error]  # once, in words
        (tmp_path / "exit-now").unlink()
        assert await manager.restart("lic")
        await until(lambda: ready(manager, "lic"), "the server to be ready after a restart")
    finally:
        await manager.aclose()


async def test_a_disabled_server_is_stopped_its_tools_gone_and_it_stays_disabled_until_enabled(tmp_path: Path) -> None:
    manager = McpManager()
    (tmp_path / "b").mkdir()
    manager.configure({"a": stdio("a", "basic", tmp_path), "b": stdio("b", "basic", tmp_path / "b")})
    try:
        await until(lambda: ready(manager, "a") and ready(manager, "b"), "both servers")
        group = int(next(tmp_path.glob("pid-*")).read_text())
        assert await manager.set_enabled("a", False)
        rows = {s.name: s for s in manager.servers()}
        assert rows["a"].status == "disabled" and rows["a"].tools == []
        assert not any(n.startswith("mcp_a_") for n in manager.tool_names()) and "mcp_b_add" in manager.tool_names()
        assert not group_alive(group)  # its process is gone when set_enabled returns
        assert not await manager.restart("a")  # a disabled server is not restarted
        out = await manager.call("mcp_a_add", {"a": 1})
        assert out.error and "not available" in out.text
        manager.configure({"a": manager.connection("a").config, "b": manager.connection("b").config})  # type: ignore[union-attr]
        assert manager.connection("a").status == "disabled"  # type: ignore[union-attr]  # a settings change keeps it so
        assert len(list(tmp_path.glob("pid-*"))) == 1  # and starts no process for it
        assert not await manager.set_enabled("nosuch", False)
        assert await manager.set_enabled("a", True)
        await until(lambda: ready(manager, "a"), "server a enabled again")
        assert "mcp_a_add" in manager.tool_names()
    finally:
        await manager.aclose()


async def test_prompts_are_listed_with_arguments_and_expanded_by_name_or_from_a_line(tmp_path: Path) -> None:
    manager = McpManager()
    manager.configure({"rev": stdio("rev", "basic", tmp_path)})
    try:
        await until(lambda: ready(manager, "rev"), "the server")
        (info,) = prompt_infos(manager)
        assert (info.name, info.server, info.prompt) == ("review", "rev", "review")
        assert info.description == "Ask for a review."
        assert [(a.name, a.required) for a in info.arguments] == [("code", True), ("focus", False)]
        named = GetMcpPromptParams(name="review", arguments={"code": "x.py", "focus": ""})
        by_name = await get_prompt(manager, named)
        assert by_name.text == "Please review x.py focusing on anything" and by_name.error is None
        line = await get_prompt(manager, GetMcpPromptParams(name="review", text='y.py --focus="error handling"'))
        assert line.text == "Please review y.py focusing on error handling"
        missing = await get_prompt(manager, GetMcpPromptParams(name="review", arguments={}))
        assert missing.error == "Missing required argument: --code" and missing.text is None
        unknown = await get_prompt(manager, GetMcpPromptParams(name="nosuch", text=""))
        assert unknown.error is not None and "nosuch" in unknown.error and "review" in unknown.error
        await manager.set_enabled("rev", False)
        assert prompt_infos(manager) == []  # a disabled server offers no prompts
    finally:
        await manager.aclose()


def _deleted_files_held_open() -> dict[str, int]:
    """Files this process holds open that no name reaches any more (a temporary file), with their sizes."""
    held: dict[str, int] = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            info = os.fstat(int(fd))
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 0:
            held[target] = info.st_size
    return held


async def test_a_chatty_servers_stderr_is_kept_as_a_bounded_tail(tmp_path: Path) -> None:
    """32 MB on stderr: only the tail is kept (it was written whole into a temporary file), and it still says why."""
    manager = McpManager()
    manager.configure({"noisy": stdio("noisy", "noisy", tmp_path)})
    try:
        error = await until(lambda: failed(manager, "noisy"), "the noisy server to fail")
        assert error.endswith("fatal: the last words")
        assert len(error) < 3_000, "the tail, not the whole output"
        held = _deleted_files_held_open()
        assert sum(held.values()) < 1_000_000, f"the output kept in files: {held}"
    finally:
        await manager.aclose()
