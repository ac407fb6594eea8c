"""Workspace confinement: `..`, absolute paths elsewhere and symlink escapes are refused; inside links are fine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sidecar.tools import ToolError, ToolRegistry, Workspace


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace and a sibling folder outside it, with links from the one into the other."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    outside.mkdir()
    (ws / "src" / "a.txt").write_text("inside\n")
    (outside / "secret.txt").write_text("secret\n")
    (ws / "file_link").symlink_to(outside / "secret.txt")
    (ws / "dir_link").symlink_to(outside)
    (ws / "inner_link").symlink_to(ws / "src" / "a.txt")
    (ws / "inner_dir_link").symlink_to(ws / "src")
    return ws, outside


def test_relative_path_resolves_from_the_first_folder(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    assert Workspace([str(ws)]).resolve("src/a.txt") == ws / "src" / "a.txt"
    assert Workspace([str(ws)]).resolve("src/../src/a.txt") == ws / "src" / "a.txt"  # `..` that stays inside


@pytest.mark.parametrize("raw", ["../outside/secret.txt", "src/../../outside/secret.txt", ".."])
def test_dot_dot_out_of_the_workspace_is_refused(layout: tuple[Path, Path], raw: str) -> None:
    ws, _ = layout
    with pytest.raises(ToolError, match="outside the workspace"):
        Workspace([str(ws)]).resolve(raw)


def test_absolute_path_elsewhere_is_refused_and_inside_is_fine(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    workspace = Workspace([str(ws)])
    with pytest.raises(ToolError, match="outside the workspace"):
        workspace.resolve(str(outside / "secret.txt"))
    with pytest.raises(ToolError, match="outside the workspace"):
        workspace.resolve("/etc/passwd")
    assert workspace.resolve(str(ws / "src" / "a.txt")) == ws / "src" / "a.txt"


@pytest.mark.parametrize("raw", ["file_link", "dir_link", "dir_link/secret.txt", "dir_link/new.txt"])
def test_symlink_escapes_are_refused(layout: tuple[Path, Path], raw: str) -> None:
    ws, outside = layout
    with pytest.raises(ToolError, match="symbolic link") as info:
        Workspace([str(ws)]).resolve(raw)
    assert str(outside) in str(info.value)


def test_symlinks_that_stay_inside_resolve_to_their_target(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    workspace = Workspace([str(ws)])
    assert workspace.resolve("inner_link") == ws / "src" / "a.txt"
    assert workspace.resolve("inner_dir_link/a.txt") == ws / "src" / "a.txt"


def test_workspace_folder_given_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "src").mkdir(parents=True)
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    workspace = Workspace([str(alias)])
    assert workspace.resolve("src") == real / "src"
    assert workspace.resolve(str(alias / "src")) == real / "src"
    assert workspace.resolve(str(real / "src")) == real / "src"
    assert workspace.display(real / "src") == "src"


def test_several_folders_absolute_paths_reach_each_and_display_is_usable(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    workspace = Workspace([str(first), str(second)])
    assert workspace.resolve(str(second / "x.txt")) == second / "x.txt"
    assert workspace.display(first / "a" / "b.txt") == "a/b.txt"
    assert workspace.display(second / "x.txt") == str(second / "x.txt")
    assert workspace.display(first) == "."
    with pytest.raises(ToolError, match=str(second)):
        workspace.resolve("/elsewhere")  # the hint names every folder


def test_folder_prefix_is_not_containment(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws-other").mkdir()
    with pytest.raises(ToolError, match="outside"):
        Workspace([str(tmp_path / "ws")]).resolve(str(tmp_path / "ws-other" / "x"))


@pytest.mark.parametrize(("raw", "message"), [("", "empty"), ("  ", "empty"), ("~/x", "home"), ("a\0b", "NUL")])
def test_malformed_paths(tmp_path: Path, raw: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        Workspace([str(tmp_path)]).resolve(raw)


def test_no_workspace_folder_refuses_everything() -> None:
    with pytest.raises(ToolError, match="No workspace folder"):
        Workspace([]).resolve("a.txt")


def test_folders_may_come_from_a_callable(tmp_path: Path) -> None:
    folders: list[str] = []
    workspace = Workspace(lambda: folders)
    with pytest.raises(ToolError):
        workspace.resolve("a")
    folders.append(str(tmp_path))
    assert workspace.resolve("a") == tmp_path / "a"


# ---------------------------------------------------------------- through the tools


def _registry(ws: Path) -> ToolRegistry:
    return ToolRegistry([str(ws)], save_output=lambda text, name: ws / "unused", output_threshold=lambda: 1000)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("read_file", {"path": "file_link"}),
        ("read_file", {"path": "dir_link/secret.txt"}),
        ("read_file", {"path": "../outside/secret.txt"}),
        ("list_directory", {"path": "dir_link"}),
        ("glob", {"pattern": "*", "directory": "dir_link"}),
        ("search_text", {"pattern": "secret", "directory": "../outside"}),
        ("write_file", {"path": "file_link", "content": "x"}),
        ("write_file", {"path": "dir_link/new.txt", "content": "x"}),
        ("replace", {"path": "file_link", "old_string": "secret", "new_string": "x"}),
        ("run_shell_command", {"command": "true", "directory": "dir_link"}),
    ],
)
async def test_every_tool_refuses_escapes_before_running(layout: tuple[Path, Path], name: str, args: dict) -> None:
    ws, outside = layout
    registry = _registry(ws)
    plan = registry.plan(name, args, trusted=True)
    assert plan.error is not None and "outside the workspace" in plan.error
    result = await registry.run(plan, apply_edit=None)
    assert not result.ok and result.response == {"error": plan.error}
    assert (outside / "secret.txt").read_text() == "secret\n"
    assert not (outside / "new.txt").exists()


async def test_walks_skip_links_that_leave_the_workspace(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    registry = _registry(ws)
    found = await registry.run(registry.plan("glob", {"pattern": "**/*"}, trusted=True), apply_edit=None)
    listed = found.response["output"].splitlines()
    assert "file_link" not in listed and not any(p.startswith("dir_link") for p in listed)
    assert "inner_link" in listed and "src/a.txt" in listed  # inside links are kept; dir links not followed
    hits = await registry.run(registry.plan("search_text", {"pattern": "secret|inside"}, trusted=True), apply_edit=None)
    assert "secret" not in hits.response["output"]
    assert "src/a.txt:1: inside" in hits.response["output"]


async def test_edit_refused_when_a_symlink_appears_after_planning(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    registry = _registry(ws)
    target = ws / "src" / "b.txt"
    target.write_text("old\n")
    plan = registry.plan("write_file", {"path": "src/b.txt", "content": "new\n"}, trusted=True)
    assert plan.error is None
    target.unlink()
    target.symlink_to(outside / "secret.txt")
    result = await registry.run(plan, apply_edit=None)
    assert not result.ok and "outside the workspace" in result.response["error"]
    assert (outside / "secret.txt").read_text() == "secret\n"
    assert os.path.islink(target)
