"""`/compress` options and `/rate` parsed, and a replayed compaction marker naming an edited, rated summary."""

from __future__ import annotations

import pytest

from sidecar.acp.compress_command import CompressCommand, parse_compress
from sidecar.acp.replay import compaction_marker
from sidecar.protocol.sessions import TranscriptCompaction


@pytest.mark.parametrize(
    ("argument", "parsed"),
    [
        ("", CompressCommand(None, False, False, None)),
        ("keep the names", CompressCommand(None, False, False, "keep the names")),
        ("--upto 2 keep the names", CompressCommand(2, False, False, "keep the names")),
        ("keep --preview the names --upto 3", CompressCommand(3, True, False, "keep the names")),
        ("--apply", CompressCommand(None, False, True, None)),
    ],
)
def test_compress_options(argument: str, parsed: CompressCommand) -> None:
    assert parse_compress(argument) == parsed


@pytest.mark.parametrize(
    ("argument", "words"),
    [
        ("--upto", "--upto takes a number"),
        ("--upto 0", "--upto takes a number"),
        ("--upto two", "--upto takes a number"),
        ("--apply --preview", "--apply applies the last preview"),
        ("--apply keep it", "--apply applies the last preview"),
        ("--edit", "Unknown option --edit"),
    ],
)
def test_bad_compress_options_are_named(argument: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_compress(argument)


def test_a_replayed_marker_says_the_summary_was_edited_and_rated() -> None:
    entry = TranscriptCompaction("c1", "t", "manual", "COMPRESSED", 900, 300, False, "<state_snapshot>x")
    assert "edited" not in (compaction_marker(entry) or "")
    entry.edited, entry.rating = True, "lost"
    assert "(manual, 900 → 300 tokens, your edited summary, rated lost something)" in (compaction_marker(entry) or "")
