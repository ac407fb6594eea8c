"""Hooks through the one settings pipeline: concatenated per event (editor, user file, trusted workspace file)."""

from __future__ import annotations

import json
from pathlib import Path

from sidecar.config.layers import SettingsLayers, acp_layers
from sidecar.config.settings import Hooks, decode_settings


def commands(hooks: Hooks) -> dict[str, list[str]]:
    return {
        "PreCompress": [h.command for h in hooks.pre_compress],
        "BeforeAgent": [h.command for h in hooks.before_agent],
        "SessionStart": [h.command for h in hooks.session_start],
    }


def workspace_file(root: Path, hooks: dict[str, object]) -> None:
    (root / ".sidecar").mkdir()
    (root / ".sidecar" / "settings.json").write_text(json.dumps({"sidecar": {"hooks": hooks}}))


def test_editor_user_file_and_workspace_hooks_all_run_in_that_order(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"hooks": {"BeforeAgent": [{"command": "user"}], "PreCompress": [{"command": "u"}]}}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    workspace_file(workspace, {"BeforeAgent": [{"command": "workspace"}], "SessionStart": [{"command": "w"}]})
    layers = SettingsLayers(user)
    layers.init_options = {"hooks": {"BeforeAgent": [{"command": "editor"}]}}
    settings, problems = layers.resolve([str(workspace)], trusted=True)
    assert problems == []
    assert commands(settings.hooks) == {
        "PreCompress": ["u"],
        "BeforeAgent": ["editor", "user", "workspace"],
        "SessionStart": ["w"],
    }
    assert commands(layers.workspace_hooks) == {"PreCompress": [], "BeforeAgent": ["workspace"], "SessionStart": ["w"]}


def test_did_change_configuration_replaces_the_editor_hooks_as_a_whole(tmp_path: Path) -> None:
    layers = SettingsLayers()
    layers.init_options = {"hooks": {"BeforeAgent": [{"command": "old"}]}}
    layers.config_section = {"sidecar": {"hooks": {"BeforeAgent": [{"command": "new"}]}}}
    settings, _ = layers.resolve([str(tmp_path)], trusted=True)
    assert commands(settings.hooks)["BeforeAgent"] == ["new"]
    layers.config_section = {"sidecar": {"model": "m"}}  # no hooks key: the editor's hooks stay
    settings, _ = layers.resolve([str(tmp_path)], trusted=True)
    assert commands(settings.hooks)["BeforeAgent"] == ["old"]


def test_an_untrusted_workspace_and_acp_add_no_hooks(tmp_path: Path) -> None:
    workspace_file(tmp_path, {"BeforeAgent": [{"command": "workspace"}]})
    layers = SettingsLayers()
    layers.init_options = {"hooks": {"BeforeAgent": [{"command": "editor"}]}}
    settings, _ = layers.resolve([str(tmp_path)], trusted=False)
    assert commands(settings.hooks)["BeforeAgent"] == ["editor"] and layers.workspace_hooks == Hooks()
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"hooks": {"BeforeAgent": [{"command": "user"}]}}))
    acp = acp_layers(user)
    settings, _ = acp.resolve([str(tmp_path)], trusted=True)
    assert commands(settings.hooks)["BeforeAgent"] == ["user"] and acp.workspace_hooks == Hooks()


def test_a_bad_hooks_value_is_reported_and_adds_nothing(tmp_path: Path) -> None:
    workspace_file(tmp_path, {"BeforeAgent": "not a list"})
    layers = SettingsLayers()
    layers.init_options = {"hooks": {"BeforeAgent": [{"command": "editor"}]}}
    settings, problems = layers.resolve([str(tmp_path)], trusted=True)
    assert commands(settings.hooks)["BeforeAgent"] == ["editor"]
    assert len(problems) == 1 and "hooks" in problems[0]


def test_gemini_cli_nested_hook_entries_are_accepted() -> None:
    """Hooks copied from Gemini CLI's settings ({matcher, hooks: [{type, command, timeout}]}) work as they are."""
    settings, problems = decode_settings(
        {
            "hooks": {
                "SessionStart": [
                    {
                        "matcher": "resume",
                        "hooks": [{"type": "command", "command": "a", "timeout": 5}, {"command": "b"}],
                    },
                    {"command": "c"},
                ]
            }
        }
    )
    assert problems == []
    assert [(h.command, h.matcher, h.timeout) for h in settings.hooks.session_start] == [
        ("a", "resume", 5),
        ("b", "resume", None),
        ("c", None, None),
    ]
