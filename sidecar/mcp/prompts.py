"""MCP prompts as slash commands (Gemini CLI's McpPromptLoader) and for the editors: names, arguments, expansion."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from sidecar.core.words import plural
from sidecar.mcp.connection import CallFailed, RemotePrompt
from sidecar.mcp.manager import McpManager
from sidecar.protocol.mcp import GetMcpPromptParams, GetMcpPromptResult, McpPromptArgument, McpPromptInfo

INVALID_RESPONSE = "Received an empty or invalid prompt response from the server."
_NAMED = re.compile(r"--([A-Za-z0-9_-]+)=(.*)", re.DOTALL)


@dataclass(frozen=True)
class PromptCommand:
    """A slash command that asks a server for a prompt and sends its text as the user's message."""

    command: str
    server: str
    prompt: RemotePrompt

    @property
    def description(self) -> str:
        """What the slash command does (the prompt's description)."""
        return self.prompt.description or f"Invoke prompt {self.prompt.name}"

    @property
    def hint(self) -> str | None:
        """The arguments the command takes, as a hint for the client."""
        names = [f'--{name}="…"' for name, _ in self.prompt.arguments]
        return " ".join(names) or None


def prompt_commands(manager: McpManager, taken: set[str]) -> dict[str, PromptCommand]:
    """Ready servers' prompts by command name (whitespace → `-`); a name already taken keeps its first owner."""
    found: dict[str, PromptCommand] = {}
    for server in manager.servers():
        connection = manager.connection(server.name)
        if connection is None or server.status != "ready":
            continue
        for prompt in connection.prompts:
            command = re.sub(r"\s+", "-", prompt.name.strip())
            if command and command not in taken and command not in found:
                found[command] = PromptCommand(command, server.name, prompt)
    return found


def parse_arguments(prompt: RemotePrompt, text: str) -> dict[str, str]:
    """`--name="value"` pairs, then the rest positionally in declared order; missing required ones are an error."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    values: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        named = _NAMED.fullmatch(word)
        if named is not None:
            values[named.group(1)] = named.group(2)
        else:
            positional.append(word)
    free = [name for name, _ in prompt.arguments if name not in values]
    for name, value in zip(free, positional, strict=False):
        values[name] = value
    if len(positional) > len(free) and free:
        values[free[-1]] = " ".join([values[free[-1]], *positional[len(free) :]])
    return checked(prompt, values)


def checked(prompt: RemotePrompt, values: dict[str, str]) -> dict[str, str]:
    """`values` without empty ones (the server's default applies) when every required argument has one;
    CallFailed otherwise."""
    given = {name: value for name, value in values.items() if value != ""}
    missing = [f"--{name}" for name, required in prompt.arguments if required and name not in given]
    if missing:
        raise CallFailed(f"Missing required {plural(len(missing), 'argument')}: {', '.join(missing)}")
    return given


async def expand(manager: McpManager, command: PromptCommand, text: str) -> str:
    """The text the prompt's first message holds, to be sent as the user's message; CallFailed in words."""
    return await expand_with(manager, command, parse_arguments(command.prompt, text))


async def expand_with(manager: McpManager, command: PromptCommand, values: dict[str, str]) -> str:
    """As `expand`, with the arguments by name (the editors' pick asks for each)."""
    connection = manager.connection(command.server)
    if connection is None:
        raise CallFailed(f"MCP server {command.server!r} is not running.")
    result = await connection.get_prompt(command.prompt.name, checked(command.prompt, values))
    messages = getattr(result, "messages", None) or []
    content = getattr(messages[0], "content", None) if messages else None
    body = getattr(content, "text", None) if getattr(content, "type", None) == "text" else None
    if not body:
        raise CallFailed(INVALID_RESPONSE)
    return str(body)


def prompt_infos(manager: McpManager) -> list[McpPromptInfo]:
    """sidecar/listMcpPrompts: every ready server's prompts by command name, with their arguments."""
    infos = []
    for command in prompt_commands(manager, set()).values():
        prompt = command.prompt
        notes = prompt.argument_descriptions
        arguments = [
            McpPromptArgument(name=name, required=required, description=(notes[i] if i < len(notes) else "") or None)
            for i, (name, required) in enumerate(prompt.arguments)
        ]
        infos.append(
            McpPromptInfo(
                name=command.command,
                server=command.server,
                prompt=prompt.name,
                description=command.description,
                arguments=arguments,
            )
        )
    return infos


async def get_prompt(manager: McpManager, params: GetMcpPromptParams) -> GetMcpPromptResult:
    """sidecar/getMcpPrompt: the expanded text, or the problem in words."""
    command = prompt_commands(manager, set()).get(params.name)
    if command is None:
        names = ", ".join(sorted(prompt_commands(manager, set()))) or "none"
        return GetMcpPromptResult(error=f"No ready MCP server offers a prompt named {params.name!r} (prompts: {names})")
    try:
        if params.arguments is not None:
            text = await expand_with(manager, command, params.arguments)
        else:
            text = await expand(manager, command, params.text or "")
    except CallFailed as exc:
        return GetMcpPromptResult(error=str(exc))
    return GetMcpPromptResult(text=text)
