"""What fills the context window: a request's JSON bytes split by category, carved pieces, free space (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from sidecar.core.content_json import decode_content
from sidecar.core.history import Content
from sidecar.core.ide_context import DELTA_HEADER, FULL_HEADER
from sidecar.core.memory_text import is_session_context

__all__ = [
    "Category",
    "Measured",
    "Piece",
    "RequestView",
    "Row",
    "measure_request",
    "rows_of",
]

#: The categories, in the order they are shown. The base ones split the request itself; the carved ones (memory
#: files, pinned facts, the todo list, masked tool outputs) are pieces known to sit inside a base one.
Category = Literal[
    "systemPrompt",
    "builtinTools",
    "mcpTools",
    "memoryFile",
    "sessionContext",
    "pinnedFacts",
    "todoList",
    "compactionSummary",
    "ideContext",
    "messages",
    "toolOutputs",
    "maskedToolOutputs",
]
ORDER: tuple[Category, ...] = (
    "systemPrompt",
    "builtinTools",
    "mcpTools",
    "memoryFile",
    "sessionContext",
    "pinnedFacts",
    "todoList",
    "compactionSummary",
    "ideContext",
    "messages",
    "toolOutputs",
    "maskedToolOutputs",
)
#: Where a carved piece may sit (the base category its bytes are taken from).
Within = Literal["systemPrompt", "sessionContext", "messages", "toolOutputs", "ideContext"]

_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True)
class Piece:
    """A text known to be part of the request inside the base category `within` (a memory file in the system
    instruction, the pinned facts block, a masked tool output…): its bytes move from there to its own row."""

    category: Category
    label: str
    text: str
    within: Within
    #: What the row opens: a memory file's path, an MCP server's name.
    target: str | None = None


@dataclass(frozen=True)
class RequestView:
    """The next request as it will be sent: its contents' JSON (with their recorded ids), the system instruction,
    the tool declarations and which MCP server each MCP tool belongs to."""

    contents: Sequence[bytes]
    ids: Sequence[str]
    system_instruction: str | None
    tools: list[dict[str, Any]] | None
    #: An MCP tool's declared name → its server's name (every other declaration is a built-in tool).
    mcp_servers: dict[str, str] = field(default_factory=dict)


@dataclass
class Row:
    """One row of the breakdown: its category, what it is called, its JSON bytes and (once rounded) its tokens."""

    category: Category
    label: str
    bytes: int
    target: str | None = None
    tokens: int = 0


@dataclass
class Measured:
    """The request's bytes by base category (MCP tools per server), with the texts each holds for carving."""

    rows: list[Row] = field(default_factory=list)
    texts: dict[str, list[str]] = field(default_factory=dict)
    total_bytes: int = 0

    def add(self, category: Category, label: str, size: int, target: str | None = None) -> None:
        for row in self.rows:
            if row.category == category and row.label == label:
                row.bytes += size
                return
        self.rows.append(Row(category, label, size, target))

    def hold(self, category: str, text: str) -> None:
        self.texts.setdefault(category, []).append(text)


def _string_bytes(text: str) -> int:
    """A text's bytes inside a JSON string (escapes included, quotes not)."""
    return len(_encode(text)) - 2


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON value (a tool response's texts)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def masked_output_pieces(history: Sequence[Content], tag: str) -> list[Piece]:
    """The tool outputs the history keeps masked (each response string holding `<tag…>`: a preview and where the
    full output is), as pieces moved from the tool outputs to a row of their own."""
    return [
        Piece("maskedToolOutputs", "Masked tool outputs", text, "toolOutputs")
        for content in history
        for part in content.parts
        if part.function_response is not None
        for text in _strings(part.function_response.response)
        if f"<{tag}" in text
    ]


def _content_category(index: int, message_id: str, text: str | None) -> Category:
    if index == 0 and is_session_context(text):
        return "sessionContext"
    if message_id.endswith((".summary", ".ack")) or (text is not None and "<state_snapshot>" in text):
        return "compactionSummary"
    if text is not None and text.startswith((FULL_HEADER, DELTA_HEADER)):
        return "ideContext"
    return "messages"


def _measure_contents(view: RequestView, out: Measured) -> None:
    """Each content's bytes (and its separator) go to its category; function responses' parts to tool outputs."""
    if not view.contents:
        return
    out.add("messages", "Messages", 2 - 1)  # the list's brackets, less the missing separator of the first item
    for index, raw in enumerate(view.contents):
        content = decode_content(raw)
        first = content.parts[0].text if content.parts else None
        category = _content_category(index, view.ids[index] if index < len(view.ids) else "", first)
        outputs = 0
        for part in content.parts:
            response = part.function_response
            if response is None:
                if part.text is not None:
                    out.hold(category, part.text)
                continue
            outputs += len(_encode(part)) + 1
            for text in _strings(response.response):
                out.hold("toolOutputs", text)
        if outputs:
            out.add("toolOutputs", "Tool outputs", outputs)
        label = _LABELS[category]
        out.add(category, label, len(raw) + 1 - outputs)


def _measure_tools(view: RequestView, out: Measured) -> None:
    if not view.tools:
        return
    size = len(_encode(view.tools))
    mcp = 0
    for group in view.tools:
        for declaration in group.get("functionDeclarations") or []:
            server = view.mcp_servers.get(str(declaration.get("name")))
            if server is not None:
                one = len(_encode(declaration)) + 1
                mcp += one
                out.add("mcpTools", f"MCP: {server}", one, server)
    out.add("builtinTools", "Built-in tools", size - mcp)


def measure_request(view: RequestView, pieces: Sequence[Piece] = ()) -> Measured:
    """The request's JSON bytes by category, as the API receives it (contents, systemInstruction, tools), with each
    piece found in its base category moved to a row of its own. The rows' bytes add up to the request's."""
    out = Measured()
    if view.system_instruction:
        system = {"parts": [{"text": view.system_instruction}], "role": "user"}
        out.add("systemPrompt", "System prompt", len(_encode(system)))
        out.hold("systemPrompt", view.system_instruction)
    _measure_tools(view, out)
    _measure_contents(view, out)
    out.total_bytes = sum(row.bytes for row in out.rows)
    for piece in pieces:
        _carve(out, piece)
    out.rows = [r for r in out.rows if r.bytes > 0 or r.category in ("messages",)]
    return out


def _carve(out: Measured, piece: Piece) -> None:
    """Move the piece's bytes from its base category to its own row, when the text is really there."""
    if not piece.text or not any(piece.text in text for text in out.texts.get(piece.within, [])):
        return
    base = next((r for r in out.rows if r.category == piece.within), None)
    if base is None:
        return
    size = min(_string_bytes(piece.text), base.bytes)
    base.bytes -= size
    out.add(piece.category, piece.label, size, piece.target)


def rows_of(measured: Measured) -> list[Row]:
    """The rows in display order, each with its tokens: a quarter of its bytes, rounded so that the rows add up to
    the request's tokens (the largest remainders round up)."""
    rows = sorted(measured.rows, key=lambda r: ORDER.index(r.category))
    total = math.ceil(measured.total_bytes / 4)
    for row in rows:
        row.tokens = row.bytes // 4
    short = total - sum(row.tokens for row in rows)
    for row in sorted(rows, key=lambda r: -(r.bytes % 4))[: max(short, 0)]:
        row.tokens += 1
    return rows


_LABELS: dict[Category, str] = {
    "sessionContext": "Session context",
    "compactionSummary": "Compaction summary",
    "ideContext": "IDE context",
    "messages": "Messages",
}
