"""A stdio server's process: the sidecar's environment without secrets, `$VAR` expansion, the shell tool's guard."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping

from sidecar.mcp.config import ServerConfig
from sidecar.tools import shell

#: Names that look like credentials (Gemini CLI redacts these too); a server that needs one names it in `env`.
_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|AUTH)", re.IGNORECASE)
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def expand(value: str, source: Mapping[str, str]) -> str:
    """`$VAR` and `${VAR}` replaced by the variable's value from `source` (empty when unset)."""
    return _VARIABLE.sub(lambda m: source.get(m.group(1) or m.group(2), ""), value)


def child_environment(server: ServerConfig, source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a stdio server starts with: the sidecar's, without the API keys (as the shell tool) and
    anything that looks like a secret, then the server's own `env` with `$VAR` expanded from the full one."""
    full = dict(os.environ if source is None else source)
    env = {k: v for k, v in full.items() if k not in shell._SECRETS and not _SECRET_NAME.search(k)}
    env["SIDECAR_MCP"] = "1"  # a server can tell who started it (Gemini CLI sets GEMINI_CLI)
    env.update({key: expand(value, full) for key, value in server.env})
    return env


def guarded_command(server: ServerConfig) -> tuple[str, list[str]]:
    """(executable, args) running the server under sidecar/tools/shell_guard.py: it leads the server's process
    group and takes the group down when the sidecar dies, even by SIGKILL."""
    assert server.command is not None
    guard = [shell._GUARD, str(os.getpid()), server.command, *server.args]
    return sys.executable, ["-I", "-S", *guard]
