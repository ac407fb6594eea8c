"""The `sidecar sessions list|show|rm|restore|stats` and `sidecar import` commands (registered by sidecar.cli)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import msgspec

from sidecar.core.recording import CompactionRecord
from sidecar.core.visible_text import visible
from sidecar.core.words import counted
from sidecar.protocol.sessions import TranscriptCompaction, TranscriptFork, TranscriptMessage
from sidecar.recording.stats import add_parser as stats_parser
from sidecar.recording.store import RecordingError, SessionInfo, SessionStore, all_sessions

_SPEAKERS = {
    "user": "You",
    "model": "Gemini",
    "toolCall": "Gemini (tool call)",
    "toolResult": "Tool result",
    "ideContext": "Editor context",
    "env": "Environment",
    "info": "Info",
    "error": "Error",
}


def add_parsers(subparsers: Any) -> None:
    """Register `sessions list`, `sessions show ID` and `import PATH` on an argparse subparsers object."""
    sessions = subparsers.add_parser("sessions", help="list or show recorded sessions")
    actions = sessions.add_subparsers(dest="sessions_command", required=True, metavar="{list,show,rm,restore,stats}")
    listing = actions.add_parser("list", help="list this project's sessions, newest first")
    listing.add_argument("--all", action="store_true", help="list the sessions of every project")
    listing.add_argument("--query", metavar="TEXT", help="only sessions whose title or messages contain TEXT")
    show = actions.add_parser("show", help="print a session's full transcript")
    show.add_argument("session_id", metavar="ID", help="a session id, or a unique prefix of one")
    remove = actions.add_parser("rm", help="move a session to the trash (kept 30 days)")
    remove.add_argument("session_id", metavar="ID", help="a session id, or a unique prefix of one")
    restore = actions.add_parser("restore", help="bring a deleted session back from the trash")
    restore.add_argument("session_id", metavar="ID", help="the id of a deleted session (or a unique prefix)")
    for command in (listing, show, remove, restore):
        _common(command)
    listing.set_defaults(func=main_sessions_list)
    show.set_defaults(func=main_sessions_show)
    remove.set_defaults(func=main_sessions_rm)
    restore.set_defaults(func=main_sessions_restore)
    stats_parser(actions, _common, _bad_id)
    imported = subparsers.add_parser(
        "import", help="import a Gemini CLI, Claude Code or Codex session file (.json or .jsonl)"
    )
    imported.add_argument("path", metavar="PATH", nargs="?", help="a Gemini CLI, Claude Code or Codex session file")
    imported.add_argument("--model", help="model for the continued session (default: the one recorded)")
    imported.add_argument("--list", action="store_true", help="list the other agents' session files of the project")
    _common(imported)
    imported.set_defaults(func=main_import)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", metavar="DIR", help="project root (default: the current directory)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def _shown(out: TextIO) -> Callable[[str], object]:
    """Write text for a terminal: recorded text (the model's, a file's, a tool's output) may hold escape sequences
    (an OSC 52 one writes the clipboard) and bidi controls; they are printed visibly (`\\e`, `<U+202E>`)."""
    return lambda text: out.write(visible(text))


def _warn(warning: str) -> None:
    print(f"warning: {visible(warning)}", file=sys.stderr)


def _store(args: argparse.Namespace) -> SessionStore:
    return SessionStore(getattr(args, "project", None) or os.getcwd())


def _fail(message: str) -> int:
    print(f"sidecar: {message}", file=sys.stderr)
    return 1


_ID_OR_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def _bad_id(raw: str) -> int | None:
    """Exit code 2 with a message in words when `raw` cannot be a session id or the start of one (a path, a
    glob pattern, an empty string); None when it can."""
    if _ID_OR_PREFIX.fullmatch(raw):
        return None
    print(
        f"sidecar: {raw!r} is not a session id: ids are letters, digits, '.', '_' and '-' (a path or a pattern is "
        "not accepted). `sidecar sessions list` shows them.",
        file=sys.stderr,
    )
    return 2


def main_sessions_list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    if getattr(args, "all", False):
        root, infos = all_sessions()
        where = str(root)
    else:
        store = _store(args)
        infos, where = store.list(), store.project_root
    query = getattr(args, "query", None)
    if query:
        from sidecar.recording.search import matches

        infos = [info for info in infos if matches(info, query)]
    if args.json:
        out.write(msgspec.json.encode(infos).decode() + "\n")
        return 0
    say = _shown(out)
    if not infos:
        found = f" matching {query!r}" if query else ""
        say(f"No recorded sessions{found} for {where}.\n")
        return 0
    for info in infos:
        say(_list_line(info, show_project=getattr(args, "all", False)) + "\n")
    return 0


def _list_line(info: SessionInfo, *, show_project: bool) -> str:
    when = info.last_updated[:16].replace("T", " ")
    counts = f"{info.message_count} msg" + (f", {info.compaction_count} compacted" if info.compaction_count else "")
    line = f"{info.session_id}  {when}  {counts:<22}  {info.title or '(no title)'}"
    if info.parent_session_id:
        line += f"  (branch of {info.parent_session_id[:8]})"
    return f"{line}  [{info.project_root}]" if show_project else line


def main_sessions_show(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    if (code := _bad_id(args.session_id)) is not None:
        return code
    store = _store(args)
    try:
        session_id = store.resolve(args.session_id)
        loaded = store.load(session_id, salvage=True)
    except RecordingError as exc:
        return _fail(str(exc))
    for warning in loaded.warnings:
        _warn(warning)
    if args.json:
        body = {
            "sessionId": loaded.session_id,
            "title": loaded.title,
            "transcript": loaded.transcript,
            "metadata": loaded.metadata,
        }
        out.write(msgspec.json.encode(body).decode() + "\n")
        return 0
    meta = loaded.metadata
    say = _shown(out)
    say(f"Session {loaded.session_id}: {loaded.title or '(no title)'}\n")
    shown = loaded.message_count - loaded.context_count  # as listed: the hidden <session_context> turn left out
    say(
        f"Project {meta.project_root} · model {meta.model} · started {_when(meta.time)} · "
        f"{counted(shown, 'message')} · {counted(loaded.compaction_count, 'compaction')}\n"
    )
    if meta.imported_from:
        say(f"Imported from {meta.imported_from.get('tool')}: {meta.imported_from.get('path')}\n")
    snapshots = _snapshots(loaded.path)
    for entry in loaded.transcript:
        say("\n")
        if isinstance(entry, TranscriptFork):
            say(f"[{_when(entry.time)}] ── Branch of session {entry.parent_session_id} starts here ──\n")
        elif isinstance(entry, TranscriptMessage):
            turn = f" ({entry.turn_id})" if entry.turn_id else ""
            rewound = " [rewound: the model no longer sees this]" if entry.rewound else ""
            say(f"[{_when(entry.time)}] {_SPEAKERS.get(entry.kind, entry.kind)}{turn}{rewound}:\n")
            say(_indent(entry.text or "(empty)") + "\n")
        else:
            say(_compaction_line(entry) + "\n")
            snapshot = snapshots.get(entry.id)
            if snapshot:
                say(_indent(snapshot) + "\n")
    return 0


def _compaction_line(entry: TranscriptCompaction) -> str:
    undone = " (undone)" if entry.undone else ""
    return (
        f"[{_when(entry.time)}] ── Compaction {entry.id} ({entry.trigger}): {entry.status}, "
        f"{entry.original_token_count:,} → {entry.new_token_count:,} tokens{undone} ──"
    )


def _snapshots(path: Path) -> dict[str, str]:
    """Snapshot texts by compaction id (only compaction lines are decoded as such)."""
    decoder = msgspec.json.Decoder(CompactionRecord)
    found: dict[str, str] = {}
    with open(path, "rb") as f:
        for line in f:
            if b'"type":"compaction"' in line:
                try:
                    record = decoder.decode(line)
                except msgspec.DecodeError:
                    continue
                if record.snapshot:
                    found[record.id] = record.snapshot
    return found


def _when(iso: str) -> str:
    return iso[:19].replace("T", " ")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines() or [""])


def _import_file(path: Path, store: SessionStore, model: str | None) -> Any:
    """The session file at `path`, whichever agent wrote it, as a new session of `store`."""
    from sidecar.recording.foreign_import import detect_format, write_session

    kind = detect_format(path)
    if kind == "claude":
        from sidecar.recording.claude_import import read_claude_session

        return write_session(read_claude_session(path), store, path, model)
    if kind == "codex":
        from sidecar.recording.codex_import import read_codex_session

        found = read_codex_session(path)
        return write_session(found, store, path, model)
    from sidecar.recording.gemini_import import import_gemini_session

    return import_gemini_session(path, store, model=model)


def main_import_list(args: argparse.Namespace, out: TextIO) -> int:
    """The other agents' session files recorded for this project, newest first."""
    from datetime import UTC, datetime

    from sidecar.recording.foreign_import import candidates

    root = _store(args).project_root
    found = candidates(root, Path(os.environ.get("HOME") or Path.home()))
    if args.json:
        rows = [{"tool": c.tool, "path": str(c.path), "modified": c.modified} for c in found]
        out.write(msgspec.json.encode(rows).decode() + "\n")
        return 0
    if not found:
        out.write(f"No Gemini CLI, Claude Code or Codex sessions found for {root}.\n")
        return 0
    for c in found:
        when = datetime.fromtimestamp(c.modified, UTC).strftime("%Y-%m-%d %H:%M")
        out.write(f"{when}  {c.tool:<11}  {c.path}\n")
    out.write("Import one with: sidecar import PATH\n")
    return 0


def main_import(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    if getattr(args, "list", False):
        return main_import_list(args, out)
    if not args.path:
        return _fail("import needs a session file (PATH), or --list to find them.")
    store = _store(args)
    try:
        result = _import_file(Path(args.path), store, getattr(args, "model", None))
    except RecordingError as exc:
        return _fail(str(exc))
    for warning in result.warnings:
        _warn(warning)
    if args.json:
        body = {
            "sessionId": result.session_id,
            "path": str(result.path),
            "messageCount": result.messages,
            "historyLength": result.history_length,
            "warnings": result.warnings,
        }
        out.write(msgspec.json.encode(body).decode() + "\n")
    else:
        _shown(out)(
            f"Imported {counted(result.messages, 'message')} ({result.history_length} for the model) from {args.path}\n"
            f"as session {result.session_id} of {store.project_root}.\n"
        )
    return 0


def main_sessions_rm(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from sidecar.recording.trash import KEEP_DAYS, delete

    out = out or sys.stdout
    if (code := _bad_id(args.session_id)) is not None:
        return code
    store = _store(args)
    try:
        session_id = store.resolve(args.session_id)
        target = delete(store, session_id)
    except (RecordingError, OSError) as exc:
        return _fail(str(exc))
    if args.json:
        out.write(msgspec.json.encode({"sessionId": session_id, "trashPath": str(target)}).decode() + "\n")
    else:
        out.write(
            f"Moved session {session_id} to the trash ({target.parent}); it is kept {KEEP_DAYS} days. "
            f"`sidecar sessions restore {session_id}` brings it back.\n"
        )
    return 0


def main_sessions_restore(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from sidecar.recording.trash import restore

    out = out or sys.stdout
    if (code := _bad_id(args.session_id)) is not None:
        return code
    store = _store(args)
    try:
        target = restore(store, args.session_id)
    except (RecordingError, OSError, ValueError) as exc:
        return _fail(str(exc))
    if args.json:
        out.write(msgspec.json.encode({"sessionId": target.stem, "path": str(target)}).decode() + "\n")
    else:
        out.write(f"Restored session {target.stem} ({target}).\n")
    return 0
