"""A turn cancelled while its tool calls run: the cancellation itself carries one answer per call (no hidden state)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sidecar.chat.tool_runner import CANCELLED, CallsCancelled, ToolRunner
from sidecar.core.history import FunctionCall
from sidecar.protocol.tools import ConfirmToolCallParams, ToolCallParams
from sidecar.session import Session
from sidecar.tools import ToolRegistry


class AskingHost:
    """Asks the user about every call and never hears back (until the turn is cancelled)."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.notices: list[ToolCallParams] = []

    async def before_plan(self, paths: list[Path]) -> None:
        pass

    def after_call(self) -> None:
        pass

    def tool_call(self, notice: ToolCallParams, plan: Any = None, result: Any = None) -> None:
        self.notices.append(notice)

    async def confirm(self, request: ConfirmToolCallParams, plan: Any = None) -> Any:
        self.asked.set()
        await asyncio.Event().wait()

    def apply_edit(self, plan: Any = None) -> None:
        return None


async def test_the_cancellation_carries_an_answer_for_every_call(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    registry = ToolRegistry(
        [str(tmp_path)], save_output=lambda text, tool: tmp_path / "out", output_threshold=lambda: 1_000
    )
    host = AskingHost()
    runner = ToolRunner(registry, host, Session(workspace_folders=[str(tmp_path)]))
    calls = [
        FunctionCall(name="read_file", args={"path": "a.txt"}, id="c1"),
        FunctionCall(name="write_file", args={"path": "b.txt", "content": "b"}, id="c2"),
        FunctionCall(name="read_file", args={"path": "a.txt"}, id="c3"),
    ]
    task = asyncio.create_task(runner.answer("turn-1", calls))
    await asyncio.wait_for(host.asked.wait(), 10)  # the write waits for the user's answer
    task.cancel()
    with pytest.raises(CallsCancelled) as caught:
        await task
    assert task.cancelled(), "it still propagates as a cancellation"
    responses = [p.function_response for p in caught.value.answered]
    assert [r.id for r in responses if r is not None] == ["c1", "c2", "c3"]
    assert "alpha" in str(responses[0].response if responses[0] else "")
    assert [r.response for r in responses[1:] if r is not None] == [{"error": CANCELLED}] * 2
    assert [n.status for n in host.notices if n.call_id in ("c2", "c3")][-2:] == ["cancelled", "cancelled"]
