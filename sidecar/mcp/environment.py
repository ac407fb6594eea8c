"""A stdio server's process: the sidecar's environment without secrets, `$VAR` expansion, the shell tool's guard."""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Mapping

from sidecar.mcp.config import ServerConfig
from sidecar.tools import shell

log = logging.getLogger(__name__)

#: Names that look like credentials (Gemini CLI redacts these too); a server that needs one names it in `env`.
_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|AUTH)", re.IGNORECASE)
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def is_secret(name: str) -> bool:
    """Whether an environment variable holds (or looks like it holds) a secret: the sidecar's API keys, tokens,
    GOOGLE_APPLICATION_CREDENTIALS, passwords."""
    return name in shell._SECRETS or _SECRET_NAME.search(name) is not None


def expand(value: str, source: Mapping[str, str]) -> str:
    """`$VAR` and `${VAR}` replaced by the variable's value from `source` (empty when unset)."""
    return _VARIABLE.sub(lambda m: source.get(m.group(1) or m.group(2), ""), value)


def secret_references(server: ServerConfig) -> list[str]:
    """The secret variables a workspace server's `env` names (`$GEMINI_API_KEY`...): they expand to nothing."""
    if not server.workspace:
        return []
    names = [m.group(1) or m.group(2) for _, value in server.env for m in _VARIABLE.finditer(value)]
    return sorted({name for name in names if is_secret(name)})


def child_environment(server: ServerConfig, source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a stdio server starts with: the sidecar's, without the API keys (as the shell tool) and
    anything that looks like a secret, then the server's own `env` with `$VAR` expanded — from the full environment
    for the user's own server, from the one without secrets for a workspace's (a repository never gets a key)."""
    full = dict(os.environ if source is None else source)
    env = {k: v for k, v in full.items() if not is_secret(k)}
    expansion = dict(env) if server.workspace else full
    for name in secret_references(server):
        log.warning("MCP server %r (from the workspace): $%s expands to nothing (a secret)", server.name, name)
    env["SIDECAR_MCP"] = "1"  # a server can tell who started it (Gemini CLI sets GEMINI_CLI)
    env.update({key: expand(value, expansion) for key, value in server.env})
    return env


def guarded_command(server: ServerConfig) -> tuple[str, list[str]]:
    """(executable, args) running the server under sidecar/tools/shell_guard.py: it leads the server's process
    group and takes the group down when the sidecar dies, even by SIGKILL."""
    assert server.command is not None
    guard = [shell._GUARD, str(os.getpid()), server.command, *server.args]
    return sys.executable, ["-I", "-S", *guard]
