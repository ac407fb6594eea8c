"""One settings pipeline (config/layers.py) for both front-ends: the sources in order, one safe file reader,
problems told once, and Session.reload_settings() the only writer of the settings."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from sidecar.config.layers import SettingsLayers
from sidecar.config.user_file import user_settings_path

PACKAGE = Path(__file__).resolve().parents[3] / "sidecar"


def test_sources_in_order_user_file_editor_workspace_file_then_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIDECAR_SETTINGS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert user_settings_path() == tmp_path / "config" / "sidecar" / "settings.json"
    assert user_settings_path("~/x.json") == Path.home() / "x.json"
    user = tmp_path / "user.json"
    user.write_text(
        json.dumps(
            {"sidecar": {"model": "gemini-2.5-pro", "apiKey": "mine", "tokenLimit": 9000, "approvalMode": "autoEdit"}}
        )
    )
    root = tmp_path / "ws"
    (root / ".sidecar").mkdir(parents=True)
    (root / ".sidecar" / "settings.json").write_text(
        json.dumps({"tokenLimit": 7000, "apiKey": "theirs", "retryAttempts": 99})
    )
    layers = SettingsLayers(user)
    settings, problems = layers.resolve([str(root)], trusted=False)
    assert (settings.model, settings.api_key, settings.token_limit, settings.retry_attempts) == (
        "gemini-2.5-pro",
        "mine",
        7000,
        3,
    )
    assert settings.approval_mode == "autoEdit"
    assert any("apiKey" in p for p in problems) and any("retryAttempts" in p for p in problems)

    layers.init_options = {"model": "gemini-3-pro-preview", "tokenLimit": 8000}
    layers.overrides = {"approvalMode": "yolo"}
    settings, problems = layers.resolve([str(root)], trusted=False)
    assert (settings.model, settings.token_limit, settings.approval_mode) == ("gemini-3-pro-preview", 7000, "yolo")
    assert problems == [], "each problem is told once, until it goes away"

    user.write_text("{not json")
    settings, problems = layers.resolve([str(root)], trusted=False)
    assert any(str(user) in p and "not valid JSON" in p for p in problems)
    assert settings.api_key is None, "a broken user file is ignored as a whole"


def test_a_fifo_as_the_user_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    _settings, problems = SettingsLayers(fifo).resolve([], trusted=False)
    assert problems == [f"{fifo} is not a regular file; it is ignored."]


def test_a_user_file_holding_null_is_a_problem_and_a_missing_one_is_not(tmp_path: Path) -> None:
    assert SettingsLayers(tmp_path / "absent.json").resolve([], trusted=False)[1] == []
    (tmp_path / "null.json").write_text("null")
    root = tmp_path / "ws"
    (root / ".sidecar").mkdir(parents=True)
    (root / ".sidecar" / "settings.json").write_text("null")
    _settings, problems = SettingsLayers().resolve([str(root)], trusted=False)
    assert problems == [f"{root / '.sidecar' / 'settings.json'} must hold a JSON object; it is ignored."]


def test_a_workspace_the_front_end_cannot_ask_about_never_gets_its_hooks(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".sidecar").mkdir(parents=True)
    hooks = {"PreCompress": [{"command": "true"}]}
    (root / ".sidecar" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    layers = SettingsLayers()
    assert layers.resolve([str(root)], trusted=True)[0].hooks.pre_compress
    layers.workspace_trust = False  # ACP: no way to ask the user whether to trust the repository
    assert not layers.resolve([str(root)], trusted=True)[0].hooks.pre_compress


def test_session_reload_settings_is_the_only_writer_of_the_settings() -> None:
    writers = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "session.py" or path.parent != PACKAGE
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute) and target.attr == "settings"
    ]
    assert writers == []
