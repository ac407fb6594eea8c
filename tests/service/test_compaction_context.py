"""The summary request is the chat's own request (service tier), the background preparation too, and the working
set that follows a compaction."""

from __future__ import annotations

from typing import Any

from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.pins import Pin
from sidecar.core.request_prefix import prefix_share
from sidecar.core.working_set import reattached_files
from tests.service.conftest import Rig, conversation
from tests.service.test_background_compaction import near_threshold, pushed, until

PIN = Pin("p1", "PINNED: keep the API stable")


def chats(rig: Rig) -> list[Any]:
    return [r for r in rig.fake.requests() if r.kind == "stream" and not r.summary]


def assert_chat_prefix(summary: Any, chat: Any) -> None:
    """`summary` is `chat`'s system instruction and tools, then a prefix of its contents, then the summary turn."""
    assert summary.body.get("systemInstruction") == chat.body.get("systemInstruction")
    assert summary.body.get("tools") == chat.body.get("tools")
    asked = summary.body["contents"]
    turn = next(i for i, c in enumerate(asked) if c["parts"][0].get("text", "").startswith("You are the memory"))
    assert asked[:turn] == chat.body["contents"][:turn]


async def test_the_summary_request_starts_with_the_last_chat_request(rig: Rig) -> None:
    rig.set(background_compaction=False)
    rig.live.conversation.set_pins([PIN])
    for i in range(6):
        await rig.chat.send_message(f"Step {i}: work on src/mod_{i}.py." + f" detail-{i}" * 1500)
    chat = chats(rig)[-1]
    assert "PINNED" in str(chat.body["systemInstruction"])
    await rig.chat.compress(None)
    first, second = rig.summary_requests()
    assert_chat_prefix(first, chat)
    assert second.body["contents"][: len(first.body["contents"])] == first.body["contents"]
    assert prefix_share(first.body, chat.body) >= 0.9 and prefix_share(second.body, first.body) >= 0.9


async def test_the_summary_prepared_in_the_background_starts_with_the_chat_request_too(rig: Rig) -> None:
    near_threshold(rig)
    mark = len(rig.rec.usages)
    await rig.chat.send_message("crosses the preparation point")
    await until(pushed(rig, "ready", mark), "a 'summary ready' usage push")
    first = rig.summary_requests()[0]
    assert_chat_prefix(first, chats(rig)[-1])


def read_round(call_id: str, path: str, output: str) -> list[Content]:
    call = FunctionCall(name="read_file", args={"path": path}, id=call_id)
    answer = FunctionResponse(name="read_file", id=call_id, response={"output": output})
    return [
        text_content("user", f"look at {path}"),
        Content(role="model", parts=[Part(function_call=call)]),
        Content(role="user", parts=[Part(function_response=answer)]),
        text_content("model", f"{path} read"),
    ]


async def compacted_with_files(rig: Rig) -> str:
    """A recorded session whose compaction re-attached a.py and b.py; the re-attached part."""

    async def read_back(raw: str) -> tuple[str, str | None, str]:
        return raw, f"{raw.upper()} CONTENT", ""

    rig.services.compactor.read_back = read_back
    rig.set(background_compaction=False)
    for name in ("a.py", "b.py"):
        rig.fake.script([{"kind": "function_call", "name": "read_file", "args": {"path": name}, "match": "chat"}])
        await rig.chat.send_message(f"Read {name}." + " detail" * 300)
    for i in range(4):
        await rig.chat.send_message(f"Go on {i}." + " detail" * 1500)
    assert (await rig.chat.compress(None)).status == "COMPRESSED"
    return rig.live.conversation.history[1].parts[1].text or ""


async def test_resume_and_undo_see_the_recorded_working_set(rig: Rig) -> None:
    attached = await compacted_with_files(rig)
    assert reattached_files(attached) == ["b.py", "a.py"]
    session = rig.live.conversation.session_id
    await rig.services.sessions.new()
    await rig.services.sessions.resume(session)
    assert rig.live.conversation.history[1].parts[1].text == attached, "replayed as recorded, not read again"
    await rig.services.sessions.undo_compaction()
    assert not any("<reattached_files>" in (p.text or "") for c in rig.live.conversation.history for p in c.parts)


async def test_the_files_the_summary_replaced_come_back_after_it(rig: Rig) -> None:
    current = {"a.py": "A = 2  # edited since", "b.py": "B = 1"}

    async def read_back(raw: str) -> tuple[str, str | None, str]:
        text = current.get(raw)
        return raw, text, "" if text is not None else "no such file"

    rig.services.compactor.read_back = read_back
    history = [
        *read_round("c1", "a.py", "A = 1"),
        *read_round("c2", "gone.py", "G"),
        *read_round("c3", "b.py", "B = 1"),
    ]
    rig.load([*history, *conversation(6)], prompt_tokens=60_000)
    result = await rig.chat.compress(None)
    assert result.status == "COMPRESSED"
    snapshot_turn = rig.live.conversation.history[1]  # after the fresh environment turn
    assert "<state_snapshot>" in (snapshot_turn.parts[0].text or "")
    attached = snapshot_turn.parts[1].text or ""
    assert reattached_files(attached) == ["b.py", "a.py"]
    assert "- not re-attached: gone.py (no such file)" in attached and "A = 2  # edited since" in attached
    await rig.chat.send_message("go on")
    assert "A = 2  # edited since" in str(chats(rig)[-1].body["contents"][1])
