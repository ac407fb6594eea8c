"""The `mcpServers` setting in Gemini CLI's shape, checked entry by entry: a bad server never costs the others."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Transport = Literal["stdio", "http", "sse"]

#: Gemini CLI's default for connect, list and each call: 10 minutes.
DEFAULT_TIMEOUT_MS = 600_000
#: Server names may hold letters, digits, `-` and `_` (they become part of tool names).
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_KNOWN = frozenset(
    {
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "type",
        "httpUrl",
        "headers",
        "timeout",
        "trust",
        "includeTools",
        "excludeTools",
        "description",
    }
)
#: Reference fields the sidecar does not support: reported, the rest of the entry still used.
_UNSUPPORTED = frozenset({"tcp", "oauth", "authProviderType", "targetAudience", "targetServiceAccount"})


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server as the user configured it (validated). `trusted_source`: from the user's own settings."""

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    trust: bool = False
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    description: str | None = None
    #: Where it came from, for messages: "settings", "the ACP client", a file path.
    origin: str = field(default="settings", compare=False)
    #: Defined by the workspace (a repository's settings), not the user: it starts only once the user approved this
    #: exact definition, and its `$VAR`s never expand the sidecar's secrets.
    workspace: bool = False

    @property
    def timeout_s(self) -> float:
        """The call timeout in seconds."""
        return self.timeout_ms / 1000

    def where(self) -> str:
        """The command or URL, for messages and the status list."""
        return self.command or "" if self.transport == "stdio" else self.url or ""

    def command_line(self) -> str:
        """The whole command line (shell-quoted) or the URL: what the user approves."""
        if self.transport != "stdio":
            return self.url or ""
        return shlex.join([self.command or "", *self.args])

    def definition(self) -> dict[str, Any]:
        """Every field that decides what runs and how (the approval is keyed on it), without where it came from."""
        return {
            "name": self.name,
            "transport": self.transport,
            "command": self.command,
            "args": list(self.args),
            "env": [list(pair) for pair in self.env],
            "cwd": self.cwd,
            "url": self.url,
            "headers": [list(pair) for pair in self.headers],
            "timeout": self.timeout_ms,
            "includeTools": None if self.include_tools is None else list(self.include_tools),
            "excludeTools": list(self.exclude_tools),
        }


class _Bad(Exception):
    """A field of one server entry is unusable; the message names it."""


def _strings(name: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Bad(f"MCP server {name!r}: `{key}` must be a list of strings")
    return tuple(value)


def _mapping(name: str, key: str, value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise _Bad(f"MCP server {name!r}: `{key}` must be an object of strings")
    return tuple(value.items())


def _text(name: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Bad(f"MCP server {name!r}: `{key}` must be a non-empty string")
    return value


def _transport(name: str, entry: Mapping[str, Any], problems: list[str]) -> tuple[Transport, dict[str, Any]]:
    """Gemini CLI's choice: httpUrl (wins, with a warning) → url + type → url alone (streamable HTTP) → command."""
    if "httpUrl" in entry:
        if "url" in entry:
            problems.append(f"MCP server {name!r}: both `httpUrl` and `url` are set; `httpUrl` is used.")
        return "http", {"url": _text(name, "httpUrl", entry["httpUrl"])}
    if "url" in entry:
        kind = entry.get("type", "http")
        if kind not in ("http", "sse"):
            raise _Bad(f'MCP server {name!r}: `type` must be "http" or "sse" with `url`, got {kind!r}')
        return kind, {"url": _text(name, "url", entry["url"])}
    if "command" in entry:
        values: dict[str, Any] = {"command": _text(name, "command", entry["command"])}
        if "args" in entry:
            values["args"] = _strings(name, "args", entry["args"])
        if "env" in entry:
            values["env"] = _mapping(name, "env", entry["env"])
        if "cwd" in entry:
            values["cwd"] = _text(name, "cwd", entry["cwd"])
        return "stdio", values
    raise _Bad(
        f"MCP server {name!r}: missing `httpUrl` (for Streamable HTTP), `url` (for SSE or HTTP) and `command` "
        "(for stdio)"
    )


def parse_server(name: Any, entry: Any, origin: str, problems: list[str]) -> ServerConfig | None:
    """One entry, or None with the reason added to `problems` (in words, naming the server and the field)."""
    if not isinstance(name, str) or SERVER_NAME.fullmatch(name) is None:
        problems.append(f"MCP server name {name!r} ({origin}) may only hold letters, digits, '-' and '_'; skipped.")
        return None
    if not isinstance(entry, Mapping):
        problems.append(f"MCP server {name!r} ({origin}) must be an object; skipped.")
        return None
    for key in sorted(set(entry) & _UNSUPPORTED):
        problems.append(f"MCP server {name!r}: `{key}` is not supported by the sidecar; ignored.")
    for key in sorted(set(entry) - _KNOWN - _UNSUPPORTED):
        problems.append(f"MCP server {name!r}: unknown field `{key}`; ignored.")
    try:
        transport, values = _transport(name, entry, problems)
        if "headers" in entry:
            if transport == "stdio":
                problems.append(f"MCP server {name!r}: `headers` only apply to `url`/`httpUrl` servers; ignored.")
            else:
                values["headers"] = _mapping(name, "headers", entry["headers"])
        timeout = entry.get("timeout", DEFAULT_TIMEOUT_MS)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 1 <= timeout <= 86_400_000:
            raise _Bad(f"MCP server {name!r}: `timeout` must be a number of milliseconds from 1 to 86400000")
        trust = entry.get("trust", False)
        if not isinstance(trust, bool):
            raise _Bad(f"MCP server {name!r}: `trust` must be true or false")
        include = _strings(name, "includeTools", entry["includeTools"]) if "includeTools" in entry else None
        exclude = _strings(name, "excludeTools", entry["excludeTools"]) if "excludeTools" in entry else ()
        description = entry.get("description")
        if description is not None and not isinstance(description, str):
            raise _Bad(f"MCP server {name!r}: `description` must be a string")
    except _Bad as exc:
        problems.append(f"{exc} ({origin}); this server is not started.")
        return None
    return ServerConfig(
        name=name,
        transport=transport,
        timeout_ms=int(timeout),
        trust=trust,
        include_tools=include,
        exclude_tools=exclude,
        description=description,
        origin=origin,
        **values,
    )


def parse_servers(raw: Any, origin: str = "settings") -> tuple[dict[str, ServerConfig], list[str]]:
    """The `mcpServers` object → servers by name, and the problems (each names the server and the field)."""
    if raw is None:
        return {}, []
    if not isinstance(raw, Mapping):
        return {}, [f"Setting mcpServers ({origin}) must be an object of servers by name; no server is started."]
    servers: dict[str, ServerConfig] = {}
    problems: list[str] = []
    for name, entry in raw.items():
        server = parse_server(name, entry, origin, problems)
        if server is not None:
            servers[name] = server
    return servers, problems
