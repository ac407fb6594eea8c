"""read_file may read this project's saved tool outputs, and nothing else outside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sidecar.tools.paths import ToolError, Workspace


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Workspace, Path, Path]:
    workspace, sessions = tmp_path / "ws", tmp_path / "home" / "sessions" / "proj-1234"
    workspace.mkdir()
    outputs = sessions / "session-a" / "tool-outputs"
    outputs.mkdir(parents=True)
    saved = outputs / "run_shell_command_1.txt"
    saved.write_text("full output\n")
    (sessions / "session-a.jsonl").write_text("{}\n")
    return Workspace([str(workspace)], lambda: sessions), sessions, saved


def test_a_saved_output_resolves(layout: tuple[Workspace, Path, Path]) -> None:
    workspace, _, saved = layout
    assert workspace.resolve_readable(str(saved)) == saved.resolve()


def test_other_files_of_the_sidecar_home_are_refused(layout: tuple[Workspace, Path, Path]) -> None:
    workspace, sessions, saved = layout
    for path in (sessions / "session-a.jsonl", saved.parent, sessions / "session-a" / "notes.txt"):
        with pytest.raises(ToolError, match="outside the workspace"):
            workspace.resolve_readable(str(path))


def test_a_link_out_of_the_folder_is_refused(layout: tuple[Workspace, Path, Path], tmp_path: Path) -> None:
    workspace, _, saved = layout
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    os.symlink(secret, saved.parent / "link.txt")
    with pytest.raises(ToolError):
        workspace.resolve_readable(str(saved.parent / "link.txt"))
    with pytest.raises(ToolError):
        workspace.resolve_readable(str(saved.parent / ".." / ".." / "session-a.jsonl"))


def test_only_read_file_uses_it(layout: tuple[Workspace, Path, Path]) -> None:
    workspace, _, saved = layout
    with pytest.raises(ToolError, match="outside the workspace"):
        workspace.resolve(str(saved))  # what every other tool calls
