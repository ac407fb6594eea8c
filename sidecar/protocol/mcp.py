"""Wire types of the MCP methods: servers (list, restart, enable), their prompts (list, get), sidecar/mcpStatus."""

from __future__ import annotations

from typing import Literal

import msgspec

McpServerStatus = Literal["starting", "ready", "failed", "disabled"]


class McpServerInfo(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """One configured MCP server: its status, the tool names the model sees, why it failed."""

    name: str
    status: McpServerStatus
    tools: list[str]
    error: str | None = None


class McpStatusParams(msgspec.Struct, rename="camel", kw_only=True):
    """Params of sidecar/mcpStatus: every server, sent whenever a status or a tool list changes."""

    servers: list[McpServerInfo]


class RestartMcpServerParams(msgspec.Struct, rename="camel", kw_only=True):
    name: str


class RestartMcpServerResult(msgspec.Struct, rename="camel", kw_only=True):
    """`restarted` is false when no server has that name."""

    restarted: bool


class SetMcpServerEnabledParams(msgspec.Struct, rename="camel", kw_only=True):
    """Disable (stop, tools taken from the model) or enable (start) one server, for the life of the sidecar."""

    name: str
    enabled: bool


class SetMcpServerEnabledResult(msgspec.Struct, rename="camel", kw_only=True):
    """`applied` is false when no server has that name."""

    applied: bool


class McpPromptArgument(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    name: str
    required: bool = False
    description: str | None = None


class McpPromptInfo(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """A ready server's prompt: `name` is the command name (whitespace → `-`), `prompt` the server's own name."""

    name: str
    server: str
    prompt: str
    description: str
    arguments: list[McpPromptArgument] = msgspec.field(default_factory=list)


class GetMcpPromptParams(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """The prompt by command name, with `arguments` by name, or `text`: an argument line as the ACP slash command
    takes it (`--name="value"` or positional in the declared order)."""

    name: str
    arguments: dict[str, str] | None = None
    text: str | None = None


class GetMcpPromptResult(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """`text`: the prompt's first message, for the editor to send as the user's turn; or `error` in words (no such
    prompt, a missing required argument, the server failed)."""

    text: str | None = None
    error: str | None = None
