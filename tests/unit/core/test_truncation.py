"""The function-response token budget (reference §1 truncateHistoryToBudget, §9 items 22-25)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from sidecar.compaction.tool_outputs import ToolOutputSaver, sanitize_filename_part, tool_output_file_name
from sidecar.core.compaction import (
    format_truncated_tool_output,
    function_response_text,
    tool_output_threshold,
    truncate_history_to_budget,
)
from sidecar.core.history import dump_contents, parse_contents


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def model(text: str) -> dict[str, Any]:
    return {"role": "model", "parts": [{"text": text}]}


def tool_turn(name: str | None, response: Any) -> dict[str, Any]:
    fr: dict[str, Any] = {"response": response}
    if name is not None:
        fr["name"] = name
    return {"role": "user", "parts": [{"functionResponse": fr}]}


def output_of(content: dict[str, Any]) -> Any:
    return content["parts"][0]["functionResponse"]["response"]


def test_older_response_over_budget_becomes_a_placeholder_and_is_saved(tmp_path: Path) -> None:
    large = "a" * 170_000  # 42,500 tokens: one fits the 50,000 budget, two do not
    history = [
        user("old msg"),
        model("old resp"),
        user("msg 1"),
        tool_turn("grep", {"content": large}),
        model("resp 2"),
        tool_turn("grep", {"content": large}),
    ]
    result = truncate_history_to_budget(history, tool_output_threshold=40_000, save=ToolOutputSaver(tmp_path))
    assert output_of(result[5]) == {"content": large}  # the newest stays whole
    placeholder = output_of(result[3])["output"]
    assert placeholder.startswith("Output too large.")
    files = os.listdir(tmp_path / "tool-outputs")
    assert files == ["grep_1.txt"]
    assert (tmp_path / "tool-outputs" / "grep_1.txt").read_text() == large
    assert f"For full output see: {tmp_path / 'tool-outputs' / 'grep_1.txt'}\n" in placeholder


@pytest.mark.parametrize("key", ["output", "content"])
def test_massive_single_line_output_shows_first_8000_and_last_32000_chars(tmp_path: Path, key: str) -> None:
    massive = "a" * 170_000
    history = [user("msg 1"), tool_turn("shell", {key: massive}), tool_turn("shell", {key: massive})]
    result = truncate_history_to_budget(history, tool_output_threshold=40_000, save=ToolOutputSaver(tmp_path))
    placeholder = output_of(result[1])["output"]
    assert "Showing first 8,000 and last 32,000 characters" in placeholder
    assert "... [130,000 characters omitted] ..." in placeholder
    assert output_of(result[2]) == {key: massive}


def test_failed_save_keeps_the_original_response_and_counts_it_whole(tmp_path: Path) -> None:
    large = "d" * 170_000
    small = "s" * 28_000  # 7,000 tokens: fits after a short placeholder, not after a kept original
    history = [tool_turn("grep", small), tool_turn("grep", {"content": large}), tool_turn("grep", {"content": large})]
    attempts: list[str] = []

    def disk_full(content: str, tool: str) -> str:
        attempts.append(content)
        raise OSError("Disk Full")

    result = truncate_history_to_budget(history, tool_output_threshold=1000, save=disk_full)
    assert [output_of(c) for c in result] == [small, {"content": large}, {"content": large}]
    assert attempts == [large, small]  # the kept original used up the budget, so the small one was tried too

    saved = truncate_history_to_budget(history, tool_output_threshold=1000, save=ToolOutputSaver(tmp_path))
    assert output_of(saved[0]) == small  # only the ~290-token placeholder counted, so the small one still fits
    assert output_of(saved[1])["output"].startswith("Output too large.")


def test_placeholder_format_matches_the_reference_exactly() -> None:
    text = "0123456789" * 10  # 100 chars
    assert format_truncated_tool_output(text, "/t/f.txt", 100) == text
    assert format_truncated_tool_output(text, "/t/f.txt", 10) == (
        "Output too large. Showing first 2 and last 8 characters. For full output see: /t/f.txt\n"
        "01\n\n... [90 characters omitted] ...\n\n23456789"
    )
    big = format_truncated_tool_output("x" * 1_234_567, "/f", 40_000)
    assert big.startswith("Output too large. Showing first 8,000 and last 32,000 characters.")
    assert "... [1,194,567 characters omitted] ..." in big


def test_placeholder_slices_utf16_units_and_may_split_a_surrogate_pair() -> None:
    text = "😀" * 10  # 20 UTF-16 units
    out = format_truncated_tool_output(text, "/f", 5)  # head 1 unit, tail 4 units
    assert out.endswith("/f\n\ud83d\n\n... [15 characters omitted] ...\n\n😀😀")
    assert "Showing first 1 and last 4 characters" in out


def test_zero_threshold_shows_no_output_text() -> None:
    # The reference's slice(-0) would repeat the whole output here; we show nothing but the file.
    out = format_truncated_tool_output("abcdef", "/f", 0)
    header = "Output too large. Showing first 0 and last 0 characters. For full output see: /f\n"
    assert out == header + "\n\n... [6 characters omitted] ...\n\n"


def test_threshold_is_four_chars_per_remaining_token_capped_and_clamped() -> None:
    assert tool_output_threshold(1_048_576, 0) == 40_000
    assert tool_output_threshold(1_000_000, 997_500) == 10_000
    assert tool_output_threshold(1_000_000, 990_000, configured=20_000) == 20_000
    assert tool_output_threshold(1_000_000, 1_200_000) == 0  # context overfull: clamped, never negative


def test_measured_text_prefers_string_output_then_content_then_pretty_json() -> None:
    assert function_response_text("raw") == "raw"
    assert function_response_text({"output": "o", "content": "c"}) == "o"
    assert function_response_text({"output": 3, "content": "c"}) == "c"
    assert function_response_text({"b": 1.0, "1": [True]}) == '{\n  "1": [\n    true\n  ],\n  "b": 1\n}'
    assert function_response_text(None) == "null"


def test_object_responses_are_saved_as_pretty_json(tmp_path: Path) -> None:
    response = {"matches": ["x" * 100] * 3000, "count": 3000}
    history = [tool_turn("search", response), tool_turn("search", {"output": "y" * 210_000})]
    result = truncate_history_to_budget(history, tool_output_threshold=1000, save=ToolOutputSaver(tmp_path))
    # Newest first: the plain output is saved as #1, the object as #2.
    saved = (tmp_path / "tool-outputs" / "search_2.txt").read_text()
    assert saved.startswith('{\n  "matches": [\n    "xxx')
    assert output_of(result[0])["output"].startswith("Output too large. Showing first 200 and last 800 characters.")


def test_result_is_a_new_list_and_the_input_is_untouched(tmp_path: Path) -> None:
    history = [
        {"role": "model", "parts": [{"functionCall": {"name": "t", "args": {}}}]},
        {
            "role": "user",
            "parts": [{"text": "note"}, {"functionResponse": {"name": "t", "id": "7", "response": "z" * 250_000}}],
        },
        {"role": "model"},
    ]
    before = copy.deepcopy(history)
    result = truncate_history_to_budget(history, tool_output_threshold=100, save=ToolOutputSaver(tmp_path))
    assert history == before
    assert len(result) == 3 and result is not history
    assert result[0] == history[0] and result[1]["parts"][0] == {"text": "note"}
    assert result[1]["parts"][1]["functionResponse"]["id"] == "7"  # name, id ... are kept
    assert result[2] == {"role": "model", "parts": []}  # as the reference's {...content, parts: newParts}


def test_structs_are_truncated_like_their_wire_dicts(tmp_path: Path) -> None:
    history = [user("hi"), tool_turn("Read File", {"output": "中" * 40_000}), tool_turn(None, "e" * 190_000)]
    from_dicts = truncate_history_to_budget(history, tool_output_threshold=500, save=ToolOutputSaver(tmp_path / "d"))
    contents = parse_contents(history)
    from_structs = truncate_history_to_budget(contents, tool_output_threshold=500, save=ToolOutputSaver(tmp_path / "s"))
    as_dicts = json.dumps(from_dicts, sort_keys=True).replace(str(tmp_path / "d"), "X")
    assert json.dumps(dump_contents(from_structs), sort_keys=True).replace(str(tmp_path / "s"), "X") == as_dicts
    assert dump_contents(contents) == history  # untouched
    assert sorted(os.listdir(tmp_path / "s" / "tool-outputs")) == ["read_file_1.txt"]


def test_missing_tool_name_saves_as_unknown_tool(tmp_path: Path) -> None:
    history = [tool_turn(None, "q" * 210_000), tool_turn("x", "q" * 10)]
    truncate_history_to_budget(history, tool_output_threshold=100, save=ToolOutputSaver(tmp_path))
    assert os.listdir(tmp_path / "tool-outputs") == ["unknown_tool_1.txt"]


def test_file_names_are_sanitized_lowercased_and_numbered() -> None:
    assert tool_output_file_name("Grep", 3) == "grep_3.txt"
    assert tool_output_file_name("../etc/passwd", 1) == "___etc_passwd_1.txt"
    assert sanitize_filename_part("a😀b") == "a__b"  # one underscore per UTF-16 unit
    assert tool_output_file_name("", 1) == "1.txt"  # the id already "starts with" the empty tool name
    assert tool_output_file_name("1", 12) == "12.txt"


def test_lone_surrogates_are_written_as_replacement_characters(tmp_path: Path) -> None:
    path = ToolOutputSaver(tmp_path)("a\ud800b\ud83d\ude00", "t")
    assert path.read_bytes() == "a\ufffdb😀".encode()
    assert path.name == "t_1.txt"
