"""Counted nouns in words, never "file(s)"."""

from __future__ import annotations

from sidecar.core.words import counted, plural


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "file") == "1 file"
    assert counted(0, "file") == "0 files"
    assert counted(2, "tool call") == "2 tool calls"
    assert counted(3, "match", "matches") == "3 matches"
    assert counted(1, "match", "matches") == "1 match"
    assert plural(1, "was", "were") == "was" and plural(2, "was", "were") == "were"
