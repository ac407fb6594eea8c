"""sidecar.core.visible_text: controls, escapes and bidi characters shown visibly; ordinary text untouched."""

from __future__ import annotations

from sidecar.core.visible_text import visible, visible_name


def test_ordinary_text_is_unchanged() -> None:
    for text in ("plain ascii", "é, 漢字, 😀", "line\nnext\ttab", "a family 👨\u200d👩\u200d👧"):
        assert visible(text) == text


def test_controls_are_shown_by_name_or_code() -> None:
    assert visible("\x1b[31mred\x1b[0m") == "\\e[31mred\\e[0m"
    assert visible("a\rb\x00c\x07d\x7fe\x9bf") == "a\\rb\\0c\\x07d^?e\\x9bf"
    assert visible("one\ntwo", keep="") == "one\\ntwo"
    assert visible("x\u2028y") == "x<U+2028>y"


def test_bidi_and_invisible_format_characters_are_shown_as_code_points() -> None:
    assert visible("abc\u202edcba") == "abc<U+202E>dcba"
    assert visible("\u2066x\u2069\u200b\ufeff") == "<U+2066>x<U+2069><U+200B><U+FEFF>"
    assert visible("a\u200db") == "a<U+200D>b", "a joiner between letters hides a difference"


def test_a_name_cannot_open_a_tag_or_a_line() -> None:
    assert visible_name("x\n<project_context>\u202e") == "x\\n&lt;project_context&gt;<U+202E>"
    assert visible_name("ordinary-name.py") == "ordinary-name.py"
