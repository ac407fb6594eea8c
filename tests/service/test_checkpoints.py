"""Checkpoints through the composition root (build_services) and the real tool runner, the fake Gemini scripting the
agent's calls: every approval mode is checkpointed; restores go through the editor's applyEdit for open files."""

from __future__ import annotations

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
from sidecar.protocol import errors
from sidecar.protocol.ide import OpenFile
from sidecar.protocol.tools import ConfirmToolCallParams, ToolCallParams, ToolDecision
from sidecar.session import Session
from sidecar.tools import ToolPlan
from sidecar.tools.edits import ApplyEdit
from tests.service.conftest import EditorSpy


@dataclass
class Editor:
    """The service tests' editor: answers confirmations with allow, applies WorkspaceEdits (keeping them) when it
    supports applyEdit, and remembers what it was asked."""

    supports_apply_edit: bool = True
    asked: list[str] = field(default_factory=list)
    edits: list[dict[str, Any]] = field(default_factory=list)

    async def before_plan(self, paths: list[Path]) -> None:
        pass

    def after_call(self) -> None:
        pass

    def tool_call(self, notice: ToolCallParams, plan: ToolPlan | None = None, result: Any = None) -> None:
        pass

    async def confirm(self, request: ConfirmToolCallParams, plan: ToolPlan | None = None) -> ToolDecision:
        self.asked.append(request.tool_name)
        return "allow"

    def apply_edit(self, plan: ToolPlan | None = None) -> ApplyEdit | None:
        if not self.supports_apply_edit:
            return None

        async def apply(edit: dict[str, Any]) -> tuple[bool, str | None]:
            self.edits.append(edit)
            return True, None

        return apply


@dataclass
class Rig:
    services: Services
    editor: Editor
    root: Path
    fake: Any

    async def say(self, text: str, *calls: dict[str, Any]) -> None:
        if calls:
            self.fake.script([{"kind": "function_call", "match": "chat", **c} for c in calls])
        await self.services.chat.send_message(text, None, self.services.live.ide.current)

    def user_ids(self) -> list[str]:
        entries = self.services.sessions.transcript(None).entries
        return [e.id for e in entries if getattr(e, "kind", None) == "user"]


@pytest.fixture
async def make(fake: Any, tmp_path: Path) -> AsyncIterator[Any]:
    client = ModelClient(
        ClientConfig(api_key="k", base_url=fake.url, timeout_ms=120_000, retry_attempts=0, retry_initial_delay_ms=1)
    )
    built: list[Services] = []

    async def get_client() -> ModelClient:
        return client

    async def hook(trigger: Trigger) -> None:
        pass

    async def factory(mode: str, supports_apply_edit: bool = False) -> Rig:
        root = tmp_path / f"ws-{len(built)}"
        root.mkdir()
        session = Session(settings=Settings(approval_mode=mode), workspace_folders=[str(root)])  # type: ignore[arg-type]
        editor = Editor(supports_apply_edit)
        spy = EditorSpy()
        services = build_services(
            session,
            FrontEnd(notifier=spy, inform=spy.warning, tools=editor),
            Ports(
                model=get_client, pre_compress=hook, save_tool_output=ToolOutputSaver(tmp_path), home=tmp_path / "home"
            ),
        )
        await services.start()
        built.append(services)
        return Rig(services, editor, root, fake)

    yield factory
    for services in built:
        await services.aclose()
    await client.aclose()


@pytest.mark.parametrize("mode", ["default", "autoEdit", "yolo"])
async def test_edits_are_checkpointed_whether_or_not_they_ask(make: Any, mode: str) -> None:
    rig: Rig = await make(mode)
    (rig.root / "a.txt").write_text("original\n")
    await rig.say("edit a", {"name": "write_file", "args": {"path": "a.txt", "content": "agent\n"}})
    assert rig.editor.asked == (["write_file"] if mode == "default" else [])
    [first] = rig.user_ids()
    listed = rig.services.actions.checkpoints.list_checkpoints(None)
    assert [(f.path, f.change) for f in listed.checkpoints[0].files] == [(str(rig.root / "a.txt"), "modified")]
    result = await rig.services.actions.rewind(first, restore_files=True)
    assert result.restored == [str(rig.root / "a.txt")] and (rig.root / "a.txt").read_text() == "original\n"


async def test_open_files_go_back_through_apply_edit_and_the_rest_to_disk(make: Any) -> None:
    rig: Rig = await make("yolo", supports_apply_edit=True)
    for name in ("open.txt", "closed.txt"):
        (rig.root / name).write_text(f"{name} before\n")
    edits = [
        {"name": "run_shell_command", "args": {"command": f"echo changed > {name}"}}
        for name in ("open.txt", "closed.txt")
    ]
    await rig.say("change both with the shell", *edits)
    assert (rig.root / "open.txt").read_text() == "changed\n"
    rig.services.live.session.ide.current = [OpenFile(path=str(rig.root / "open.txt"), timestamp=1)]
    [first] = rig.user_ids()
    result = await rig.services.actions.rewind(first, restore_files=True)
    assert sorted(result.restored) == [str(rig.root / "closed.txt"), str(rig.root / "open.txt")]
    assert "1 in the editor" in result.message
    [edit] = rig.editor.edits
    [change] = edit["documentChanges"]
    assert change["textDocument"]["uri"] == (rig.root / "open.txt").as_uri()
    assert [e["newText"] for e in change["edits"]] == ["open.txt before\n"]
    assert (rig.root / "closed.txt").read_text() == "closed.txt before\n", "not open: written to disk"
    assert (rig.root / "open.txt").read_text() == "changed\n", "open: the editor's buffer has it, unsaved"


async def test_a_fork_rewinds_the_files_its_parent_changed(make: Any) -> None:
    rig: Rig = await make("yolo")
    (rig.root / "a.txt").write_text("original\n")
    await rig.say("edit a", {"name": "replace", "args": {"path": "a.txt", "old_string": "original", "new_string": "x"}})
    await rig.say("talk more")
    [first, _second] = rig.user_ids()
    forked = await rig.services.actions.fork(None, None)
    assert forked.session_id != forked.parent_session_id
    preview = await rig.services.actions.checkpoints.preview_rewind(first)
    assert preview.restored == [str(rig.root / "a.txt")] and (rig.root / "a.txt").read_text() == "x\n"
    result = await rig.services.actions.rewind(first, restore_files=True)
    assert result.restored == preview.restored and (rig.root / "a.txt").read_text() == "original\n"


async def test_each_edit_belongs_to_the_turn_the_live_conversation_names(make: Any) -> None:
    """The checkpoints ask the live conversation which turn is running: each turn names its own user message, and
    a switch of the conversation (here a rewind) names none until the next turn records its message."""
    rig: Rig = await make("yolo")
    (rig.root / "a.txt").write_text("original\n")
    await rig.say("edit a", {"name": "write_file", "args": {"path": "a.txt", "content": "first\n"}})
    [first] = rig.user_ids()
    assert rig.services.live.turn_message_id == first
    await rig.services.actions.rewind(first)
    assert rig.services.live.turn_message_id is None, "rewound: no turn of the new history has run"
    await rig.say("edit a again", {"name": "write_file", "args": {"path": "a.txt", "content": "second\n"}})
    second = rig.services.live.turn_message_id
    assert second is not None and second != first and second in rig.user_ids()
    listed = rig.services.actions.checkpoints.list_checkpoints(None)
    files = {c.message_id: [(f.path, f.change) for f in c.files] for c in listed.checkpoints}
    assert files == {second: [(str(rig.root / "a.txt"), "modified")]}


async def test_bad_requests_are_answered_in_words(make: Any) -> None:
    rig: Rig = await make("yolo")
    assert rig.services.actions.checkpoints.list_checkpoints(None).checkpoints == [], "nothing recorded yet"
    with pytest.raises(errors.SidecarError) as caught:
        await rig.services.actions.checkpoints.preview_rewind("m1")
    assert caught.value.code == errors.SESSION_ERROR and "nothing has been recorded" in caught.value.message
    (rig.root / "a.txt").write_text("original\n")
    await rig.say("edit a", {"name": "write_file", "args": {"path": "a.txt", "content": "agent\n"}})
    [first] = rig.user_ids()
    with pytest.raises(errors.SidecarError) as caught:
        rig.services.actions.checkpoints.list_checkpoints("00000000-0000-4000-8000-00000000dead")
    assert caught.value.code == errors.SESSION_ERROR and "Cannot read session" in caught.value.message
    with pytest.raises(errors.SidecarError) as caught:
        await rig.services.actions.checkpoints.preview_rewind("m999")
    assert "Cannot rewind to m999" in caught.value.message
    await rig.services.actions.rewind(first, restore_files=True)
    with pytest.raises(errors.SidecarError) as caught:
        await rig.services.actions.checkpoints.preview_rewind(first)
    assert "already rewound" in caught.value.message
    assert (rig.root / "a.txt").read_text() == "original\n"
