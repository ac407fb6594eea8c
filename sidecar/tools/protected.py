"""Protected paths: files an edit of which can make commands run (or instruct every later session); they always ask."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["context_file_names", "git_hook_folders", "set_context_file_names", "user_settings_file", "why_protected"]

#: The agent's instruction files; the `contextFileNames` setting adds its names (set_context_file_names).
DEFAULT_CONTEXT_FILE_NAMES = ("GEMINI.md", "AGENTS.md")
_configured_names: tuple[str, ...] = ()

_RUNS = "this file can make commands run: "

#: A folder anywhere in the workspace whose every file is protected (compared case-insensitively).
_FOLDERS = {
    ".git": "git runs its hooks and the commands its config names (core.fsmonitor, core.hooksPath, aliases, filters)",
    ".sidecar": "the workspace's sidecar settings can define hooks that run commands",
    ".gemini": "Gemini CLI settings can define hooks and MCP servers that run commands",
    ".husky": "husky installs these scripts as git hooks, which run on commit, checkout and push",
}
#: A file name anywhere in the workspace.
_NAMES = {
    ".nvim.lua": "Neovim runs it as code when it opens the folder ('exrc')",
    ".nvimrc": "Neovim runs it as code when it opens the folder ('exrc')",
    ".exrc": "Vim and Neovim run it as code when they open the folder ('exrc')",
    ".envrc": "direnv runs it as a shell script when a shell enters the folder",
}
#: A file inside a `.vscode` folder.
_VSCODE = {
    "settings.json": "VS Code settings can name programs that run (terminal profiles, tool paths)",
    "tasks.json": "VS Code tasks run shell commands",
    "launch.json": "VS Code launch configurations run programs",
}
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_GITDIR = re.compile(r"^gitdir:\s*(.+?)\s*$", re.MULTILINE)


def context_file_names() -> tuple[str, ...]:
    """The file names the agent reads as instructions: the configured ones (setting `contextFileNames`, their last
    path component) and always GEMINI.md and AGENTS.md, which other agents read even when this one does not."""
    names = [*(os.path.basename(os.path.normpath(n)) for n in _configured_names), *DEFAULT_CONTEXT_FILE_NAMES]
    return tuple(dict.fromkeys(n for n in names if n and n not in (".", os.sep)))


def set_context_file_names(names: Iterable[str]) -> None:
    """The configured context file names (sidecar.memory calls this whenever it loads with the settings)."""
    global _configured_names
    _configured_names = tuple(n for n in names if n.strip())


def user_settings_file() -> Path:
    """The user's own settings file: $SIDECAR_SETTINGS, else $XDG_CONFIG_HOME/sidecar/settings.json."""
    chosen = os.environ.get("SIDECAR_SETTINGS")
    if chosen:
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "sidecar" / "settings.json"


def _small_text(path: Path) -> str:
    """A small regular file's text, or "" (never blocks on a FIFO, never reads more than 256 KB)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, 256 * 1024).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def _looks_like_git_dir(folder: Path) -> bool:
    """A git directory wherever it sits (`git init --separate-git-dir`, a submodule's or worktree's git dir)."""
    return (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir()


def _repositories(roots: Sequence[Path], path: Path) -> list[Path]:
    """The working trees that may hold `path`: the workspace folders and the folders above `path` with a `.git`."""
    found = list(roots)
    for folder in path.parents:
        if not any(_inside(str(folder), str(root)) for root in roots):
            break
        if folder not in found and os.path.lexists(folder / ".git"):
            found.append(folder)
    return found


def git_hook_folders(roots: Sequence[Path], path: Path) -> list[Path]:
    """Folders git runs code from that need not sit under a `.git` folder, for an edit of `path`: the git dir a
    `.git` file names (worktree, submodule), a git dir anywhere above `path`, and the folder `core.hooksPath`
    names in those repositories' config."""
    found = [folder for folder in path.parents if _looks_like_git_dir(folder)]
    for root in _repositories(roots, path):
        git = root / ".git"
        configs = [git / "config"]
        if git.is_file():
            match = _GITDIR.search(_small_text(git))
            if match:
                gitdir = Path(os.path.realpath(root / match.group(1)))
                found.append(gitdir)
                configs = [gitdir / "config"]
                common = _small_text(gitdir / "commondir").strip()
                if common:
                    found.append(Path(os.path.realpath(gitdir / common)))
                    configs.append(Path(os.path.realpath(gitdir / common)) / "config")
        for config in configs:
            for match in _HOOKS_PATH.finditer(_small_text(config)):
                value = match.group(1).strip().strip('"')
                if value:
                    found.append(Path(os.path.realpath(root / os.path.expanduser(value))))
    return found


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _why_name(parts: Sequence[str], context_names: Iterable[str]) -> str | None:
    lowered = [part.lower() for part in parts]
    for part in lowered[:-1] if lowered else []:
        if part in _FOLDERS:
            return _RUNS + _FOLDERS[part]
    if not lowered:
        return None
    name = lowered[-1]
    if name in _FOLDERS:  # the folder itself, or a `.git` file of a worktree or submodule
        return _RUNS + _FOLDERS[name]
    if name in _NAMES:
        return _RUNS + _NAMES[name]
    if len(lowered) >= 2 and lowered[-2] == ".vscode" and name in _VSCODE:
        return _RUNS + _VSCODE[name]
    if name in {n.lower() for n in context_names}:
        return (
            "this file instructs the agent: every later session reads it as instructions, so what is written here "
            "steers what the model does (and asks to run)"
        )
    return None


def why_protected(paths: Iterable[str | Path], roots: Sequence[Path]) -> str | None:
    """Why an edit of any of `paths` (the path as written and as resolved) must always ask; None if it need not.

    Names are matched case-insensitively in the part of the path below its workspace folder (the whole path
    when it is in none); the user's settings file, ~/.gemini/ and git's hook folders are matched by location.
    """
    home_gemini = os.path.realpath(Path.home() / ".gemini")
    settings = os.path.realpath(user_settings_file())
    names = context_file_names()
    for raw in paths:
        text = os.path.normpath(os.fspath(raw))
        hook_folders = [str(p) for p in git_hook_folders(roots, Path(text))]
        if text == settings:
            return _RUNS + "your own sidecar settings can define hooks that run commands"
        if _inside(text, home_gemini):
            return _RUNS + _FOLDERS[".gemini"]
        for folder in hook_folders:
            if _inside(text, folder):
                return _RUNS + "git runs the hooks in this folder (core.hooksPath or a worktree's git folder)"
        base = next((str(r) for r in roots if _inside(text, str(r))), None)
        below = text[len(base) :] if base is not None else text
        why = _why_name([p for p in below.split(os.sep) if p], names)
        if why is not None:
            return why
    return None
