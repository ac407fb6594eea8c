"""read_file answers a short note for a file the model still sees, unchanged, in an earlier whole-file result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sidecar.tools.registry import ToolRegistry
from sidecar.tools.tool import EarlierResult


def registry(tmp_path: Path, earlier: list[EarlierResult], buffer: str | None = None) -> ToolRegistry:
    tools = ToolRegistry(
        [str(tmp_path)],
        save_output=lambda text, tool: tmp_path / "o",
        output_threshold=lambda: 100,
        editor_text=lambda path: buffer if path.name == "a.py" else None,
        results_in_view=lambda name: [e for e in earlier if name == "read_file"],
    )
    return tools


async def read(tools: ToolRegistry, **args: Any) -> str:
    result = await tools.run(tools.plan("read_file", args, trusted=True), apply_edit=None)
    assert result.ok, result.response
    return result.response["output"]


async def test_the_note_names_the_earlier_call_and_force_or_a_range_reads_anyway(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    tools = registry(tmp_path, [])
    full = await read(tools, path="a.py")
    tools = registry(tmp_path, [EarlierResult("c7", {"path": str(tmp_path / "a.py")}, full)])
    note = await read(tools, path="a.py")
    assert note.startswith("[a.py is unchanged since read_file call c7") and "x = 1" not in note
    assert "force: true" in note
    assert await read(tools, path="a.py", force=True) == full
    assert "y = 2" in await read(tools, path="a.py", start_line=2)


async def test_a_changed_file_a_ranged_earlier_read_or_a_masked_result_reads_in_full(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    full = await read(registry(tmp_path, []), path="a.py")
    (tmp_path / "a.py").write_text("x = 2\n")
    assert "x = 2" in await read(registry(tmp_path, [EarlierResult("c1", {"path": "a.py"}, full)]), path="a.py")
    ranged = EarlierResult("c2", {"path": "a.py", "start_line": 1}, "x = 2\n")
    assert "x = 2" in await read(registry(tmp_path, [ranged]), path="a.py")
    # a result the model no longer sees whole is simply not offered by the conversation: nothing to point at
    assert "x = 2" in await read(registry(tmp_path, []), path="a.py")


async def test_the_editors_unsaved_text_counts_as_the_files_content(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    full = await read(registry(tmp_path, []), path="a.py")
    earlier = [EarlierResult("c1", {"path": "a.py"}, full)]
    assert (await read(registry(tmp_path, earlier), path="a.py")).startswith("[a.py is unchanged")
    edited = await read(registry(tmp_path, earlier, buffer="x = 99  # unsaved\n"), path="a.py")
    assert "x = 99" in edited


async def test_a_later_note_points_back_to_the_full_result(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    full = await read(registry(tmp_path, []), path="a.py")
    first = EarlierResult("c1", {"path": "a.py"}, full)
    note = await read(registry(tmp_path, [first]), path="a.py")
    again = await read(registry(tmp_path, [EarlierResult("c2", {"path": "a.py"}, note), first]), path="a.py")
    assert again.startswith("[a.py is unchanged since read_file call c1")
