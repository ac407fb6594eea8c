"""Where a compaction may split a history that ends inside an agent turn (a tool call awaiting its responses)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sidecar.core.compaction import ContentLike, find_split_point, is_split_candidate
from sidecar.core.history import Content, Part
from sidecar.core.jsonlen import js_json_length

__all__ = ["ends_with_pending_call", "find_split_point_in_turn", "is_round_start"]


def _has(content: ContentLike, attr: str, wire: str) -> bool:
    parts = content.parts if isinstance(content, Content) else content.get("parts") or ()
    return any(
        (getattr(part, attr, None) if isinstance(part, Part) else part.get(wire) if isinstance(part, Mapping) else None)
        for part in parts
    )


def _role(content: ContentLike) -> object:
    return content.role if isinstance(content, Content) else content.get("role")


def ends_with_pending_call(contents: Sequence[ContentLike]) -> bool:
    """The last content is a model turn with a functionCall: a tool round is in flight (its responses not yet in)."""
    return bool(contents) and _role(contents[-1]) == "model" and _has(contents[-1], "function_call", "functionCall")


def is_round_start(contents: Sequence[ContentLike], index: int) -> bool:
    """A model turn with function calls that follows the previous round's responses: a kept tail may start here
    without separating any call from its responses (the API's pairing rule)."""
    if index <= 0 or index >= len(contents):
        return False
    here, before = contents[index], contents[index - 1]
    return (
        _role(here) == "model"
        and _has(here, "function_call", "functionCall")
        and _role(before) == "user"
        and _has(before, "function_response", "functionResponse")
    )


def find_split_point_in_turn(
    contents: Sequence[ContentLike], fraction: float, sizes: Sequence[int] | None = None
) -> int:
    """The reference's split point, and, when the history ends inside an agent turn, also the start of an earlier
    tool round of that turn: the oldest `fraction` of a long turn can then be summarised while the round in flight
    (its calls, and the responses about to be added) stays verbatim. Never past the last functionCall turn."""
    reference = find_split_point(contents, fraction, sizes)
    if not ends_with_pending_call(contents):
        return reference
    if sizes is None:
        sizes = [js_json_length(c) for c in contents]
    target = sum(sizes) * fraction
    if sum(sizes[:reference]) >= target:
        return reference
    best = reference
    cumulative = 0
    for i in range(len(contents)):
        if i > reference and (is_round_start(contents, i) or is_split_candidate(contents[i])):
            best = i
            if cumulative >= target:
                break
        cumulative += sizes[i]
    return best
