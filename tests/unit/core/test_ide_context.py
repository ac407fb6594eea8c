"""IDE context: normalisation and the full/delta turns (gemini-cli.md §9 items 43–46, 55–64)."""

from __future__ import annotations

import json
from typing import Any

from sidecar.core.ide_context import (
    DELTA_HEADER,
    FULL_HEADER,
    context_turn_text,
    decode_open_files,
    delta_context,
    full_context,
    normalize,
)
from sidecar.protocol.ide import Cursor, OpenFile


def payload(text: str | None) -> dict[str, Any]:
    assert text is not None
    lines = text.split("\n")
    assert lines[1] == "```json" and lines[-1] == "```"
    return json.loads("\n".join(lines[2:-1]))  # type: ignore[no-any-return]


def active(path: str = "/ws/a.py", line: int = 5, char: int = 10, sel: str | None = None, ts: float = 3) -> OpenFile:
    return OpenFile(path=path, timestamp=ts, is_active=True, cursor=Cursor(line, char), selected_text=sel)


def other(path: str, ts: float = 1) -> OpenFile:
    return OpenFile(path=path, timestamp=ts)


# 43–46: the full context
def test_full_context_with_active_file_and_others_is_one_exact_text() -> None:
    text = full_context([active(sel="hello"), other("/ws/b.py"), other("/ws/c.py")])
    expected_json = json.dumps(
        {
            "activeFile": {"path": "/ws/a.py", "cursor": {"line": 5, "character": 10}, "selectedText": "hello"},
            "otherOpenFiles": ["/ws/b.py", "/ws/c.py"],
        },
        indent=2,
    )
    assert text == f"{FULL_HEADER}\n```json\n{expected_json}\n```"


def test_empty_open_files_add_no_context() -> None:
    assert full_context([]) is None
    assert context_turn_text([], None, force_full=True) is None


def test_only_an_active_file_has_no_other_open_files_key() -> None:
    assert payload(full_context([active()])) == {
        "activeFile": {"path": "/ws/a.py", "cursor": {"line": 5, "character": 10}}
    }


def test_open_files_without_an_active_one_give_only_other_open_files() -> None:
    assert payload(full_context([other("/ws/b.py"), other("/ws/c.py")])) == {"otherOpenFiles": ["/ws/b.py", "/ws/c.py"]}


# 55–58: deltas
def test_delta_when_the_active_file_changes() -> None:
    text = delta_context([active("/ws/a.py"), other("/ws/b.py")], [active("/ws/b.py"), other("/ws/a.py")])
    assert text is not None and text.startswith(DELTA_HEADER)
    assert payload(text) == {
        "changes": {"activeFileChanged": {"path": "/ws/b.py", "cursor": {"line": 5, "character": 10}}}
    }


def test_delta_when_the_cursor_line_or_character_changes() -> None:
    for moved in (active(line=6), active(char=11)):
        changes = payload(delta_context([active()], [moved]))["changes"]
        assert changes == {
            "cursorMoved": {
                "path": "/ws/a.py",
                "cursor": {"line": moved.cursor.line, "character": moved.cursor.character},
            }
        }  # type: ignore[union-attr]


def test_delta_when_the_selection_changes_is_added_or_removed() -> None:
    assert payload(delta_context([active(sel="a")], [active(sel="b")]))["changes"] == {
        "selectionChanged": {"path": "/ws/a.py", "selectedText": "b"}
    }
    assert (
        payload(delta_context([active()], [active(sel="new")]))["changes"]["selectionChanged"]["selectedText"] == "new"
    )
    assert payload(delta_context([active(sel="old")], [active()]))["changes"]["selectionChanged"]["selectedText"] == ""


def test_no_context_when_nothing_changed() -> None:
    files = [active(sel="x"), other("/ws/b.py")]
    assert delta_context(files, list(files)) is None
    assert context_turn_text(files, files, force_full=False) is None


def test_files_opened_and_closed_and_active_file_gone() -> None:
    changes = payload(delta_context([active("/ws/a.py"), other("/ws/b.py")], [other("/ws/b.py"), other("/ws/c.py")]))[
        "changes"
    ]
    assert changes == {
        "filesOpened": ["/ws/c.py"],
        "filesClosed": ["/ws/a.py"],
        "activeFileChanged": {"path": None, "previousPath": "/ws/a.py"},
    }


# 59: with nothing sent yet (or forced), full context even if the editor state equals the last sent one
def test_full_context_when_forced_even_if_state_is_unchanged() -> None:
    files = [active()]
    text = context_turn_text(files, files, force_full=True)
    assert text is not None and text.startswith(FULL_HEADER)
    assert payload(text)["activeFile"]["path"] == "/ws/a.py"


def test_full_context_when_nothing_was_sent_before() -> None:
    text = context_turn_text([active()], None, force_full=False)
    assert text is not None and text.startswith(FULL_HEADER)


# 64: normalisation
def test_store_sorts_newest_first() -> None:
    files = normalize([other("/ws/old.py", ts=1), active("/ws/new.py", ts=9), other("/ws/mid.py", ts=5)])
    assert [f.path for f in files] == ["/ws/new.py", "/ws/mid.py", "/ws/old.py"]


def test_only_the_newest_file_keeps_active_cursor_and_selection() -> None:
    older_active = OpenFile(path="/ws/a.py", timestamp=1, is_active=True, cursor=Cursor(1, 1), selected_text="s")
    files = normalize([older_active, active("/ws/b.py", ts=2, sel="t")])
    assert files[0].is_active and files[0].selected_text == "t"
    assert files[1] == OpenFile(path="/ws/a.py", timestamp=1, is_active=False)


def test_newest_not_active_means_no_file_is_active() -> None:
    files = normalize(
        [OpenFile(path="/ws/a.py", timestamp=1, is_active=True, cursor=Cursor(2, 2)), other("/ws/b.py", ts=5)]
    )
    assert not any(f.is_active for f in files) and all(f.cursor is None for f in files)


def test_long_selection_is_truncated_with_a_marker() -> None:
    (entry,) = normalize([active(sel="x" * 20_000)])
    assert entry.selected_text == "x" * 16_384 + "... [TRUNCATED]"


def test_the_file_list_is_cut_to_ten() -> None:
    files = normalize([other(f"/ws/f{i}.py", ts=i) for i in range(15)])
    assert len(files) == 10 and files[0].path == "/ws/f14.py"


def test_entries_need_path_and_timestamp_and_bad_ones_are_dropped() -> None:
    files = decode_open_files(
        [
            {"path": "/ws/ok.py", "timestamp": 1},
            {"path": "/ws/no-timestamp.py"},
            {"timestamp": 3},
            {"path": "relative/x.py", "timestamp": 4},
            "not an object",
            {"path": "/ws/zero-cursor.py", "timestamp": 5, "isActive": True, "cursor": {"line": 0, "character": 0}},
        ]
    )
    assert [f.path for f in files] == ["/ws/ok.py", "/ws/zero-cursor.py"]
    assert files[1].cursor is None, "cursors are 1-based; a 0 cursor is dropped"


def test_files_changed_on_disk_are_reported_in_full_and_delta() -> None:
    assert payload(full_context([active()], ["/ws/x.py"]))["filesChangedOnDisk"] == ["/ws/x.py"]
    assert payload(delta_context([active()], [active()], ["/ws/x.py"])) == {
        "changes": {"filesChangedOnDisk": ["/ws/x.py"]}
    }
