"""save_memory and write_todos through the real sidecar over stdio: the memory asks (sidecar/confirmToolCall) and
lands in ~/.gemini/GEMINI.md (HOME in a temp folder); the todo list arrives as sidecar/todosChanged, answers
sidecar/getTodos, is cleared by sidecar/clearTodos and comes back with a resumed session."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import methods
from tests.e2e.harness import EditorClient, notes, request, wait_for

PLAN = [
    {"description": "read the parser", "status": "completed"},
    {"description": "fix the off-by-one", "status": "in_progress"},
]


@pytest.fixture
def base() -> Any:
    path = Path(os.path.realpath(tempfile.mkdtemp(prefix="sidecar-memtodo-")))
    (path / "home").mkdir()
    (path / "ws" / ".git").mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
async def client(base: Path, fake: Any) -> AsyncIterator[EditorClient]:
    editor = EditorClient("visual-studio-code", str(base / "ws"), HOME=str(base / "home"))
    await editor.start()
    await editor.initialize(fake.url)
    try:
        yield editor
    finally:
        await editor.stop()


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


def system(request: Any) -> str:
    return "".join(p.get("text", "") for p in (request.body.get("systemInstruction") or {}).get("parts", []))


async def test_save_memory_asks_and_lands_in_the_global_file(client: EditorClient, fake: Any, base: Path) -> None:
    fake.script([{"kind": "function_call", "match": "chat", "name": "save_memory", "args": {"fact": "Use tabs"}}])
    await request(client, methods.SEND_MESSAGE.name, {"text": "remember: tabs"}, timeout=60)
    [asked] = client.confirmations
    target = base / "home" / ".gemini" / "GEMINI.md"
    assert asked["toolName"] == "save_memory" and "- Use tabs" in asked["description"]
    assert str(target) in asked["description"] and "+- Use tabs" in asked["diff"]
    assert target.read_text() == "## Gemini Added Memories\n- Use tabs\n"
    memory = await wait_for(client, methods.MEMORY_CHANGED.name, lambda m: bool(m["files"]))
    assert memory["files"][0]["path"] == str(target)
    await request(client, methods.SEND_MESSAGE.name, {"text": "and now?"}, timeout=60)
    assert "Use tabs" in system(chats(fake)[-1])


async def test_the_todo_list_is_told_cleared_and_resumed(client: EditorClient, fake: Any) -> None:
    fake.script([{"kind": "function_call", "match": "chat", "name": "write_todos", "args": {"todos": PLAN}}])
    result = await request(client, methods.SEND_MESSAGE.name, {"text": "fix it"}, timeout=60)
    told = await wait_for(client, methods.TODOS_CHANGED.name, lambda n: bool(n["items"]))
    assert told["items"] == PLAN and client.confirmations == []
    usage = await request(client, methods.GET_TOKEN_USAGE.name)
    assert told["sessionId"] == usage["sessionId"]
    assert (await request(client, methods.GET_TODOS.name))["items"] == PLAN
    assert "fix the off-by-one" in system(chats(fake)[-1])
    assert result["text"]
    start = len(notes(client, methods.TODOS_CHANGED.name))
    assert (await request(client, methods.CLEAR_TODOS.name)) == {"cleared": 2}
    cleared = await wait_for(client, methods.TODOS_CHANGED.name, start=start)
    assert cleared["items"] == []
    # a list set again, then a new session and a resume bring it back
    fake.script([{"kind": "function_call", "match": "chat", "name": "write_todos", "args": {"todos": PLAN[:1]}}])
    await request(client, methods.SEND_MESSAGE.name, {"text": "plan again"}, timeout=60)
    session_id = usage["sessionId"]
    await request(client, methods.NEW_SESSION.name)
    assert (await request(client, methods.GET_TODOS.name))["items"] == []
    start = len(notes(client, methods.TODOS_CHANGED.name))
    await request(client, methods.RESUME_SESSION.name, {"sessionId": session_id})
    resumed = await wait_for(client, methods.TODOS_CHANGED.name, lambda n: bool(n["items"]), start=start)
    assert resumed["items"] == PLAN[:1] and resumed["sessionId"] == session_id
