"""Protected paths: files an edit of which can make commands run (or instruct every later session); they always ask."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "command_files",
    "context_file_names",
    "git_config_files",
    "git_hook_folders",
    "set_command_source",
    "set_context_file_names",
    "set_memory_files",
    "settings_commands",
    "user_settings_file",
    "why_protected",
]

#: A file a command runs larger than this is keyed by its size and modification time instead of its content.
SCRIPT_HASH_BYTES = 16 * 1024 * 1024
#: The agent's instruction files; the `contextFileNames` setting adds its names (set_context_file_names).
DEFAULT_CONTEXT_FILE_NAMES = ("GEMINI.md", "AGENTS.md")
_configured_names: tuple[str, ...] = ()
#: Every file of the loaded memory's import graph (real paths): what the model reads as instructions.
_memory_files: frozenset[str] = frozenset()
#: (what runs it, command, working directory) of every hook and MCP server configured now (set_command_source).
CommandLine = tuple[str, "str | Sequence[str]", str]
_command_source: Callable[[], Iterable[CommandLine]] = lambda: ()  # noqa: E731

_RUNS = "this file can make commands run: "
_INSTRUCTS = (
    "this file instructs the agent: every later session reads it as instructions, so what is written here "
    "steers what the model does (and asks to run)"
)

#: The repository's own git config (.git/config): its settings, not hooks, are what run commands.
_GIT_CONFIG = (
    "git reads it as the repository's config, whose settings run commands (core.fsmonitor, core.sshCommand, "
    "core.pager, core.editor, aliases, filters and diff drivers) and can point git at other hooks (core.hooksPath)"
)

#: A folder anywhere in the workspace whose every file is protected (compared case-insensitively).
_FOLDERS = {
    ".git": "git runs its hooks and the commands its config names (core.fsmonitor, core.hooksPath, aliases, filters)",
    ".sidecar": "the workspace's sidecar settings can define hooks that run commands",
    ".gemini": "Gemini CLI settings can define hooks and MCP servers that run commands",
    ".husky": "husky installs these scripts as git hooks, which run on commit, checkout and push",
    ".devcontainer": "Dev Containers run the commands its devcontainer.json names (initializeCommand on your "
    "machine, the others in the container)",
}
#: A file name anywhere in the workspace.
_NAMES = {
    ".nvim.lua": "Neovim runs it as code when it opens the folder ('exrc')",
    ".nvimrc": "Neovim runs it as code when it opens the folder ('exrc')",
    ".exrc": "Vim and Neovim run it as code when they open the folder ('exrc')",
    ".envrc": "direnv runs it as a shell script when a shell enters the folder",
    ".pre-commit-config.yaml": "pre-commit runs the hooks it names on every commit once installed (`pre-commit "
    "install`), and CI runs them too",
    ".pre-commit-config.yml": "pre-commit runs the hooks it names on every commit once installed",
    "lefthook.yml": "lefthook installs the commands it names as git hooks, which run on commit and push",
    ".lefthook.yml": "lefthook installs the commands it names as git hooks, which run on commit and push",
    "lefthook-local.yml": "lefthook installs the commands it names as git hooks, which run on commit and push",
    ".lefthook-local.yml": "lefthook installs the commands it names as git hooks, which run on commit and push",
    ".devcontainer.json": "Dev Containers run the commands it names (initializeCommand on your machine, the others "
    "in the container)",
}
#: A file name's ending anywhere in the workspace.
_SUFFIXES = {
    ".code-workspace": "VS Code workspace files hold settings, tasks and launch configurations that run programs",
}
_WORKFLOWS = (
    "GitHub Actions runs the workflows in .github/workflows on push and pull requests, with the repository's secrets"
)
#: A file inside a `.vscode` folder.
_VSCODE = {
    "settings.json": "VS Code settings can name programs that run (terminal profiles, tool paths)",
    "tasks.json": "VS Code tasks run shell commands",
    "launch.json": "VS Code launch configurations run programs",
}
_GITDIR = re.compile(r"^gitdir:\s*(.+?)\s*$", re.MULTILINE)
#: How deep `include.path` / `includeIf` are followed (git itself stops at 10).
MAX_INCLUDE_DEPTH = 10
#: How many of a command's words are looked at as file names.
COMMAND_WORDS = 64
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]\s*(.*)$')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*?)\s*$")


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


def _config_value(raw: str) -> str:
    """A git config value: quotes removed, backslash escapes taken, a comment (# or ;) outside quotes dropped."""
    out: list[str] = []
    quoted, i = False, 0
    while i < len(raw):
        char = raw[i]
        if char == "\\" and i + 1 < len(raw):
            out.append(raw[i + 1])
            i += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        i += 1
    return "".join(out).strip()


def config_entries(text: str) -> list[tuple[str, str, str]]:
    """(section, key, value) of every entry of a git config file's text; section and key lower-cased."""
    entries: list[tuple[str, str, str]] = []
    section = ""
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header:
            section, line = header.group(1).lower(), header.group(2)
        entry = _ENTRY.match(line)
        if entry:
            entries.append((section, entry.group(1).lower(), _config_value(entry.group(2))))
    return entries


def _with_includes(configs: Sequence[Path]) -> list[Path]:
    """The config files and every file their `include.path` / `includeIf.<condition>.path` names (whatever the
    condition), followed MAX_INCLUDE_DEPTH levels deep; real paths, each once."""
    found: list[Path] = []
    todo = [(config, 0) for config in configs]
    while todo:
        config, depth = todo.pop(0)
        real = Path(os.path.realpath(config))
        if real in found:
            continue
        found.append(real)
        if depth >= MAX_INCLUDE_DEPTH:
            continue
        for section, key, value in config_entries(_small_text(real)):
            if section in ("include", "includeif") and key == "path" and value:
                todo.append((Path(config).parent / os.path.expanduser(value), depth + 1))
    return found


def _git_places(roots: Sequence[Path], path: Path) -> tuple[list[Path], list[Path]]:
    """(folders, config files) git runs code from or reads as its config for an edit of `path`: the git dir a
    `.git` file names (worktree, submodule), a git dir anywhere above `path`, the folder `core.hooksPath` names,
    and every file the repositories' config includes (include.path, includeIf), followed like git does."""
    found = [folder for folder in path.parents if _looks_like_git_dir(folder)]
    all_configs: list[Path] = []
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
        configs = _with_includes(configs)
        for config in configs:
            for section, key, value in config_entries(_small_text(config)):
                if section == "core" and key == "hookspath" and value:
                    found.append(Path(os.path.realpath(root / os.path.expanduser(value))))
        all_configs += configs
    return found, all_configs


def git_hook_folders(roots: Sequence[Path], path: Path) -> list[Path]:
    """Folders git runs code from that need not sit under a `.git` folder, for an edit of `path` (_git_places)."""
    return _git_places(roots, path)[0]


def git_config_files(roots: Sequence[Path], path: Path) -> list[Path]:
    """The repositories' config files for an edit of `path`, with every file they include (_git_places)."""
    return _git_places(roots, path)[1]


# -- files that a hook or an MCP server runs ------------------------------------------------------------------


def set_command_source(source: Callable[[], Iterable[CommandLine]]) -> None:
    """Where the configured hooks and MCP servers are read from at each check (the app sets it: settings_commands
    over the live session)."""
    global _command_source
    _command_source = source


def settings_commands(settings: Any, cwd: str) -> list[CommandLine]:
    """(what runs it, command, working directory) of every hook and stdio MCP server of `settings` (hooks run in
    the project root; a server in its `cwd`, relative to the project root, else there too)."""
    found: list[CommandLine] = []
    hooks = getattr(settings, "hooks", None)
    for event in getattr(hooks, "__struct_fields__", ()):
        for spec in getattr(hooks, event, None) or []:
            command = getattr(spec, "command", None)
            if isinstance(command, str):
                found.append((f"the hook `{command}`", command, cwd))
    servers = getattr(settings, "mcp_servers", None)
    for name, config in servers.items() if isinstance(servers, Mapping) else ():
        if not isinstance(config, Mapping) or not isinstance(config.get("command"), str):
            continue
        raw_args = config.get("args")
        args = [a for a in raw_args if isinstance(a, str)] if isinstance(raw_args, list) else []
        where = config.get("cwd")
        folder = os.path.join(cwd, os.path.expanduser(where)) if isinstance(where, str) and where else cwd
        found.append((f"the MCP server '{name}'", [config["command"], *args], folder))
    return found


def _words(command: str | Sequence[str]) -> list[str]:
    if not isinstance(command, str):
        return list(command)
    try:
        return shlex.split(command, comments=True)
    except ValueError:
        return command.split()


def command_files(command: str | Sequence[str], cwd: str, roots: Sequence[Path]) -> list[Path]:
    """The files inside the workspace folders `roots` that `command` (a shell string, or a program and its
    arguments) runs or hands to its program: each word (and each word of a `sh -c` string) that resolves from
    `cwd` into a folder and is a file there, or is written as a path (has a `/`) and may be created later.
    Options, assignments and words with shell expansions are not looked at. Real paths, each once."""
    real_roots = [os.path.realpath(root) for root in roots]
    found: list[Path] = []
    words = _words(command)[:COMMAND_WORDS]
    for word in list(words):
        if any(c.isspace() for c in word):  # `sh -c "./x.sh arg"`: the string's words too
            words += _words(word)[:COMMAND_WORDS]
    for word in words:
        word = word.lstrip("<>|&;0123456789") if word[:1] in "<>|&;0123456789" else word
        if not word or word.startswith("-") or "=" in word.split("/")[0] or any(c in word for c in "*?[$`"):
            continue
        if any(c.isspace() for c in word):
            continue
        real = os.path.realpath(os.path.join(cwd, os.path.expanduser(word)))
        if not any(_inside(real, root) for root in real_roots):
            continue
        if (os.path.isfile(real) or "/" in word) and not os.path.isdir(real) and Path(real) not in found:
            found.append(Path(real))
    return found


def file_digest(path: Path) -> str:
    """The sha256 of the content of a file a command runs, for an approval's key ("absent" when it is not a readable
    regular file; size and time past SCRIPT_HASH_BYTES)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return "absent"
        if info.st_size > SCRIPT_HASH_BYTES:
            return f"size {info.st_size} mtime {info.st_mtime_ns}"
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read(SCRIPT_HASH_BYTES + 1)).hexdigest()
    except OSError:
        return "absent"


def _command_reason(text: str, roots: Sequence[Path]) -> str | None:
    for who, command, cwd in _command_source():
        if any(str(path) == text for path in command_files(command, cwd, roots)):
            return _RUNS + f"{who} runs it (a change runs your code's replacement)"
    return None


def set_memory_files(paths: Iterable[str]) -> None:
    """The real paths of every file in the loaded memory's import graph (sidecar.memory sets it at each load)."""
    global _memory_files
    _memory_files = frozenset(os.path.realpath(p) for p in paths)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _why_name(parts: Sequence[str], context_names: Iterable[str]) -> str | None:
    lowered = [part.lower() for part in parts]
    if lowered[-2:] == [".git", "config"]:
        return _RUNS + _GIT_CONFIG
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
    for suffix, why in _SUFFIXES.items():
        if name.endswith(suffix):
            return _RUNS + why
    if len(lowered) >= 3 and lowered[-3:-1] == [".github", "workflows"]:
        return _RUNS + _WORKFLOWS
    if name in {n.lower() for n in context_names}:
        return _INSTRUCTS
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
        hook_folders, configs = _git_places(roots, Path(text))
        if text == settings:
            return _RUNS + "your own sidecar settings can define hooks that run commands"
        if _inside(text, home_gemini):
            return _RUNS + _FOLDERS[".gemini"]
        for folder in hook_folders:
            if _inside(text, str(folder)):
                return _RUNS + "git runs the hooks in this folder (core.hooksPath or a worktree's git folder)"
        base = next((str(r) for r in roots if _inside(text, str(r))), None)
        below = text[len(base) :] if base is not None else text
        why = _why_name([p for p in below.split(os.sep) if p], names)
        if why is not None:
            return why
        if any(text == str(config) for config in configs):
            return _RUNS + (
                "git reads it as config (a repository's include.path or includeIf names it), and git config can "
                "run commands (core.fsmonitor, core.hooksPath, aliases, filters)"
            )
        why = _command_reason(text, roots)
        if why is not None:
            return why
        if text in _memory_files:
            return _INSTRUCTS + " (the loaded memory imports it)"
    return None
