"""The doctor's editor-install check (a fake prefix) and its MCP section against real MCP servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sidecar import __version__
from sidecar.doctor.editor_install import editor_install_check, private_install
from sidecar.doctor.report import Context

MCP_SERVER = str(Path(__file__).parents[2] / "mcp_client" / "server.py")
VSCODE_VENV = "/home/u/.config/Code/User/globalStorage/sidecar.sidecar/server/venv"
NVIM_VENV = "/home/u/.local/share/nvim/sidecar/venv"


def _ctx(editor: str | None) -> Context:
    return Context("/w", "editor", {}, None, Path("/nowhere"), False, False, editor=editor)


def test_private_installs_are_named_and_an_old_one_says_how_to_reinstall() -> None:
    assert private_install(VSCODE_VENV) == "vscode"
    assert private_install(NVIM_VENV) == "nvim"
    assert private_install("/usr") is None
    [old] = editor_install_check(_ctx("vscode"), VSCODE_VENV, "0.0.1")
    assert not old.ok and "VS Code's private install" in old.detail and "0.0.1" in old.detail
    assert old.hint is not None and "Sidecar: Reinstall Server" in old.hint
    [old_nvim] = editor_install_check(_ctx("nvim"), NVIM_VENV, "0.0.1")
    assert not old_nvim.ok and old_nvim.hint is not None and ":SidecarUpdate" in old_nvim.hint
    [current] = editor_install_check(_ctx("nvim"), NVIM_VENV, __version__)
    assert current.ok and "Neovim's private install" in current.detail
    [elsewhere] = editor_install_check(_ctx(None), "/opt/other", "0.0.1")
    assert elsewhere.ok and "not an editor's private install" in elsewhere.detail


def _doctor(project: Path, settings: dict, *extra: str) -> tuple[int, dict]:
    env = {**os.environ, "SIDECAR_HOME": str(project / "home")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sidecar",
            "doctor",
            "--json",
            "--editor",
            "vscode",
            "--editor-settings",
            "-",
            "--project",
            str(project),
            *extra,
        ],
        input=json.dumps(settings),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return done.returncode, json.loads(done.stdout)


def _gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.process
def test_mcp_servers_are_started_listed_failed_and_stopped(tmp_path: Path) -> None:
    (tmp_path / ".sidecar").mkdir()
    settings = {
        "mcpServers": {
            "good": {"command": sys.executable, "args": [MCP_SERVER, "basic", str(tmp_path)]},
            "bad": {"command": sys.executable, "args": [MCP_SERVER, "dies"]},
        }
    }
    code, report = _doctor(tmp_path, settings)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["mcp good"]["ok"] and "add" in checks["mcp good"]["detail"], checks["mcp good"]
    bad = checks["mcp bad"]
    assert not bad["ok"] and "cannot open the database" in bad["detail"] and bad["hint"], bad
    assert code == 1
    assert [c["name"] for c in report["checks"] if c["name"] == "install"] == ["install"]
    pgids = [int(p.read_text()) for p in tmp_path.glob("pid-*")]
    assert pgids and all(_gone(g) for g in pgids)


@pytest.mark.process
def test_an_untrusted_workspaces_servers_are_listed_not_started(tmp_path: Path) -> None:
    (tmp_path / ".sidecar").mkdir()
    from sidecar.config.workspace_file import settings_path

    Path(settings_path(str(tmp_path))).write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ws": {"command": sys.executable, "args": [MCP_SERVER, "basic", str(tmp_path)]},
                }
            }
        )
    )
    code, report = _doctor(tmp_path, {})
    [ws] = [c for c in report["checks"] if c["name"] == "mcp ws"]
    assert ws["ok"] and ws["detail"] == "not started: untrusted workspace"
    assert not list(tmp_path.glob("pid-*"))
    assert code == 0 or any(not c["ok"] and c["name"] != "mcp ws" for c in report["checks"])
