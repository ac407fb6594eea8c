"""Counted nouns in words: "1 file", "2 files" (never "file(s)")."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """The word for `count` of it: `word` for one, else `many` (default: `word` + "s")."""
    return word if count == 1 else many if many is not None else f"{word}s"


def counted(count: int, word: str, many: str | None = None) -> str:
    """The count and its word: counted(1, "file") == "1 file", counted(3, "match", "matches") == "3 matches"."""
    return f"{count} {plural(count, word, many)}"
