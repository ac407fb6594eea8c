"""Slash commands offered through available_commands_update, as a table: compress, rate, undo-compaction, transcript,
new, rewind, pins, memory, context and plan. Adding one is a handler and a row of COMMANDS."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol

import msgspec
from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, UnstructuredCommandInput

from sidecar.acp import compress_command
from sidecar.acp.bridge import AcpNotifier
from sidecar.app import Services
from sidecar.core.words import counted
from sidecar.protocol import errors
from sidecar.protocol.ide import OpenFile
from sidecar.protocol.sessions import RewindResult

TRANSCRIPT_TEXT_MAX = 4_000


class CommandSession(Protocol):
    """What a slash command acts on (sidecar.acp.session.AcpSession)."""

    services: Services
    notifier: AcpNotifier
    #: The files the user attached to prompts (a new conversation forgets them).
    attached: dict[str, OpenFile]

    async def compress(
        self, focus: str | None, run: Callable[[], Awaitable[object]] | None = None, *, preview: bool = False
    ) -> None:
        """`/compress [focus]` (`run`: the compaction to run instead; `preview`: nothing is applied)."""

    async def rewind(self, argument: str) -> None:
        """`/rewind [--files] [--force] [N]`."""

    async def memory(self, argument: str) -> None:
        """`/memory show|refresh|add [--global|--project] <text>`."""


@dataclass(frozen=True)
class SlashCommand:
    """One row of the table: the name typed after "/", what the client shows, and what it does."""

    name: str
    description: str
    #: The hint for its argument (None: it takes none).
    hint: str | None
    run: Callable[[CommandSession, str], Awaitable[None]]


async def _compress(session: CommandSession, argument: str) -> None:
    await compress_command.compress(session, argument)


async def _rate(session: CommandSession, argument: str) -> None:
    await compress_command.rate(session, argument)


async def _undo_compaction(session: CommandSession, argument: str) -> None:
    undone = await session.services.sessions.undo_compaction()
    session.notifier.say(undone.message)


async def _transcript(session: CommandSession, argument: str) -> None:
    transcript = msgspec.to_builtins(session.services.sessions.transcript(None))
    path = session.services.recorder.path
    session.notifier.say(render_transcript(transcript, str(path) if path and path.exists() else None))


async def _new(session: CommandSession, argument: str) -> None:
    before = session.services.live.conversation.session_id
    await session.services.sessions.new()
    session.attached.clear()
    session.notifier.say(
        f"Started a new conversation. The previous one (session {before}) stays recorded; load it "
        "from the session list."
    )


async def _rewind(session: CommandSession, argument: str) -> None:
    await session.rewind(argument)


async def _pin(session: CommandSession, argument: str) -> None:
    if not argument:
        raise errors.SidecarError(errors.INVALID_PARAMS, "/pin needs the fact to pin, e.g. `/pin the API is v2 only`.")
    with session.notifier.usage_after_reply():  # the usage update follows the reply that explains it
        pinned = session.services.actions.pin(argument)
        note = f" ({pinned.warning})" if pinned.warning else ""
        session.notifier.say(f"Pinned `{pinned.pin_id}`: every request carries it, every compaction keeps it.{note}")


async def _pins(session: CommandSession, argument: str) -> None:
    listed = session.services.actions.list_pins()
    session.notifier.say(render_pins([(p.pin_id, p.text) for p in listed.pins]))


async def _unpin(session: CommandSession, argument: str) -> None:
    with session.notifier.usage_after_reply():
        removed = session.services.actions.unpin(argument)
        session.notifier.say(f"Removed the pinned fact `{removed.pin_id}`.")


async def _memory(session: CommandSession, argument: str) -> None:
    await session.memory(argument)


async def _context(session: CommandSession, argument: str) -> None:
    from sidecar.acp.window import render_context

    session.notifier.say(render_context(session.services.window.breakdown()))


async def _plan(session: CommandSession, argument: str) -> None:
    words = argument.split()
    actions = session.services.actions
    if words == ["clear"]:
        cleared = actions.clear_todos().cleared
        session.notifier.say(
            f"Cleared the todo list ({counted(cleared, 'item')})." if cleared else "The todo list is already empty."
        )
    elif not words or words == ["show"]:
        session.notifier.say(render_todos([(t.status, t.description) for t in actions.todos().items]))
    else:
        session.notifier.say(
            f"Unknown `/plan {argument.strip()}`: `/plan` shows the todo list, `/plan clear` clears it."
        )


COMMANDS: list[SlashCommand] = [
    SlashCommand(
        "compress",
        "Compress the conversation now: the oldest ~70% becomes a summary, the newest ~30% stays verbatim. "
        "Anything you type after it tells the summary what to keep. `--upto N`: summarise everything before your "
        "Nth-last message (it and all after it stay verbatim); `--preview`: show the summary and change nothing; "
        "`--apply`: apply the last preview as shown (ACP cannot edit it).",
        "optional --upto N, --preview or --apply, and a focus, e.g. keep the file names and the failing test",
        _compress,
    ),
    SlashCommand(
        "rate",
        "Rate the latest compaction's summary: `/rate good`, or `/rate lost <what it lost>` (recorded with it).",
        "good | lost [what the summary lost]",
        _rate,
    ),
    SlashCommand(
        "undo-compaction",
        "Restore the history from right before the latest compaction (nothing said since is lost).",
        None,
        _undo_compaction,
    ),
    SlashCommand(
        "transcript",
        "Show this session's full recorded transcript, including what compaction summarised.",
        None,
        _transcript,
    ),
    SlashCommand(
        "new", "Start a new conversation in this chat (the current one stays recorded and can be loaded).", None, _new
    ),
    SlashCommand(
        "rewind",
        "Take back your last message and everything after it: the model no longer sees them (the transcript keeps "
        "them). `/rewind 3` goes back three of your messages; `/rewind --files` also puts back the files the agent "
        "changed since (files changed since the agent's edit are left as they are; `--force` overwrites them too).",
        "optional: how many of your messages to take back (default 1), --files, --force",
        _rewind,
    ),
    SlashCommand(
        "pin", "Pin a fact: every request carries it verbatim and every compaction keeps it.", "the fact to pin", _pin
    ),
    SlashCommand("pins", "List this session's pinned facts.", None, _pins),
    SlashCommand("unpin", "Remove a pinned fact.", "the pin id, as /pins shows it", _unpin),
    SlashCommand(
        "memory",
        "The context files the agent follows (GEMINI.md, AGENTS.md): `/memory show`, `/memory refresh` (read them "
        "again), `/memory add [--global|--project] <text>` (remember a fact; default --global: ~/.gemini/GEMINI.md).",
        "show | refresh | add [--global|--project] <text>",
        _memory,
    ),
    SlashCommand(
        "context",
        "What fills the context window: the system prompt, tools (per MCP server), each memory file, messages, tool "
        "outputs… in tokens, and the room left before the next compaction.",
        None,
        _context,
    ),
    SlashCommand(
        "plan",
        "The agent's todo list (it keeps it with write_todos; every request carries it): `/plan` shows it, "
        "`/plan clear` clears it.",
        "show | clear",
        _plan,
    ),
]
#: The table by name.
BY_NAME: dict[str, SlashCommand] = {command.name: command for command in COMMANDS}


def render_rewound_files(result: RewindResult) -> str:
    """The files a `/rewind --files` put back, removed, left (conflicts) and could not restore, as Markdown lines."""
    lines = [f"\n- restored `{p}`" for p in result.restored]
    lines += [f"\n- removed `{p}` (the agent created it)" for p in result.removed]
    lines += [f"\n- left as it is: `{c.path}`, {c.reason}" for c in result.conflicts]
    lines += [f"\n- not restored: `{s.path}`, {s.reason}" for s in result.skipped]
    return "\n" + "".join(lines) if lines else ""


class Command(NamedTuple):
    """A slash command the user typed, and the text after its name."""

    name: str
    argument: str


def available_commands(extra: list[tuple[str, str, str | None]] | None = None) -> AvailableCommandsUpdate:
    """The available_commands_update listing the built-in slash commands, then `extra` (MCP prompts: name,
    description, hint)."""
    commands = [
        AvailableCommand(
            name=name,
            description=description,
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
        )
        for name, description, hint in [*((c.name, c.description, c.hint) for c in COMMANDS), *(extra or [])]
    ]
    return AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)


def parse(text: str) -> Command | None:
    """`/compress keep the names` -> Command("compress", "keep the names"); other text (and unknown
    commands, which go to the model as they are) -> None."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    if head not in BY_NAME:
        return None
    return Command(head, rest.strip())


def render_transcript(result: dict[str, Any], path: str | None) -> str:
    """The transcript as Markdown: every message (compacted ones included) and every compaction."""
    entries = result.get("entries", [])
    lines = [f"**Transcript of session {result.get('sessionId')}** ({counted(len(entries), 'entry', 'entries')})"]
    if path:
        lines.append(f"Recorded in `{path}`.")
    for entry in entries:
        if entry.get("type") == "compaction":
            undone = " (undone)" if entry.get("undone") else ""
            edited = ", your edited summary" if entry.get("edited") else ""
            rating = entry.get("rating")
            rated = f", rated {'good' if rating == 'good' else 'lost something'}" if rating else ""
            rated += f": {entry['ratingNote']}" if rating and entry.get("ratingNote") else ""
            lines.append(
                f"\n— compaction ({entry.get('trigger')}) {entry.get('status')}: "
                f"{entry.get('originalTokenCount'):,} → {entry.get('newTokenCount'):,} tokens{undone}{edited}{rated} —"
            )
            continue
        text = str(entry.get("text", ""))
        if len(text) > TRANSCRIPT_TEXT_MAX:
            text = text[:TRANSCRIPT_TEXT_MAX] + f"… ({len(text) - TRANSCRIPT_TEXT_MAX:,} more characters)"
        who = "You" if entry.get("role") == "user" else "Gemini"
        kind = entry.get("kind", "")
        label = who if kind in ("user", "model") else f"{who} [{kind}]"
        lines.append(f"\n**{label}:** {text}")
    return "\n".join(lines) + "\n"


class MemoryCommand(NamedTuple):
    """`/memory` parsed: the action (show, refresh, add), the scope and the text of an add."""

    action: str
    scope: Literal["global", "project"]
    text: str


MEMORY_USAGE = "Usage: `/memory show`, `/memory refresh` or `/memory add [--global|--project] <text to remember>`."


def parse_memory(argument: str) -> MemoryCommand:
    """`show` (also no argument), `refresh`, `add [--global|--project] <text>`; ValueError naming the problem."""
    action, _, rest = argument.strip().partition(" ")
    action = action or "show"
    if action in ("show", "refresh", "reload"):
        if rest.strip():
            raise ValueError(f"/memory {action} takes no argument. {MEMORY_USAGE}")
        return MemoryCommand("refresh" if action == "reload" else action, "global", "")
    if action != "add":
        raise ValueError(f"Unknown /memory action {action!r}. {MEMORY_USAGE}")
    scope: Literal["global", "project"] = "global"
    flag, _, text = rest.strip().partition(" ")
    if flag in ("--global", "--project"):
        scope = "project" if flag == "--project" else "global"
    else:
        text = rest
    if not text.strip():
        raise ValueError(f"/memory add needs the text to remember. {MEMORY_USAGE}")
    return MemoryCommand("add", scope, text.strip())


def render_memory(info: dict[str, Any], heading: str = "") -> str:
    """The memory as Markdown: each file (scope, tokens), the untrusted notice, then their text."""
    files = info.get("files", [])
    lines = [heading] if heading else []
    if files:
        lines.append(f"**Memory: {counted(len(files), 'file')} ({info.get('tokens', 0):,} tokens)**")
        lines += [f"- `{f['path']}` ({f['scope']}, {f['tokens']:,} tokens)" for f in files]
    else:
        lines.append("Memory is empty: no context file (GEMINI.md, AGENTS.md) is loaded.")
    if info.get("skippedProjectFiles"):
        lines.append(
            f"⚠ {counted(info['skippedProjectFiles'], 'project file')} not loaded: {info.get('skippedReason')}."
        )
    if info.get("text"):
        lines += ["", info["text"]]
    return "\n".join(lines)


def render_todos(items: list[tuple[str, str]]) -> str:
    """The todo list as Markdown lines (status, description), or a sentence when it is empty."""
    if not items:
        return "The agent has no todo list in this session."
    marks = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
    lines = [f"**Todo list** ({counted(len(items), 'item')}):"]
    lines += [
        f"- `{marks.get(status, '[?]')}` {description} ({status.replace('_', ' ')})" for status, description in items
    ]
    return "\n".join(lines)


def render_pins(pins: list[tuple[str, str]]) -> str:
    """The pinned facts as Markdown: id and text, one a line."""
    if not pins:
        return "No pinned facts in this session. `/pin <fact>` pins one."
    lines = [f"**Pinned facts** ({len(pins)}):"]
    lines += [f"- `{pin_id}`: {text}" for pin_id, text in pins]
    return "\n".join(lines)
