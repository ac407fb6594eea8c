"""save_memory and write_todos through the composition root and the real tool runner, the fake Gemini scripting the
agent's calls: a saved memory asks, lands in its file and reaches the next request; the todo list survives every
compaction, resume, fork and rewind, and the request after a compaction inside a turn names the item in progress."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sidecar.app import FrontEnd, Ports, Services, build_services
from sidecar.compaction.service import Trigger
from sidecar.compaction.tool_outputs import ToolOutputSaver
from sidecar.config.settings import Settings
from sidecar.gemini.client import ClientConfig, ModelClient
from sidecar.protocol.sessions import TodoItem
from sidecar.protocol.tools import ConfirmToolCallParams, ToolCallParams, ToolDecision
from sidecar.session import Session
from sidecar.tools import ToolPlan
from sidecar.tools.edits import ApplyEdit
from tests.service.conftest import EditorSpy, conversation

PLAN = [
    {"description": "read the parser", "status": "completed"},
    {"description": "fix the off-by-one in tokenize", "status": "in_progress"},
    {"description": "run the tests", "status": "pending"},
]


@dataclass
class Editor:
    """Answers every confirmation with `answer` and keeps what it was asked; hears the todo lists."""

    answer: ToolDecision = "allow"
    asked: list[ConfirmToolCallParams] = field(default_factory=list)
    todos: list[tuple[str, list[TodoItem]]] = field(default_factory=list)

    async def before_plan(self, paths: list[Path]) -> None:
        pass

    def after_call(self) -> None:
        pass

    def tool_call(self, notice: ToolCallParams, plan: ToolPlan | None = None, result: Any = None) -> None:
        pass

    async def confirm(self, request: ConfirmToolCallParams, plan: ToolPlan | None = None) -> ToolDecision:
        self.asked.append(request)
        return self.answer

    def apply_edit(self, plan: ToolPlan | None = None) -> ApplyEdit | None:
        return None

    def todos_changed(self, session_id: str, items: list[TodoItem]) -> None:
        self.todos.append((session_id, items))


@dataclass
class Rig:
    services: Services
    editor: Editor
    root: Path
    home: Path
    fake: Any

    async def say(self, text: str, *calls: dict[str, Any]) -> None:
        if calls:
            self.fake.script([{"kind": "function_call", "match": "chat", **c} for c in calls])
        await self.services.chat.send_message(text, None, self.services.live.ide.current)

    def chats(self) -> list[Any]:
        return [r for r in self.fake.requests() if r.kind == "stream" and not r.summary]

    def user_ids(self) -> list[str]:
        entries = self.services.sessions.transcript(None).entries
        return [e.id for e in entries if getattr(e, "kind", None) == "user" and not e.rewound]

    @property
    def todos(self) -> list[TodoItem]:
        return self.services.live.conversation.todos


def responses(request: Any) -> list[dict[str, Any]]:
    """The functionResponse parts of a request's last user turn."""
    last = request.body["contents"][-1]
    return [p["functionResponse"]["response"] for p in last["parts"] if "functionResponse" in p]


def calls_of(request: Any, name: str) -> list[dict[str, Any]]:
    """The functionCall parts calling `name` in a request's contents."""
    parts = [p for c in request.body["contents"] for p in c["parts"]]
    return [p for p in parts if p.get("functionCall", {}).get("name") == name]


def system(request: Any) -> str:
    return json.dumps(request.body.get("systemInstruction"))


@pytest.fixture
async def make(fake: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the global memory file is ~/.gemini/GEMINI.md
    client = ModelClient(
        ClientConfig(api_key="k", base_url=fake.url, timeout_ms=120_000, retry_attempts=0, retry_initial_delay_ms=1)
    )
    built: list[Services] = []

    async def get_client() -> ModelClient:
        return client

    async def hook(trigger: Trigger) -> None:
        pass

    async def factory(mode: str = "default", answer: ToolDecision = "allow", trusted: bool = True) -> Rig:
        root = tmp_path / f"ws-{len(built)}"
        root.mkdir()
        (root / ".git").mkdir()  # the project root
        session = Session(settings=Settings(approval_mode=mode), workspace_folders=[str(root)])  # type: ignore[arg-type]
        session.ide.trusted = trusted
        editor = Editor(answer)
        spy = EditorSpy()
        services = build_services(
            session,
            FrontEnd(notifier=spy, inform=spy.warning, tools=editor, on_todos_change=editor.todos_changed),
            Ports(model=get_client, pre_compress=hook, save_tool_output=ToolOutputSaver(tmp_path), home=home),
        )
        await services.start()
        built.append(services)
        return Rig(services, editor, root, home, fake)

    yield factory
    for services in built:
        await services.aclose()
    await client.aclose()


# -- save_memory -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["default", "autoEdit"])
async def test_a_saved_memory_asks_lands_in_the_file_and_reaches_the_next_request(make: Any, mode: str) -> None:
    rig: Rig = await make(mode)
    await rig.say("remember tabs", {"name": "save_memory", "args": {"fact": "The user prefers tabs over spaces"}})
    [asked] = rig.editor.asked
    target = rig.home / ".gemini" / "GEMINI.md"
    assert asked.tool_name == "save_memory"
    assert "- The user prefers tabs over spaces" in asked.description and str(target) in asked.description
    assert asked.diff is not None and "+- The user prefers tabs over spaces" in asked.diff
    assert target.read_text() == "## Gemini Added Memories\n- The user prefers tabs over spaces\n"
    [answer] = responses(rig.chats()[-1])
    assert "remembered" in answer["output"]
    await rig.say("and now?")
    assert "The user prefers tabs over spaces" in system(rig.chats()[-1]), "the refreshed memory is sent"


async def test_a_denied_memory_tells_the_model_and_writes_nothing(make: Any) -> None:
    rig: Rig = await make("default", answer="deny")
    await rig.say("remember", {"name": "save_memory", "args": {"fact": "secret", "scope": "project"}})
    assert len(rig.editor.asked) == 1
    assert not (rig.root / "GEMINI.md").exists()
    [answer] = responses(rig.chats()[-1])
    assert "denied" in answer["error"]


async def test_yolo_saves_without_asking_in_the_project_file(make: Any) -> None:
    rig: Rig = await make("yolo")
    await rig.say("remember", {"name": "save_memory", "args": {"fact": "Run make check first", "scope": "project"}})
    assert rig.editor.asked == []
    assert (rig.root / "GEMINI.md").read_text() == "## Gemini Added Memories\n- Run make check first\n"


async def test_an_untrusted_workspace_refuses_project_memory_in_words(make: Any) -> None:
    rig: Rig = await make("yolo", trusted=False)
    await rig.say("remember", {"name": "save_memory", "args": {"fact": "x", "scope": "project"}})
    assert not (rig.root / "GEMINI.md").exists()
    [answer] = responses(rig.chats()[-1])
    assert "Project memory is not written" in answer["error"] and "not trusted" in answer["error"]


# -- write_todos -------------------------------------------------------------------------------------------


async def test_write_todos_checks_the_list_and_tells_the_model_why(make: Any) -> None:
    rig: Rig = await make("default")
    two = [{"description": "a", "status": "in_progress"}, {"description": "b", "status": "in_progress"}]
    await rig.say("plan", {"name": "write_todos", "args": {"todos": two}})
    [answer] = responses(rig.chats()[-1])
    assert "Only one todo may be in_progress" in answer["error"] and rig.todos == []
    await rig.say("plan", {"name": "write_todos", "args": {"todos": [{"description": "a", "status": "done"}]}})
    [answer] = responses(rig.chats()[-1])
    assert "pending, in_progress, completed, cancelled" in answer["error"]
    assert rig.editor.asked == [], "write_todos never asks"


async def test_the_todo_list_is_shown_and_sent_and_survives_a_manual_compaction(make: Any) -> None:
    rig: Rig = await make("default")
    await rig.say("fix the tokenizer", {"name": "write_todos", "args": {"todos": PLAN}})
    assert [i.status for i in rig.todos] == ["completed", "in_progress", "pending"]
    session_id, shown = rig.editor.todos[-1]
    assert session_id == rig.services.live.conversation.session_id and shown == rig.todos
    assert "2. [in_progress] fix the off-by-one in tokenize" in system(rig.chats()[-1])
    conv = rig.services.live.conversation
    conv.replace([*conv.history, *conversation(12)])
    result = await rig.services.chat.compress(None)
    assert result.status == "COMPRESSED"
    [summary] = [r for r in rig.fake.requests() if r.summary][:1]
    assert "todo list outside the history" in json.dumps(summary.body["contents"][-1])
    await rig.say("go on")
    assert "fix the off-by-one in tokenize" in system(rig.chats()[-1])
    assert not calls_of(rig.chats()[-1], "write_todos"), "the call itself was summarized"


async def test_the_todo_list_survives_an_automatic_compaction(make: Any) -> None:
    rig: Rig = await make("default")
    await rig.say("fix the tokenizer", {"name": "write_todos", "args": {"todos": PLAN}})
    conv = rig.services.live.conversation
    conv.replace([*conv.history, *conversation(12)])
    conv.set_prompt_tokens(60_000, "api")
    rig.services.live.session.settings = Settings(token_limit=100_000, compression_threshold=0.5)
    await rig.say("go on")
    assert [r for r in rig.fake.requests() if r.summary], "compacted before the message"
    assert not calls_of(rig.chats()[-1], "write_todos"), "the call itself was summarized"
    assert "fix the off-by-one in tokenize" in system(rig.chats()[-1])


async def test_after_a_compaction_inside_a_turn_the_next_request_names_the_item_in_progress(make: Any) -> None:
    rig: Rig = await make("yolo")
    rig.services.live.conversation.replace(conversation(36))  # ~36k tokens: under the threshold
    rig.services.live.session.settings = Settings(token_limit=90_000, compression_threshold=0.7, approval_mode="yolo")
    # ~60k tokens more: the continuation would not fit without a compaction
    (rig.root / "big.txt").write_text(("lorem ipsum " * 165 + "\n") * 120)
    calls = [
        {"name": "write_todos", "args": {"todos": PLAN}},
        {"name": "read_file", "args": {"path": "big.txt"}},
    ]
    await rig.say("fix the tokenizer", {"calls": calls})
    assert [r for r in rig.fake.requests() if r.summary], "compacted inside the turn"
    after = rig.chats()[-1]
    note = json.dumps(after.body["contents"][-1])
    assert "compacted" in note and "fix the off-by-one in tokenize" in note and "Do not start the task over" in note
    assert "fix the off-by-one in tokenize" in system(after)
    recorded = json.dumps([m.text for m in rig.services.sessions.transcript(None).entries if hasattr(m, "text")])
    assert "Do not start the task over" not in recorded, "the note is for that request only"


async def test_the_todo_list_is_restored_on_resume_fork_and_rewind(make: Any) -> None:
    rig: Rig = await make("default")
    await rig.say("plan it", {"name": "write_todos", "args": {"todos": PLAN[:1]}})
    await rig.say("more", {"name": "write_todos", "args": {"todos": PLAN}})
    first, second = rig.user_ids()
    session_id = rig.services.live.conversation.session_id
    await rig.services.sessions.new()
    assert rig.todos == [] and rig.editor.todos[-1][1] == [], "a new session has no list, and the editor hears it"
    await rig.services.sessions.resume(session_id)
    assert [i.description for i in rig.todos] == [p["description"] for p in PLAN]
    assert rig.editor.todos[-1] == (session_id, rig.todos)
    # a fork before the second message gets the list as it was then
    forked = await rig.services.actions.fork(None, second)
    assert forked.session_id != session_id and [i.description for i in rig.todos] == ["read the parser"]
    # back in the parent, a rewind to the second message puts back the first list, to the first: none
    await rig.services.sessions.resume(session_id)
    assert len(rig.todos) == 3
    await rig.services.actions.rewind(second)
    assert [i.description for i in rig.todos] == ["read the parser"]
    await rig.services.actions.rewind(first)
    assert rig.todos == [] and rig.editor.todos[-1][1] == []
    await rig.say("again")
    assert "<todo_list>" not in system(rig.chats()[-1])
    await rig.services.sessions.new()
    await rig.services.sessions.resume(session_id)
    assert rig.todos == [], "the rewound list stays rewound after a resume"


async def test_the_user_clears_the_list(make: Any) -> None:
    rig: Rig = await make("default")
    await rig.say("plan it", {"name": "write_todos", "args": {"todos": PLAN}})
    assert rig.services.actions.clear_todos().cleared == 3
    assert rig.todos == [] and rig.editor.todos[-1][1] == []
    assert rig.services.actions.clear_todos().cleared == 0
    await rig.say("go on")
    assert "<todo_list>" not in system(rig.chats()[-1])
    session_id = rig.services.live.conversation.session_id
    await rig.services.sessions.new()
    await rig.services.sessions.resume(session_id)
    assert rig.todos == [], "the clear is recorded"
