"""Writing benchmark session files with the sidecar's own recorder: plain conversations, and a long compacted one."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from bench import generator
from sidecar.core.history import Content, text_content
from sidecar.core.tokens import content_quarters
from sidecar.recording.store import SessionStore, SessionWriter

MODEL = "gemini-2.5-flash"
_to_content = msgspec.json.Decoder(Content)
_encode = msgspec.json.encode


def as_content(item: dict[str, Any]) -> Content:
    return _to_content.decode(_encode(item))


def store(home: Path, root: Path) -> SessionStore:
    return SessionStore(str(root), home=home)


def record(writer: SessionWriter, messages: Iterable[generator.Message]) -> list[str]:
    """Append messages as the server records a turn (usage after each model reply, sync per turn)."""
    ids = []
    for number, (kind, item) in enumerate(messages):
        ids.append(writer.message(as_content(item), kind=kind, turn_id=f"turn-{number}"))
        if kind == "model":
            writer.usage(1000 + number, "api", ids[-1], {"promptTokenCount": 1000 + number})
            writer.sync()
    writer.sync()
    return ids


def conversation_session(home: Path, root: Path, session_id: str, contents: list[dict[str, Any]]) -> Path:
    """A session whose history is exactly `contents` (no compaction); returns the file."""
    sessions = store(home, root)
    writer = sessions.create(session_id, model=MODEL)
    record(writer, ((generator.kind_of(c), c) for c in contents))
    writer.close()
    return sessions.path(session_id)


def snapshot_text(number: int) -> str:
    start = number * 997 % generator.CORPUS_CHARS
    body = generator.corpus()[start : start + 6000]
    return f"<state_snapshot>\n<overall_goal>{body}</overall_goal>\n</state_snapshot>"


def compacted_session(
    home: Path, root: Path, session_id: str, megabytes: float, compact_at_tokens: int = 600_000
) -> Path:
    """A session file of at least `megabytes` MB: generated turns, with a COMPRESSED compaction (keeping the
    newest ~30%) whenever the live history passes `compact_at_tokens`, as auto compaction would."""
    sessions = store(home, root)
    writer = sessions.create(session_id, model=MODEL)
    src_turns = generator.session_messages(10**9, seed=5, max_output=generator.MAX_OUTPUT)
    live: list[tuple[str, int, bool]] = []  # (id, quarters, is a split candidate)
    compactions = 0
    while writer.size < megabytes * 1_000_000:
        kind, item = next(src_turns)
        mid = writer.message(as_content(item), kind=kind)
        live.append((mid, content_quarters(item), kind == "user"))
        if kind == "model":
            writer.usage(sum(q for _, q, _ in live) // 4, "api", mid)
            writer.sync()
            if sum(q for _, q, _ in live) // 4 > compact_at_tokens:
                compactions += 1
                live = _compact(writer, live, compactions)
    writer.close()
    return sessions.path(session_id)


def _compact(writer: SessionWriter, live: list[tuple[str, int, bool]], number: int) -> list[tuple[str, int, bool]]:
    total = sum(q for _, q, _ in live)
    running, split = 0, len(live)
    for i, (_, quarters, candidate) in enumerate(live):
        if candidate and running >= 0.7 * total and not live[i][0].startswith("c"):
            split = i
            break
        running += quarters
    snapshot = snapshot_text(number)
    cid = f"c{number}"
    kept = live[split:]
    writer.compaction(
        trigger="auto",
        status="COMPRESSED",
        original_tokens=total // 4,
        new_tokens=sum(q for _, q, _ in kept) // 4 + 2000,
        snapshot=snapshot,
        summary=text_content("user", snapshot),
        ack=text_content("model", "Got it. Thanks for the additional context!"),
        env=text_content("user", "<session_context>bench</session_context>"),
        kept_from=kept[0][0] if kept else None,
        compaction_id=cid,
    )
    head = [(f"{cid}.env", 40, False), (f"{cid}.summary", 6000, False), (f"{cid}.ack", 40, False)]
    return head + kept
