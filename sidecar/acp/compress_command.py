"""`/compress [--upto N] [--preview | --apply] [focus]` and `/rate good|lost [note]`: steering compaction from ACP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import NamedTuple, Protocol

from sidecar.acp.bridge import AcpNotifier
from sidecar.app import Services
from sidecar.core.words import counted
from sidecar.protocol import errors
from sidecar.protocol.compaction import CompactionRating, PreviewCompactionResult
from sidecar.protocol.sessions import TranscriptMessage


class CommandSession(Protocol):
    """What these commands act on (sidecar.acp.session.AcpSession, as sidecar.acp.commands.CommandSession)."""

    services: Services
    notifier: AcpNotifier

    async def compress(
        self, focus: str | None, run: Callable[[], Awaitable[object]] | None = None, *, preview: bool = False
    ) -> None:
        """A manual compaction shown as the client's compaction updates (`run`: the one to run instead)."""


COMPRESS_USAGE = (
    "Usage: `/compress [focus]`, `/compress --upto N [focus]` (summarise everything before your Nth-last message; "
    "it and all after it stay verbatim), `/compress --preview [--upto N] [focus]` (show the summary, change nothing), "
    "`/compress --apply` (apply the last preview as shown: editing it needs an editor, ACP has none)."
)
RATE_USAGE = "Usage: `/rate good` or `/rate lost [what the summary lost]` (rates the latest compaction)."


class CompressCommand(NamedTuple):
    """`/compress` parsed: how many of the user's messages back the cut goes (None: the usual split), preview or
    apply, and the focus text."""

    upto: int | None
    preview: bool
    apply: bool
    focus: str | None


def parse_compress(argument: str) -> CompressCommand:
    """The flags anywhere in the argument, the rest is the focus; ValueError naming the problem."""
    words = argument.split()
    upto: int | None = None
    preview = apply = False
    rest: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--preview":
            preview = True
        elif word == "--apply":
            apply = True
        elif word == "--upto":
            number = words[index + 1] if index + 1 < len(words) else ""
            if not number.isdigit() or int(number) < 1:
                raise ValueError(f"--upto takes a number of your messages (1 or more), not {number or 'nothing'}.")
            upto, index = int(number), index + 1
        elif word.startswith("--"):
            raise ValueError(f"Unknown option {word}.")
        else:
            rest.append(word)
        index += 1
    if apply and (preview or upto is not None or rest):
        raise ValueError("--apply applies the last preview as it was shown and takes nothing else.")
    return CompressCommand(upto, preview, apply, " ".join(rest) or None)


def user_message_back(session: CommandSession, number: int) -> str:
    """The id of the user's `number`th-last message the model still sees (as `/rewind N` counts)."""
    entries = session.services.sessions.transcript(None).entries
    mine = [e.id for e in entries if isinstance(e, TranscriptMessage) and e.kind == "user" and not e.rewound]
    if len(mine) < number:
        raise errors.SidecarError(
            errors.INVALID_PARAMS,
            f"Cannot summarise up to your message {number} back: this session has {counted(len(mine), 'message')} "
            "of yours.",
        )
    return mine[-number]


async def compress(session: CommandSession, argument: str) -> None:
    """Run `/compress` with its options (the compaction itself is shown as any `/compress`)."""
    try:
        parsed = parse_compress(argument)
    except ValueError as exc:
        raise errors.SidecarError(errors.INVALID_PARAMS, f"{exc} {COMPRESS_USAGE}") from None
    control = session.services.compaction
    if parsed.apply:
        preview_id = control.latest_preview_id
        if preview_id is None:
            raise errors.SidecarError(errors.SESSION_ERROR, "There is no preview to apply: run `/compress --preview`.")
        await session.compress(None, lambda: control.apply(preview_id, None))
        return
    upto = user_message_back(session, parsed.upto) if parsed.upto is not None else None
    if not parsed.preview:
        await session.compress(parsed.focus, lambda: control.compress(parsed.focus, upto))
        return
    shown: list[PreviewCompactionResult] = []

    async def preview() -> None:
        shown.append(await control.preview(parsed.focus, upto))

    await session.compress(parsed.focus, preview, preview=True)
    session.notifier.say(render_preview(shown[0]))


def render_preview(result: PreviewCompactionResult) -> str:
    """A proposed summary as Markdown: the sizes, the snapshot as a code block, and how to apply it."""
    if result.preview_id is None or result.snapshot is None:
        return f"Nothing to preview: {result.message}"
    return (
        f"**Proposed summary** by `{result.model}` of {counted(result.summarized_count, 'history item')} "
        f"({result.kept_count} kept verbatim): {result.original_token_count:,} → {result.new_token_count:,} tokens.\n\n"
        f"```xml\n{result.snapshot}\n```\n\n"
        "`/compress --apply` applies it as shown (ACP cannot edit it: use an editor's preview for that); anything "
        "else you say first makes it stale."
    )


async def rate(session: CommandSession, argument: str) -> None:
    """`/rate good|lost [note]`: the user's rating of the latest compaction."""
    word, _, note = argument.strip().partition(" ")
    if word not in ("good", "lost"):
        raise errors.SidecarError(errors.INVALID_PARAMS, RATE_USAGE)
    rating: CompactionRating = "good" if word == "good" else "lost"
    rated = session.services.compaction.rate(None, rating, note.strip() or None)
    session.notifier.say(rated.message)
