"""Wire types of steering a compaction: summarise up to a message, preview and edit a summary, rate one."""

from __future__ import annotations

from typing import Literal

import msgspec

from sidecar.protocol.types import Status

#: How the user rated a compaction: the summary kept what mattered, or it lost something.
CompactionRating = Literal["good", "lost"]


class _Wire(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """camelCase on the wire; optional fields left out when unset."""


class PreviewCompactionParams(_Wire):
    """Params of sidecar/previewCompaction: focus instructions, and the user message the summary stops before
    (default: the usual split, the oldest ~70%)."""

    instructions: str | None = None
    up_to_message_id: str | None = None


class PreviewCompactionResult(_Wire, omit_defaults=False):
    """A proposed summary, not applied: the history is unchanged until sidecar/applyCompaction.

    `previewId` is None when there was nothing to preview (`status` says why, `message` in words); the token counts
    are prompt sizes before and with this summary, counted the way the status bar counts."""

    preview_id: str | None
    status: Status
    snapshot: str | None
    original_token_count: int
    new_token_count: int
    #: How many history items the summary replaces, and how many stay verbatim after it.
    summarized_count: int
    kept_count: int
    message: str
    #: The model that wrote the summary (the compressionModel setting, else the chat model's compression alias).
    model: str = ""


class ApplyCompactionParams(_Wire):
    """Params of sidecar/applyCompaction: the preview to apply and, when the user edited it, the edited text (a
    `<state_snapshot>` block, or plain text, which is wrapped in one)."""

    preview_id: str
    snapshot: str | None = None


class ApplyCompactionResult(_Wire, omit_defaults=False):
    status: Status
    original_token_count: int
    new_token_count: int
    message: str
    #: The recorded compaction (rate it with sidecar/rateCompaction); None when nothing was recorded.
    compaction_id: str | None
    #: The user's edited text replaced the proposed summary.
    edited: bool


class RateCompactionParams(_Wire):
    """Params of sidecar/rateCompaction: the compaction (default: the latest one of the live session), the rating
    and an optional note (what was lost)."""

    rating: CompactionRating
    compaction_id: str | None = None
    note: str | None = None


class RateCompactionResult(_Wire, omit_defaults=False):
    compaction_id: str
    rating: CompactionRating
    message: str
