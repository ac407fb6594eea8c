"""Removing a file the agent created that only ever lived in an editor buffer (Neovim's workspace/applyEdit creates
a file with ignoreIfExists in a buffer and writes it on :w): the rewind removes it, it does not call it unwritable."""

from __future__ import annotations

from pathlib import Path

from sidecar.checkpoints.restore import Step, current_of, write_step
from sidecar.tools.edits import EditorBuffers


def test_removing_a_created_file_that_is_only_in_a_buffer_is_done(tmp_path: Path) -> None:
    path = tmp_path / "new.txt"
    buffers = EditorBuffers()
    buffers.record(path, None, "made by the agent\n", created=True)  # applied in the editor, never on disk
    now = current_of(path, buffers)
    assert now.in_buffer and now.text == "made by the agent\n"
    assert write_step(Step(str(path), None, None, now), buffers) is None
    assert not path.exists()
    assert buffers.text(path) is None  # forgotten: the buffer's text is not what the file holds any more
