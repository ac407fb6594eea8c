"""Protected paths, the hard-link rule and the safe file access of sidecar/tools."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
from pathlib import Path

import pytest

from sidecar.tools import ToolError, ToolPlan, ToolRegistry, allow_always_key, needs_confirmation
from sidecar.tools.protected import MAX_INCLUDE_DEPTH, command_files, git_config_files, why_protected
from sidecar.tools.safe_io import off_loop, read_regular, write_regular


@pytest.mark.parametrize(
    "rel",
    [
        ".git/config",
        ".GIT/hooks/pre-commit",
        "sub/.git",
        "a/b/.sidecar/settings.json",
        ".gemini/x",
        ".vscode/tasks.json",
        "pkg/.vscode/launch.json",
        ".vscode/settings.json",
        ".envrc",
        "x/.exrc",
        ".nvimrc",
        ".nvim.lua",
        ".husky/pre-push",
        "GEMINI.md",
        "docs/agents.md",
        ".pre-commit-config.yaml",
        "lefthook.yml",
        "a/.lefthook.yml",
        "team.code-workspace",
        ".devcontainer/devcontainer.json",
        ".devcontainer.json",
        ".github/workflows/ci.yml",
    ],
)
def test_protected_names_anywhere_in_the_workspace(tmp_path: Path, rel: str) -> None:
    assert why_protected([tmp_path / rel], [tmp_path]) is not None


@pytest.mark.parametrize(
    "rel",
    [
        "src/main.py",
        ".vscode/extensions.json",
        "README.md",
        "gitconfig",
        "my.envrc.txt",
        ".github/CODEOWNERS",
        "workflows/x.yml",
    ],
)
def test_ordinary_paths_are_not_protected(tmp_path: Path, rel: str) -> None:
    assert why_protected([tmp_path / rel], [tmp_path]) is None


def test_the_workspace_folder_itself_may_sit_below_a_protected_name(tmp_path: Path) -> None:
    root = tmp_path / ".gemini" / "project"
    assert why_protected([root / "main.py"], [root]) is None, "only the part below the workspace folder counts"


def test_git_hook_folders_from_the_config_and_a_git_dir_anywhere(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text('[core]\n\tHooksPath = "tools/hooks"\n')
    why = why_protected([tmp_path / "tools" / "hooks" / "pre-commit"], [tmp_path])
    assert why is not None and "core.hooksPath" in why
    separate = tmp_path / "vendor" / "lib.git"
    for part in ("objects", "refs"):
        (separate / part).mkdir(parents=True)
    (separate / "HEAD").write_text("ref: refs/heads/main\n")
    assert why_protected([separate / "hooks" / "post-merge"], [tmp_path]) is not None


def test_git_config_includes_are_followed_like_git_and_a_loop_ends(tmp_path: Path) -> None:
    """include.path and includeIf make another file git config: it is protected, and so are the files it includes
    (a loop of includes ends; a chain stops after MAX_INCLUDE_DEPTH files)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text('[include]\n\tpath = "../a.cfg" # why\n')
    (tmp_path / "a.cfg").write_text('[includeIf "onbranch:main"]\n\tpath = b.cfg\n')
    (tmp_path / "b.cfg").write_text("[include]\n\tpath = a.cfg\n[core]\n\thooksPath = more-hooks\n")
    for name in ("a.cfg", "b.cfg"):
        assert "include.path or includeIf" in (why_protected([tmp_path / name], [tmp_path]) or ""), name
    assert "core.hooksPath" in (why_protected([tmp_path / "more-hooks" / "pre-push"], [tmp_path]) or "")
    chain = [tmp_path / "chain" / f"{i}.cfg" for i in range(MAX_INCLUDE_DEPTH + 3)]
    chain[0].parent.mkdir()
    for here, after in itertools.pairwise(chain):
        here.write_text(f"[include]\n\tpath = {after.name}\n")
    (tmp_path / "b.cfg").write_text("[include]\n\tpath = chain/0.cfg\n")
    configs = git_config_files([tmp_path], tmp_path / "x")
    assert chain[MAX_INCLUDE_DEPTH - 3] in configs and chain[-1] not in configs


def test_the_files_a_command_runs(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "ctx.sh").write_text("echo")
    (tmp_path / "server.js").write_text("")
    outside = tmp_path.parent / "elsewhere.sh"
    command = f"FOO=1 ./scripts/ctx.sh --flag $HOME > out.log; node server.js {outside} python3"
    found = command_files(command, str(tmp_path), [tmp_path])
    assert found == [tmp_path / "scripts" / "ctx.sh", tmp_path / "server.js"]
    assert command_files(["sh", "-c", "bash scripts/ctx.sh x"], str(tmp_path), [tmp_path]) == [
        tmp_path / "scripts" / "ctx.sh"
    ]
    assert command_files("./new/not-yet.sh", str(tmp_path), [tmp_path]) == [tmp_path / "new" / "not-yet.sh"]


def test_the_user_settings_file_and_home_gemini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDECAR_SETTINGS", str(tmp_path / "mine.json"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert "your own sidecar settings" in (why_protected([tmp_path / "mine.json"], []) or "")
    assert why_protected([tmp_path / ".gemini" / "settings.json"], []) is not None


def _edit(ask_reason: str | None) -> ToolPlan:
    return ToolPlan("write_file", {}, "edit", "Edit x", allow_key="write_file", ask_reason=ask_reason)


def test_a_plan_with_a_reason_asks_in_every_mode_but_yolo_and_allow_always_covers_nothing() -> None:
    plan = _edit("this file can make commands run: test")
    assert needs_confirmation(plan, "autoEdit", set())
    assert needs_confirmation(plan, "default", {"write_file"})
    assert not needs_confirmation(plan, "yolo", set())
    assert allow_always_key(plan) is None
    assert allow_always_key(_edit(None)) == "write_file"


def test_the_registry_marks_protected_and_hard_linked_edits(tmp_path: Path) -> None:
    tools = ToolRegistry([str(tmp_path)], save_output=lambda t, n: tmp_path / "o", output_threshold=lambda: 100)
    (tmp_path / "a.txt").write_text("a\n")
    os.link(tmp_path / "a.txt", tmp_path / "b.txt")
    linked = tools.plan("write_file", {"path": "b.txt", "content": "b\n"}, trusted=True)
    assert linked.ask_reason is not None and "2 hard links" in linked.ask_reason
    assert linked.description.endswith(f"Asks every time: {linked.ask_reason}.")
    (tmp_path / "link").symlink_to(tmp_path / ".git", target_is_directory=True)
    (tmp_path / ".git").mkdir()
    through_link = tools.plan("write_file", {"path": "link/config", "content": "x"}, trusted=True)
    assert through_link.ask_reason is not None and "git" in through_link.ask_reason
    plain = tools.plan("write_file", {"path": "c.txt", "content": "c\n"}, trusted=True)
    assert plain.ask_reason is None


def test_read_regular_refuses_without_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ToolError, match="named pipe"):
        read_regular(tmp_path / "fifo", "fifo", 100)
    with pytest.raises(ToolError, match="is a device"):
        read_regular(Path("/dev/zero"), "zero", 100)
    big = tmp_path / "big"
    with open(big, "wb") as handle:
        handle.truncate(10**12)  # sparse: reading it would take hours
    with pytest.raises(ToolError, match="too large"):
        read_regular(big, "big", 100)
    assert read_regular(tmp_path / "missing", "missing", 100) is None
    with pytest.raises(ToolError, match="not a regular file"):
        write_regular(tmp_path / "fifo", b"x", "fifo")  # no reader: refused, not blocked


async def test_off_loop_keeps_the_loop_free_and_has_a_deadline() -> None:
    release = threading.Event()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while not release.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    task = asyncio.ensure_future(ticker())
    with pytest.raises(ToolError, match=r"did not finish within 0\.3 s"):
        await off_loop(lambda: release.wait(30), seconds=0.3, what="Waiting")
    release.set()
    await task
    assert ticks > 5, "the loop went on while the job blocked"
    assert await off_loop(lambda: time.monotonic() > 0, seconds=5, what="quick") is True


def test_the_reason_for_git_config_names_the_commands_its_settings_run(tmp_path: Path) -> None:
    why = why_protected([tmp_path / ".git" / "config"], [tmp_path])
    assert why is not None
    assert "config" in why and "core.fsmonitor" in why and "core.sshCommand" in why
    assert not why.removeprefix("this file can make commands run: ").startswith("git runs its hooks"), why
