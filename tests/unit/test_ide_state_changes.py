"""Files changed on disk: the agent's own write, seen by the watcher a moment later, is not reported to the model as
a change; a change by someone else is, once per content; files open in the editor never are."""

from __future__ import annotations

from pathlib import Path

from sidecar.protocol.ide import OpenFile
from sidecar.session import IdeState


def test_the_agents_own_write_is_not_a_change_but_someone_elses_is(tmp_path: Path) -> None:
    ide = IdeState()
    notes = tmp_path / "notes.txt"
    notes.write_text("written by the agent\n")  # the tool wrote it, then the runner tracks it
    ide.track(str(notes))
    ide.note_changes({str(notes)})  # the watcher's event for that same write
    assert ide.changed_on_disk == set(), "the agent's own edit reported as a change on disk"

    notes.write_text("changed behind the agent's back\n")
    ide.note_changes({str(notes)})
    assert ide.changed_on_disk == {str(notes)}
    ide.changed_on_disk.clear()  # told in a context turn
    ide.note_changes({str(notes)})  # a second event for the same content (touch, a save of the same text)
    assert ide.changed_on_disk == set()

    notes.unlink()
    ide.note_changes({str(notes)})
    assert ide.changed_on_disk == {str(notes)}, "a deleted file is a change"


def test_untracked_and_open_files_are_not_reported(tmp_path: Path) -> None:
    ide = IdeState()
    mine, other = tmp_path / "mine.py", tmp_path / "other.py"
    mine.write_text("a\n")
    other.write_text("b\n")
    ide.track(str(mine))
    ide.current = [OpenFile(path=str(mine), timestamp=1)]
    mine.write_text("a2\n")
    other.write_text("b2\n")
    ide.note_changes({str(mine), str(other)})
    assert ide.changed_on_disk == set()
