"""write_file and replace: edit shape, line edits any LSP client applies right, diffs, disk fallback, unsaved text."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import converters, types

from sidecar.tools import ToolRegistry, needs_confirmation
from sidecar.tools.edits import line_edits, split_lines, unified_diff, workspace_edit
from tests.examples import examples
from tests.waiting import settled

# ---------------------------------------------------------------- a client applying WorkspaceEdits


def _offset(text: str, position: dict[str, int], encoding: str) -> int:
    """An LSP position in `text` as a str index; lines past the end and characters past a line's end clamp."""
    lines = split_lines(text)
    if position["line"] >= len(lines):
        return len(text)
    start = sum(len(line) for line in lines[: position["line"]])
    content = lines[position["line"]].rstrip("\r\n")
    units, index = 0, 0
    while index < len(content) and units < position["character"]:
        units += len(content[index].encode(encoding)) // {"utf-8": 1, "utf-16-le": 2, "utf-32-le": 4}[encoding]
        index += 1
    return start + index


def apply_text_edits(text: str, edits: list[dict[str, Any]], encoding: str = "utf-16-le") -> str:
    spans = [
        (_offset(text, e["range"]["start"], encoding), _offset(text, e["range"]["end"], encoding), e) for e in edits
    ]
    for start, end, edit in sorted(spans, key=lambda s: s[0], reverse=True):
        text = text[:start] + edit["newText"] + text[end:]
    return text


class FakeEditor:
    """workspace/applyEdit against in-memory buffers, seeded from the disk on first touch."""

    def __init__(self, fail: str | None = None) -> None:
        self.buffers: dict[str, str] = {}
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    async def apply(self, edit: dict[str, Any]) -> tuple[bool, str | None]:
        self.calls.append(edit)
        if self.fail is not None:
            return False, self.fail
        for change in edit["documentChanges"]:
            if change.get("kind") == "create":
                path = Path(change["uri"].removeprefix("file://"))
                path.touch()  # as VS Code does: an empty file on disk, the text in a dirty buffer
                self.buffers.setdefault(change["uri"], "")
                continue
            uri = change["textDocument"]["uri"]
            assert change["textDocument"]["version"] is None
            if uri not in self.buffers:
                self.buffers[uri] = Path(uri.removeprefix("file://")).read_bytes().decode()
            self.buffers[uri] = apply_text_edits(self.buffers[uri], change["edits"])
        return True, None


def registry(ws: Path) -> ToolRegistry:
    return ToolRegistry([str(ws)], save_output=lambda text, tool: ws / "unused", output_threshold=lambda: 10**6)


# ---------------------------------------------------------------- line edits


texts = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "é", "😀", "", "  x"]), st.sampled_from(["\n", "\r\n", "\r", ""])),
    max_size=12,
).map(lambda parts: "".join(a + b for a, b in parts))


@settings(max_examples=examples(400), deadline=None)
@given(texts, texts, st.sampled_from(["utf-16-le", "utf-8", "utf-32-le"]))
def test_line_edits_reproduce_the_new_text_in_any_position_encoding(before: str, after: str, encoding: str) -> None:
    edits = line_edits(before, after)
    assert apply_text_edits(before, edits, encoding) == after
    for edit in edits:  # only column 0, except the end of an unterminated ASCII last line
        for end in ("start", "end"):
            position = edit["range"][end]
            if position["character"]:
                last = split_lines(before)[-1]
                assert last.isascii() and position == {"line": len(split_lines(before)) - 1, "character": len(last)}


def test_line_edits_are_minimal_and_whole_lines() -> None:
    before = "one\ntwo\nthree\nfour\nfive\n"
    after = "one\nTWO\nthree\nfour\nFIVE\nsix\n"
    assert line_edits(before, after) == [
        {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}, "newText": "TWO\n"},
        {"range": {"start": {"line": 4, "character": 0}, "end": {"line": 5, "character": 0}}, "newText": "FIVE\nsix\n"},
    ]
    assert line_edits("same\n", "same\n") == []


def test_unified_diff_marks_missing_final_newline() -> None:
    diff, added, removed = unified_diff("a\nb", "a\nc\n", "f.txt")
    assert diff == "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
    assert (added, removed) == (1, 1)


# ---------------------------------------------------------------- write_file


async def test_write_file_new_file_edit_shape_and_editor_application(tmp_path: Path) -> None:
    tools, editor = registry(tmp_path), FakeEditor()
    plan = tools.plan("write_file", {"path": "pkg/new.py", "content": "x = 1\n"}, trusted=True)
    uri = (tmp_path / "pkg" / "new.py").as_uri()
    assert plan.error is None and plan.kind == "edit" and plan.description == "Create pkg/new.py (1 line)"
    assert plan.edit == {
        "documentChanges": [
            {"kind": "create", "uri": uri, "options": {"overwrite": False, "ignoreIfExists": True}},
            {
                "textDocument": {"uri": uri, "version": None},
                "edits": [
                    {
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                        "newText": "x = 1\n",
                    }
                ],
            },
        ]
    }
    assert plan.diff == "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
    result = await tools.run(plan, apply_edit=editor.apply)
    assert result.ok and result.summary == "Created pkg/new.py (+1 −0) in the editor (unsaved)"
    assert editor.buffers[uri] == "x = 1\n"
    assert (tmp_path / "pkg").is_dir()  # the folder is made for the editor


async def test_write_file_existing_file_keeps_crlf_and_bom(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes("\ufeffone\r\ntwo\r\n".encode())
    tools = registry(tmp_path)
    plan = tools.plan("write_file", {"path": "w.txt", "content": "one\nTWO\n"}, trusted=True)
    assert plan.description == "Overwrite w.txt (+1 −1)"
    assert plan.edit is not None
    [change] = plan.edit["documentChanges"]
    assert change["edits"] == [
        {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}, "newText": "TWO\r\n"}
    ]
    assert (await tools.run(plan, apply_edit=None)).ok
    assert (tmp_path / "w.txt").read_bytes() == "\ufeffone\r\nTWO\r\n".encode()


async def test_write_file_disk_fallback_creates_folders(tmp_path: Path) -> None:
    tools = registry(tmp_path)
    result = await tools.run(
        tools.plan("write_file", {"path": "a/b/c.txt", "content": "hi"}, trusted=True), apply_edit=None
    )
    assert result.ok and result.response == {"output": "Created a/b/c.txt (+1 −0)."}
    assert (tmp_path / "a" / "b" / "c.txt").read_text() == "hi"


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ("same", {"path": "f.txt", "content": "same\n"}, "already has exactly this content"),
        ("dir", {"path": "d", "content": "x"}, "d is a directory"),
        ("binary", {"path": "b.bin", "content": "x"}, "binary"),
        ("latin1", {"path": "l.txt", "content": "x"}, "not valid UTF-8"),
    ],
)
def test_write_file_refusals(tmp_path: Path, setup: str, args: dict[str, Any], message: str) -> None:
    {
        "same": lambda: (tmp_path / "f.txt").write_text("same\n"),
        "dir": lambda: (tmp_path / "d").mkdir(),
        "binary": lambda: (tmp_path / "b.bin").write_bytes(b"\0\1"),
        "latin1": lambda: (tmp_path / "l.txt").write_bytes("é".encode("latin-1")),
    }[setup]()
    plan = registry(tmp_path).plan("write_file", args, trusted=True)
    assert plan.error is not None and message in plan.error
    assert not needs_confirmation(plan, "default", set())


# ---------------------------------------------------------------- replace


@pytest.fixture
def code(tmp_path: Path) -> Path:
    (tmp_path / "m.py").write_text("def f():\n    return 1\n\ndef g():\n    return 1\n")
    return tmp_path


def test_replace_zero_occurrences(code: Path) -> None:
    plan = registry(code).plan("replace", {"path": "m.py", "old_string": "return 2", "new_string": "x"}, trusted=True)
    assert plan.error is not None and plan.error.startswith("old_string was not found in m.py.")


def test_replace_two_occurrences_needs_expected_replacements(code: Path) -> None:
    tools = registry(code)
    args = {"path": "m.py", "old_string": "return 1", "new_string": "return 2"}
    plan = tools.plan("replace", args, trusted=True)
    assert plan.error is not None
    assert "old_string occurs 2 times in m.py, but expected_replacements is 1" in plan.error
    assert "set expected_replacements to 2" in plan.error
    wrong = tools.plan("replace", {**args, "expected_replacements": 3}, trusted=True)
    assert wrong.error is not None and "occurs 2 times in m.py, but expected_replacements is 3" in wrong.error
    both = tools.plan("replace", {**args, "expected_replacements": 2}, trusted=True)
    assert both.error is None and both.description == "Edit m.py: replace 2 occurrences (+2 −2)"


async def test_replace_applies_through_the_editor_with_minimal_ranges(code: Path) -> None:
    tools, editor = registry(code), FakeEditor()
    args = {"path": "m.py", "old_string": "def g():\n    return 1", "new_string": "def g():\n    return 42"}
    plan = tools.plan("replace", args, trusted=True)
    assert plan.edit is not None
    [change] = plan.edit["documentChanges"]
    assert change["textDocument"] == {"uri": (code / "m.py").as_uri(), "version": None}
    assert change["edits"] == [
        {
            "range": {"start": {"line": 4, "character": 0}, "end": {"line": 5, "character": 0}},
            "newText": "    return 42\n",
        }
    ]
    assert plan.diff is not None and "-    return 1\n+    return 42\n" in plan.diff
    result = await tools.run(plan, apply_edit=editor.apply)
    assert result.ok and result.summary == "Edited m.py (+1 −1) in the editor (unsaved)"
    assert editor.buffers[(code / "m.py").as_uri()].endswith("return 1\n\ndef g():\n    return 42\n")
    assert (code / "m.py").read_text().endswith("return 1\n")  # the disk is untouched until the user saves


async def test_replace_matches_lf_text_in_a_crlf_file(tmp_path: Path) -> None:
    (tmp_path / "dos.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    tools = registry(tmp_path)
    plan = tools.plan("replace", {"path": "dos.txt", "old_string": "a\nb", "new_string": "A\nB"}, trusted=True)
    assert plan.error is None
    await tools.run(plan, apply_edit=None)
    assert (tmp_path / "dos.txt").read_bytes() == b"A\r\nB\r\nc\r\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"path": "m.py", "old_string": "", "new_string": "x"}, "old_string is empty"),
        ({"path": "m.py", "old_string": "f", "new_string": "f"}, "identical"),
        ({"path": "nope.py", "old_string": "a", "new_string": "b"}, "File not found: nope.py"),
        ({"path": "m.py", "old_string": "a", "new_string": "b", "expected_replacements": 0}, "at least 1"),
        ({"path": "m.py", "old_string": "a"}, "Missing required argument: 'new_string'"),
    ],
)
def test_replace_refusals(code: Path, args: dict[str, Any], message: str) -> None:
    plan = registry(code).plan("replace", args, trusted=True)
    assert plan.error is not None and message in plan.error


# ---------------------------------------------------------------- applyEdit failures and stale plans


async def test_apply_edit_refusal_is_reported_to_the_model(code: Path) -> None:
    tools = registry(code)
    plan = tools.plan("replace", {"path": "m.py", "old_string": "def f", "new_string": "def h"}, trusted=True)
    result = await tools.run(plan, apply_edit=FakeEditor(fail="document is read-only").apply)
    assert not result.ok
    assert result.response == {
        "error": "The editor did not apply the edit to m.py: document is read-only. Read the file again before "
        "editing it: the editor's text may differ from what you read."
    }


async def test_apply_edit_exception_is_reported_to_the_model(code: Path) -> None:
    async def broken(edit: dict[str, Any]) -> tuple[bool, str | None]:
        raise ConnectionError("client went away")

    tools = registry(code)
    plan = tools.plan("replace", {"path": "m.py", "old_string": "def f", "new_string": "def h"}, trusted=True)
    result = await tools.run(plan, apply_edit=broken)
    assert not result.ok and "client went away" in result.response["error"]


async def test_edit_refused_when_the_file_changed_after_planning(code: Path) -> None:
    tools = registry(code)
    plan = tools.plan("replace", {"path": "m.py", "old_string": "def f", "new_string": "def h"}, trusted=True)
    (code / "m.py").write_text("def f():\n    pass\n")
    result = await tools.run(plan, apply_edit=None)
    assert not result.ok and "changed after this edit was prepared" in result.response["error"]
    assert (code / "m.py").read_text() == "def f():\n    pass\n"
    created = tools.plan("write_file", {"path": "late.txt", "content": "mine\n"}, trusted=True)
    (code / "late.txt").write_text("theirs\n")
    result = await tools.run(created, apply_edit=FakeEditor().apply)
    assert not result.ok and (code / "late.txt").read_text() == "theirs\n"


# ---------------------------------------------------------------- unsaved editor text


async def test_later_reads_and_edits_start_from_the_unsaved_editor_text(code: Path) -> None:
    tools, editor = registry(code), FakeEditor()
    uri = (code / "m.py").as_uri()
    first = tools.plan("replace", {"path": "m.py", "old_string": "def f():", "new_string": "def f(x):"}, trusted=True)
    assert (await tools.run(first, apply_edit=editor.apply)).ok
    read = await tools.run(tools.plan("read_file", {"path": "m.py"}, trusted=True), apply_edit=None)
    assert read.response["output"].startswith("def f(x):\n")
    found = await tools.run(tools.plan("search_text", {"pattern": r"f\(x\)"}, trusted=True), apply_edit=None)
    assert found.response["output"] == "m.py:1: def f(x):"
    second = tools.plan(
        "replace", {"path": "m.py", "old_string": "def f(x):", "new_string": "def f(x, y):"}, trusted=True
    )
    assert second.error is None
    assert (await tools.run(second, apply_edit=editor.apply)).ok
    assert editor.buffers[uri].startswith("def f(x, y):\n    return 1\n")

    (code / "m.py").write_text(editor.buffers[uri])  # the user saves: the disk is the truth again
    assert tools.buffers.unsaved() == {}
    (code / "m.py").write_text("rewritten\n")  # later changes on disk are seen
    read = await tools.run(tools.plan("read_file", {"path": "m.py"}, trusted=True), apply_edit=None)
    assert read.response["output"] == "rewritten\n"


async def test_created_file_stays_visible_while_unsaved(tmp_path: Path) -> None:
    tools, editor = registry(tmp_path), FakeEditor()
    await tools.run(
        tools.plan("write_file", {"path": "n.txt", "content": "new\n"}, trusted=True), apply_edit=editor.apply
    )
    assert (tmp_path / "n.txt").read_text() == ""  # created empty on disk, text in the buffer
    read = await tools.run(tools.plan("read_file", {"path": "n.txt"}, trusted=True), apply_edit=None)
    assert read.response["output"] == "new\n"
    again = tools.plan("write_file", {"path": "n.txt", "content": "newer\n"}, trusted=True)
    assert again.description == "Overwrite n.txt (+1 −1)"


async def test_editor_text_hook_takes_precedence(code: Path) -> None:
    open_buffers = {str(code / "m.py"): "typed in the editor\n"}
    tools = ToolRegistry(
        [str(code)],
        save_output=lambda text, tool: code / "unused",
        output_threshold=lambda: 1000,
        editor_text=lambda path: open_buffers.get(str(path)),
    )
    read = await tools.run(tools.plan("read_file", {"path": "m.py"}, trusted=True), apply_edit=None)
    assert read.response["output"] == "typed in the editor\n"
    plan = tools.plan("replace", {"path": "m.py", "old_string": "typed", "new_string": "written"}, trusted=True)
    assert plan.error is None and plan.diff is not None and "+written in the editor" in plan.diff


async def test_an_edit_the_editor_applies_after_cancellation_is_still_remembered(code: Path) -> None:
    tools = registry(code)
    answer: asyncio.Future[tuple[bool, str | None]] = asyncio.get_running_loop().create_future()
    asked = asyncio.Event()
    editor_calls: list[asyncio.Task[Any]] = []

    async def slow_editor(edit: dict[str, Any]) -> tuple[bool, str | None]:
        current = asyncio.current_task()
        assert current is not None
        editor_calls.append(current)
        asked.set()
        return await answer

    plan = tools.plan("replace", {"path": "m.py", "old_string": "def f", "new_string": "def h"}, trusted=True)
    task = asyncio.create_task(tools.run(plan, apply_edit=slow_editor))
    await asked.wait()  # the editor has the edit
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    answer.set_result((True, None))  # the editor applied it anyway
    # Its answer is in: done-callbacks run in the order they were added, so the registry's ran before ours.
    await settled(editor_calls[0])
    read = await tools.run(tools.plan("read_file", {"path": "m.py"}, trusted=True), apply_edit=None)
    assert read.response["output"].startswith("def h():")


@pytest.mark.parametrize("before", [None, "a\nb\n"])
def test_workspace_edits_structure_as_lsprotocol_types(tmp_path: Path, before: str | None) -> None:
    edit = workspace_edit(tmp_path / "x.py", before, "a\nc\n")
    converter = converters.get_converter()
    structured = converter.structure(edit, types.WorkspaceEdit)
    assert converter.unstructure(structured) == edit


def test_an_edit_names_the_version_of_the_synced_document_it_was_planned_on(tmp_path: Path) -> None:
    """The editor refuses an edit planned on an older version of its buffer (it changed since: undo, :e!, typing)."""
    from sidecar.rpc.editor import with_versions

    synced, other = tmp_path / "open.py", tmp_path / "closed.py"
    changes = (
        workspace_edit(synced, "a\n", "b\n")["documentChanges"] + workspace_edit(other, "a\n", "c\n")["documentChanges"]
    )
    edit = {"documentChanges": changes}
    versions = {synced.as_uri(): 7}
    sent = with_versions(edit, versions.get)
    assert [change["textDocument"]["version"] for change in sent["documentChanges"]] == [7, None]
    assert edit["documentChanges"][0]["textDocument"]["version"] is None  # the plan's own edit is left as it was
    created = workspace_edit(tmp_path / "new.py", None, "x\n")
    assert with_versions(created, versions.get)["documentChanges"][0] == created["documentChanges"][0]
