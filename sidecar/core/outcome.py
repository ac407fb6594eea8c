"""What one compaction attempt did — its status, trigger and token counts — shared by compaction, recording and chat."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from sidecar.core.history import Content
from sidecar.core.prompts import compressed_notice, status_message
from sidecar.protocol.types import CompactionTrigger, UsageSource

#: Who started a compaction: the turn loop (over the threshold) or the user. The wire's type, spelled once.
Trigger = CompactionTrigger


class Status(StrEnum):
    """A compaction attempt's status: the reference's CompressionStatus names, on the wire and in the recording."""

    COMPRESSED = "COMPRESSED"
    COMPRESSION_FAILED_INFLATED_TOKEN_COUNT = "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT"
    #: Smaller, but an automatic attempt saved less than MIN_AUTO_SAVINGS (not "inflated": the history did shrink).
    #: Latches like INFLATED. Old session files record these attempts as INFLATED; both read as "not kept".
    COMPRESSION_FAILED_INSUFFICIENT_REDUCTION = "COMPRESSION_FAILED_INSUFFICIENT_REDUCTION"
    COMPRESSION_FAILED_TOKEN_COUNT_ERROR = "COMPRESSION_FAILED_TOKEN_COUNT_ERROR"
    COMPRESSION_FAILED_EMPTY_SUMMARY = "COMPRESSION_FAILED_EMPTY_SUMMARY"
    NOOP = "NOOP"
    CONTENT_TRUNCATED = "CONTENT_TRUNCATED"


#: Statuses after which the model-facing history was replaced (anything else left it as it was).
HISTORY_CHANGING = frozenset({Status.COMPRESSED, Status.CONTENT_TRUNCATED})


@dataclass
class Outcome:
    """What one compaction attempt did. `new_history` is set only when the history was replaced."""

    status: Status
    original: int
    new: int
    trigger: Trigger
    new_history: list[Content] | None = None
    snapshot: str | None = None
    #: Index (in the old history) of the first kept item; None when nothing is kept or nothing changed.
    kept_from: int | None = None
    #: Old-history index -> the content that replaces it in the new history (truncated tool outputs).
    replacements: dict[int, Content] = field(default_factory=dict)
    token_source: UsageSource = "estimate"
    #: The snapshot is the user's edited text, not the summarizer's (a previewed compaction).
    edited: bool = False

    def message(self, token_limit: int) -> str:
        """The words the user sees for this outcome (the same for both triggers: tokens and percentages)."""
        if self.status is Status.COMPRESSED:
            return compressed_notice(self.original, self.new, token_limit)
        return status_message(self.status, self.original, self.new)
