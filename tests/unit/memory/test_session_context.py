"""The session context: put at the head of a history once, replaced (never doubled) on resume, counted once."""

from __future__ import annotations

from pathlib import Path

from sidecar.core.conversation import Conversation
from sidecar.core.history import text_content
from sidecar.memory.service import MemoryService
from sidecar.memory.session_context import SessionContext, Source
from sidecar.session import Session


def _context(tmp_path: Path, extra: list[str] | None = None) -> tuple[SessionContext, list[Source]]:
    folder = tmp_path / "ws"
    (folder / ".git").mkdir(parents=True)
    (folder / "GEMINI.md").write_text("PROJECT-RULE")
    session = Session(workspace_folders=[str(folder)])
    sources: list[Source] = []

    async def session_start(source: Source) -> list[str]:
        sources.append(source)
        return extra or []

    memory = MemoryService(session, home=tmp_path / "home")
    return SessionContext(session, memory, session_start, tree=lambda root: f"TREE of {root}"), sources


async def test_a_new_history_gets_one_at_its_head(tmp_path: Path) -> None:
    context, sources = _context(tmp_path, ["HOOK-CONTEXT"])
    conv = Conversation("s")
    assert context.estimated_tokens(conv) > 0, "counted before the first turn"
    text = await context.ensure(conv)
    assert text is not None and conv.first_text() == text and len(conv) == 1
    assert (
        "PROJECT-RULE" in text
        and f"TREE of {tmp_path / 'ws'}" in text
        and text.rstrip().endswith("HOOK-CONTEXT\n</session_context>")
    )
    assert conv.session_context_fresh and context.estimated_tokens(conv) == 0
    assert await context.ensure(conv) is None and len(conv) == 1, "only once"
    assert sources == ["new"]


async def test_a_resumed_history_gets_a_fresh_one_in_place_and_keeps_its_api_count(tmp_path: Path) -> None:
    context, sources = _context(tmp_path)
    old = text_content("user", "<session_context>\nold date\n</session_context>")
    conv = Conversation("s", [old, text_content("user", "hi"), text_content("model", "hello")], ["e1", "m1", "m2"])
    conv.record_api_usage(5_000)
    await context.ensure(conv)
    assert len(conv) == 3 and conv.ids == ["e1", "m1", "m2"]
    first = conv.first_text()
    assert first is not None and "old date" not in first and "PROJECT-RULE" in first
    assert conv.usage_source == "api" and conv.last_prompt_tokens > 5_000, "moved by the difference, still an API count"
    assert sources == ["resume"]


async def test_a_history_without_one_gets_it_inserted_before_the_first_message(tmp_path: Path) -> None:
    context, _ = _context(tmp_path)
    conv = Conversation("s", [text_content("user", "hi"), text_content("model", "hello")], ["m1", "m2"])
    before = conv.estimated_tokens()
    await context.ensure(conv)
    assert len(conv) == 3 and conv.ids == ["", "m1", "m2"], "not a recorded message"
    assert conv.history[1] == text_content("user", "hi")
    assert conv.estimated_tokens() > before
    frozen = conv.frozen_copy()
    assert frozen.session_context_fresh and frozen.first_text() == conv.first_text()


async def test_the_one_that_opens_a_new_history_is_recorded(tmp_path: Path) -> None:
    context, _ = _context(tmp_path)
    recorded: list[str] = []

    def record(content: object) -> str:
        recorded.append(str(content))
        return "m1"

    conv = Conversation("s")
    await context.ensure(conv, record)
    assert conv.ids == ["m1"] and len(recorded) == 1
    resumed = Conversation("s", [text_content("user", "hi")], ["m2"])
    await context.ensure(resumed, record)
    assert resumed.ids == ["", "m2"] and len(recorded) == 1, "put before a resumed history: not recorded"
