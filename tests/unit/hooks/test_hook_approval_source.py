"""The workspace hooks' approval question names where the hooks came from: the editor's workspace settings or the
workspace file."""

from __future__ import annotations

import json
from pathlib import Path

from sidecar.config.layers import SettingsLayers
from sidecar.hooks.approval import HookApproval
from sidecar.protocol.tools import ConfirmToolCallParams, ToolDecision
from sidecar.session import Session

HOOKS = {"BeforeAgent": [{"command": "echo hi"}]}


async def question(tmp_path: Path, layers: SettingsLayers, workspace: Path) -> str:
    """The description of the question the workspace's hooks ask (refused)."""
    layers.resolve([str(workspace)], trusted=True)
    session = Session(workspace_folders=[str(workspace)], sources=layers)
    asked: list[ConfirmToolCallParams] = []

    async def ask(request: ConfirmToolCallParams) -> ToolDecision:
        asked.append(request)
        return "deny"

    class Project:
        home = tmp_path / "data"
        project_id = "p1"

    assert not await HookApproval(session, ask, lambda: Project()).approved(layers.workspace_hooks)
    assert len(asked) == 1
    return asked[0].description


async def test_hooks_from_the_editors_workspace_settings_are_named_so(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    layers = SettingsLayers()
    layers.init_options = {"sidecar": {"workspaceSettings": {"hooks": HOOKS}, "isTrusted": True}}
    description = await question(tmp_path, layers, workspace)
    assert ".vscode/settings.json" in description and "editor's workspace settings" in description, description
    assert ".sidecar/settings.json" not in description, "no workspace file defines them"


async def test_hooks_from_the_workspace_file_name_that_file(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".sidecar").mkdir(parents=True)
    (workspace / ".sidecar" / "settings.json").write_text(json.dumps({"hooks": HOOKS}))
    description = await question(tmp_path, SettingsLayers(), workspace)
    assert str(workspace / ".sidecar" / "settings.json") in description and ".vscode" not in description, description


async def test_hooks_from_both_name_both(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".sidecar").mkdir(parents=True)
    (workspace / ".sidecar" / "settings.json").write_text(json.dumps({"hooks": HOOKS}))
    layers = SettingsLayers()
    layers.init_options = {"sidecar": {"workspaceSettings": {"hooks": {"PreCompress": [{"command": "ls"}]}}}}
    description = await question(tmp_path, layers, workspace)
    assert ".vscode/settings.json" in description and str(workspace / ".sidecar" / "settings.json") in description
