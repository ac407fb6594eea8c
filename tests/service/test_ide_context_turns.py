"""When the chat service injects IDE context (gemini-cli.md §9 items 60–63) and when it forces the full context."""

from __future__ import annotations

import json
from typing import Any

from sidecar.core.history import Content, FunctionCall, Part, text_content
from sidecar.core.ide_context import FULL_HEADER
from sidecar.protocol.ide import Cursor, OpenFile
from tests.service.conftest import Rig, conversation

FILE_A = OpenFile(path="/ws/a.py", timestamp=1, is_active=True, cursor=Cursor(1, 1))
FILE_B = OpenFile(path="/ws/b.py", timestamp=2, is_active=True, cursor=Cursor(2, 2))
FILE_C = OpenFile(path="/ws/c.py", timestamp=3, is_active=True, cursor=Cursor(3, 3))


def context_texts(history: list[Content]) -> list[str]:
    return [p.text for c in history for p in c.parts if p.text and p.text.startswith("Here is")]


def parsed(text: str) -> dict[str, Any]:
    return json.loads(text.split("```json\n", 1)[1].rsplit("\n```", 1)[0])  # type: ignore[no-any-return]


def pending_call(rig: Rig) -> None:
    rig.live.conversation.append(
        Content(role="model", parts=[Part(function_call=FunctionCall(name="read_file", args={"path": "x"}, id="1"))])
    )


async def test_no_ide_context_while_a_tool_call_awaits_its_response(rig: Rig) -> None:
    rig.load([text_content("user", "hi")], prompt_tokens=1)
    pending_call(rig)
    rig.live.set_ide_context([FILE_A], True)
    rig.chat._add_ide_context()
    assert context_texts(rig.live.conversation.history) == []
    assert rig.live.ide.last_sent is None


async def test_ide_context_is_added_when_no_call_is_pending(rig: Rig) -> None:
    rig.live.set_ide_context([FILE_A], True)
    await rig.chat.send_message("hello")
    (text,) = context_texts(rig.live.conversation.history)
    assert text.startswith(FULL_HEADER)


async def test_after_a_skipped_context_the_next_turn_sends_full_with_the_latest_files(rig: Rig) -> None:
    rig.load([text_content("user", "hi")], prompt_tokens=1)
    rig.live.conversation.force_full_ide_context = True
    pending_call(rig)
    rig.live.set_ide_context([FILE_A], True)
    rig.chat._add_ide_context()  # skipped: a call is pending
    rig.live.conversation.truncate(1)  # the call got its answer in the meantime (simplified)
    rig.live.set_ide_context([FILE_B], True)
    rig.chat._add_ide_context()
    (text,) = context_texts(rig.live.conversation.history)
    assert text.startswith(FULL_HEADER)
    assert parsed(text)["activeFile"]["path"] == "/ws/b.py" and "/ws/a.py" not in text


async def test_full_then_skipped_then_delta_reports_closed_and_changed(rig: Rig) -> None:
    rig.live.set_ide_context([FILE_A], True)
    await rig.chat.send_message("one")
    pending_call(rig)
    rig.live.set_ide_context([FILE_B], True)
    rig.chat._add_ide_context()  # skipped
    rig.live.conversation.truncate(len(rig.live.conversation) - 1)
    rig.live.set_ide_context([FILE_C], True)
    await rig.chat.send_message("two")
    texts = context_texts(rig.live.conversation.history)
    changes = parsed(texts[-1])["changes"]
    assert changes["filesClosed"] == ["/ws/a.py"]
    assert changes["activeFileChanged"]["path"] == "/ws/c.py"


async def test_compaction_forces_the_full_context_on_the_next_turn(rig: Rig) -> None:
    rig.live.set_ide_context([FILE_A], True)
    await rig.chat.send_message("start")
    rig.load([*conversation(20)], prompt_tokens=60_000)
    rig.live.conversation.force_full_ide_context = False
    await rig.chat.compress(None)
    assert rig.live.conversation.force_full_ide_context
    await rig.chat.send_message("after")
    assert context_texts(rig.live.conversation.history)[-1].startswith(FULL_HEADER)
    assert not rig.live.conversation.force_full_ide_context


async def test_the_flag_survives_a_failed_compaction_and_clears_only_when_context_is_built(rig: Rig) -> None:
    rig.load([*conversation(20)], prompt_tokens=60_000)
    rig.live.conversation.force_full_ide_context = True
    await rig.chat.send_message("no editor context known yet")
    assert rig.live.conversation.force_full_ide_context, "no context was built: the flag stays"
