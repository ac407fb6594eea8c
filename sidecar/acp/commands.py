"""Slash commands offered through available_commands_update: compress, undo-compaction, transcript, new, rewind,
pins and memory."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, UnstructuredCommandInput

TRANSCRIPT_TEXT_MAX = 4_000

COMMANDS: list[tuple[str, str, str | None]] = [
    (
        "compress",
        "Compress the conversation now: the oldest ~70% becomes a summary, the newest ~30% stays verbatim. "
        "Anything you type after it tells the summary what to keep.",
        "optional focus, e.g. keep the file names and the failing test",
    ),
    ("undo-compaction", "Restore the history from right before the latest compaction (nothing said since is lost).",
     None),
    ("transcript", "Show this session's full recorded transcript, including what compaction summarised.", None),
    ("new", "Start a new conversation in this chat (the current one stays recorded and can be loaded).", None),
    (
        "rewind",
        "Take back your last message and everything after it: the model no longer sees them (the transcript keeps "
        "them; files are not touched). `/rewind 3` goes back three of your messages.",
        "optional: how many of your messages to take back (default 1)",
    ),
    ("pin", "Pin a fact: every request carries it verbatim and every compaction keeps it.", "the fact to pin"),
    ("pins", "List this session's pinned facts.", None),
    ("unpin", "Remove a pinned fact.", "the pin id, as /pins shows it"),
    (
        "memory",
        "The context files the agent follows (GEMINI.md, AGENTS.md): `/memory show`, `/memory refresh` (read them "
        "again), `/memory add [--global|--project] <text>` (remember a fact; default --global: ~/.gemini/GEMINI.md).",
        "show | refresh | add [--global|--project] <text>",
    ),
]


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
        for name, description, hint in [*COMMANDS, *(extra or [])]
    ]
    return AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)


def parse(text: str) -> Command | None:
    """`/compress keep the names` -> Command("compress", "keep the names"); other text (and unknown
    commands, which go to the model as they are) -> None."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    if head not in {name for name, _, _ in COMMANDS}:
        return None
    return Command(head, rest.strip())


def render_transcript(result: dict[str, Any], path: str | None) -> str:
    """The transcript as Markdown: every message (compacted ones included) and every compaction."""
    entries = result.get("entries", [])
    lines = [f"**Transcript of session {result.get('sessionId')}** ({len(entries)} entries)"]
    if path:
        lines.append(f"Recorded in `{path}`.")
    for entry in entries:
        if entry.get("type") == "compaction":
            undone = " (undone)" if entry.get("undone") else ""
            lines.append(
                f"\n— compaction ({entry.get('trigger')}) {entry.get('status')}: "
                f"{entry.get('originalTokenCount'):,} → {entry.get('newTokenCount'):,} tokens{undone} —"
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
        lines.append(f"**Memory: {len(files)} file(s) ({info.get('tokens', 0):,} tokens)**")
        lines += [f"- `{f['path']}` ({f['scope']}, {f['tokens']:,} tokens)" for f in files]
    else:
        lines.append("Memory is empty: no context file (GEMINI.md, AGENTS.md) is loaded.")
    if info.get("skippedProjectFiles"):
        lines.append(f"⚠ {info['skippedProjectFiles']} project file(s) not loaded: {info.get('skippedReason')}.")
    if info.get("text"):
        lines += ["", info["text"]]
    return "\n".join(lines)


def render_pins(pins: list[tuple[str, str]]) -> str:
    """The pinned facts as Markdown: id and text, one a line."""
    if not pins:
        return "No pinned facts in this session. `/pin <fact>` pins one."
    lines = [f"**Pinned facts** ({len(pins)}):"]
    lines += [f"- `{pin_id}`: {text}" for pin_id, text in pins]
    return "\n".join(lines)
