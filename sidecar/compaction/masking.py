"""Masking old tool outputs before a request: the decision (cached per history item), saved outputs, previews."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

from sidecar.config.settings import ToolOutputMasking
from sidecar.core.content_json import decode_content
from sidecar.core.conversation import Conversation
from sidecar.core.history import Content
from sidecar.core.masking import (
    MaskingRules,
    ToolOutput,
    choose_outputs,
    masked_part,
    masked_snippet,
    newest_first,
    preview_of,
    saved_text,
    tool_outputs_of,
)
from sidecar.core.tokens import part_quarters
from sidecar.core.words import counted

log = logging.getLogger(__name__)

SaveOutput = Callable[[str, str], "str | os.PathLike[str]"]


@dataclass(frozen=True)
class Masking:
    """One masking: the history items it replaces (by index, with their recorded ids) and what it saved."""

    replacements: dict[int, Content]
    ids: dict[int, str]
    count: int
    tokens_saved: int

    def message(self) -> str:
        """The user's notice, once per masking."""
        saved = self.tokens_saved
        amount = f"{saved / 1000:.0f}k" if saved >= 1000 else str(saved)
        return f"Masked {counted(self.count, 'old tool output')} ({amount} tokens); the model can read them back."


def _mcp_prefix(server: str) -> str:
    from sidecar.mcp.naming import qualified_name  # a lower layer; imported here to keep this module's import cheap

    return qualified_name(server, "")


class ToolOutputMasker:
    """Decides before each request whether old tool outputs are masked, and masks them.

    Each history item's function responses are measured once (cached by the item's JSON bytes, which never change),
    so a request costs dictionary lookups and a walk over small tuples, not a re-measure of the history. The full
    outputs are saved with `save` (the session's tool-output folder, which read_file may read)."""

    def __init__(self, save: SaveOutput) -> None:
        self._save = save
        self._outputs: dict[bytes, tuple[ToolOutput, ...]] = {}

    def decide(self, conv: Conversation, settings: ToolOutputMasking) -> list[ToolOutput]:
        """The outputs to mask before the next request (the last item is the request itself: never masked)."""
        if not settings.enabled or len(conv) < 2:
            return []
        wire = conv.wire()
        skip = 2 if settings.protect_latest_turn else 1
        items = self._items(wire, len(wire) - skip)
        rules = MaskingRules(
            protection_tokens=settings.protection_tokens,
            min_prunable_tokens=settings.min_prunable_tokens,
            protect_latest_turn=settings.protect_latest_turn,
            payback_requests=settings.payback_requests,
        )
        exempt_names = frozenset(settings.exempt_tools)
        prefixes = tuple(_mcp_prefix(s) for s in settings.exempt_mcp_servers)

        def exempt(name: str) -> bool:
            return name in exempt_names or (bool(prefixes) and name.startswith(prefixes))

        def tokens_from(index: int) -> int:
            return sum(conv.content_tokens(i) for i in range(index, len(conv)))

        return choose_outputs(newest_first(items), rules, exempt, tokens_from)

    def _items(self, wire: list[bytes], end: int) -> list[tuple[ToolOutput, ...]]:
        """Each item's unmasked outputs up to `end`, from the cache (an item is measured when first seen)."""
        cache = self._outputs
        if len(cache) > 2 * len(wire) + 64:  # items gone from the history (compaction, rewind) are forgotten
            cache = self._outputs = {}
        items: list[tuple[ToolOutput, ...]] = []
        for i in range(max(0, end)):
            data = wire[i]
            found = cache.get(data)
            if found is None:
                found = cache[data] = tool_outputs_of(0, decode_content(data)) if b'"functionResponse"' in data else ()
            items.append(tuple(ToolOutput(i, o.part, o.name, o.tokens) for o in found) if found else ())
        return items

    def mask(self, conv: Conversation, chosen: list[ToolOutput]) -> Masking | None:
        """Save each chosen output and build its masked item (the conversation is not changed here: the caller
        records the masking, then applies it). None when no output would get shorter."""
        by_item: dict[int, list[ToolOutput]] = {}
        for output in chosen:
            by_item.setdefault(output.index, []).append(output)
        replacements: dict[int, Content] = {}
        saved = count = 0
        for index, outputs in sorted(by_item.items()):
            content = decode_content(conv.wire()[index])
            parts = list(content.parts)
            for output in outputs:
                part = parts[output.part]
                fr = part.function_response
                assert fr is not None
                try:
                    path = str(self._save(saved_text(fr.response), output.name or "unknown_tool"))
                except Exception as exc:  # the output stays whole: nothing to point to
                    log.warning("could not save a tool output to mask it: %s", exc)
                    continue
                new = masked_part(part, masked_snippet(preview_of(output.name, fr.response), path))
                gain = output.tokens - part_quarters(new) // 4
                if gain > 0:
                    parts[output.part] = new
                    saved += gain
                    count += 1
            if parts != content.parts:
                replacements[index] = Content(role=content.role, parts=parts)
        if not replacements:
            return None
        return Masking(replacements, {i: conv.ids[i] for i in replacements}, count, saved)
