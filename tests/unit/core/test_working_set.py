"""Which files come back after a compaction, within what budget, and how they are marked."""

from __future__ import annotations

from typing import Any

from sidecar.core.history import Content, FunctionCall, Part, text_content
from sidecar.core.working_set import (
    FileBack,
    choose,
    reattached_contents,
    reattached_files,
    reattached_text,
    worked_on,
)


def called(name: str, **args: Any) -> Content:
    return Content(role="model", parts=[Part(function_call=FunctionCall(name=name, args=args))])


def test_the_files_worked_on_most_recent_first_less_those_the_kept_part_shows_whole() -> None:
    compressed = [
        called("read_file", path="a.py"),
        called("run_shell_command", command="cat b.py"),
        called("replace", path="c.py", old="x", new="y"),
        called("read_file", path="a.py", start_line=3),
        called("write_file", path="d.py", content=""),
        text_content("user", "also look at e.py"),
    ]
    kept = [called("read_file", path="d.py"), called("read_file", path="c.py", start_line=1)]
    assert worked_on(compressed, kept) == ["a.py", "c.py"]


def test_the_budget_five_files_five_thousand_tokens_each_and_a_tenth_of_the_window() -> None:
    small = [FileBack(f"f{i}.py", "x = 1\n" * 10) for i in range(7)]
    chosen = choose([FileBack("big.py", "y" * 40_000), *small, FileBack("gone.py", None, "no such file")], 1_000_000)
    assert [f.shown for f in chosen if f.text is not None] == ["f0.py", "f1.py", "f2.py", "f3.py", "f4.py"]
    reasons = {f.shown: f.reason for f in chosen if f.text is None}
    assert "over the 5,000" in reasons["big.py"] and "5 most recent" in reasons["f5.py"]
    assert reasons["gone.py"] == "no such file"
    tight = choose([FileBack("a.py", "z" * 3_000), FileBack("b.py", "z" * 3_000)], 10_000)  # 1,000 tokens in all
    assert [f.text is not None for f in tight] == [True, False]


def test_the_attached_part_lists_both_and_carries_the_text() -> None:
    text = reattached_text([FileBack("a.py", "A = 1"), FileBack("b.py", None, "too large")])
    assert text is not None and text.startswith("<reattached_files>") and text.endswith("</reattached_files>")
    assert reattached_files(text) == ["a.py"]
    assert "- not re-attached: b.py (too large)" in text and '<file path="a.py">\nA = 1\n</file>' in text
    assert reattached_text([]) is None


def test_the_attached_texts_read_back_exactly_even_empty_or_tag_like() -> None:
    files = [FileBack("a.py", "A = 1\n</file>\nnot the end\n"), FileBack("e.py", ""), FileBack("z.md", "# z")]
    text = reattached_text([*files, FileBack("b.py", None, "gone")])
    assert text is not None
    assert reattached_contents(text) == [("a.py", files[0].text), ("e.py", ""), ("z.md", "# z")]
