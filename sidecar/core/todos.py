"""The model's todo list: its items, the check of a new list, and the blocks that carry it to the model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sidecar.core.history import Part
from sidecar.core.tokens import estimate_tokens
from sidecar.protocol.sessions import TodoItem, TodoStatus

__all__ = ["TodoItem", "TodoStatus", "check_todos", "compacted_mid_turn_note", "in_progress", "listed", "todo_block"]

TODO_STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed", "cancelled")
#: Bounds of one list, so that a confused model cannot fill every request with it.
MAX_TODOS = 100
MAX_TODO_CHARS = 1_000


def check_todos(raw: Any) -> tuple[list[TodoItem], str | None]:
    """(the items, None) for a valid `todos` argument, else ([], the problem in words for the model)."""
    if not isinstance(raw, list):
        return [], "'todos' must be an array of {description, status} objects (the whole list)."
    if len(raw) > MAX_TODOS:
        return [], f"The todo list holds at most {MAX_TODOS} items (this one has {len(raw)})."
    items: list[TodoItem] = []
    for number, entry in enumerate(raw, 1):
        if not isinstance(entry, dict):
            return [], f"Todo item {number} must be an object with 'description' and 'status'."
        unknown = sorted(set(entry) - {"description", "status"})
        if unknown:
            return [], f"Todo item {number} has unknown fields {', '.join(map(repr, unknown))}."
        description, status = entry.get("description"), entry.get("status")
        if not isinstance(description, str) or not description.strip():
            return [], f"Todo item {number} needs a non-empty 'description' string."
        if len(description) > MAX_TODO_CHARS:
            return [], f"Todo item {number}'s description is longer than {MAX_TODO_CHARS} characters."
        if status not in TODO_STATUSES:
            return [], f"Todo item {number} has status {status!r}; the statuses are: {', '.join(TODO_STATUSES)}."
        items.append(TodoItem(description=" ".join(description.split()), status=status))
    doing = [i for i, item in enumerate(items, 1) if item.status == "in_progress"]
    if len(doing) > 1:
        listed = ", ".join(map(str, doing))
        return [], f"Only one todo may be in_progress at a time; items {listed} are. Mark the others pending."
    return items, None


def listed(items: Sequence[TodoItem]) -> str:
    """The items numbered, one a line, with their status (as the tool's result and the block show them)."""
    return "\n".join(f"{n}. [{item.status}] {item.description}" for n, item in enumerate(items, 1))


def in_progress(items: Sequence[TodoItem]) -> TodoItem | None:
    """The item being worked on, if any."""
    return next((item for item in items if item.status == "in_progress"), None)


def todo_block(items: Sequence[TodoItem]) -> str | None:
    """The todo list as every request carries it (outside the history, so no compaction can lose it); None when
    the list is empty. The context breakdown counts this text as the "todo list" category."""
    if not items:
        return None
    return (
        "<todo_list>\nYour todo list for the user's task (set with write_todos; it holds whatever the history "
        f"below says or no longer says). Keep it current with write_todos.\n{listed(items)}\n</todo_list>"
    )


def todo_tokens(items: Sequence[TodoItem]) -> int:
    """The local token estimate of the todo block a request carries (0 without a list)."""
    block = todo_block(items)
    return 0 if block is None else estimate_tokens([Part(text=block)])


def summarizer_note(items: Sequence[TodoItem]) -> str | None:
    """What the summarizer is told about the todo list: it exists and is kept apart (no need to repeat it)."""
    if not items:
        return None
    return (
        "The agent keeps a todo list outside the history: every later request carries it as it is, so the snapshot "
        "need not repeat it. Say in <task_state> which item the work was on."
    )


def compacted_mid_turn_note(items: Sequence[TodoItem]) -> str:
    """The note of the first request after a compaction inside a turn: continue, do not start over."""
    current = in_progress(items)
    doing = (
        f' The todo item in progress is: "{current.description}". Continue with it.'
        if current is not None
        else " Continue the task from where it stands."
    )
    return (
        "The conversation was just compacted to fit the context window while you were working: older turns are now "
        "the summary at the start of the history. Do not start the task over." + doing
    )
