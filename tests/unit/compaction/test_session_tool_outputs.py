"""The session's saved tool outputs: a restarted sidecar numbers on after the files already there."""

from __future__ import annotations

from pathlib import Path

from sidecar.compaction.tool_outputs import SessionToolOutputs


class Folder:
    def __init__(self, path: Path) -> None:
        self.path = path

    def session_dir(self) -> Path:
        return self.path


def test_a_resumed_session_never_overwrites_an_output_saved_before(tmp_path: Path) -> None:
    first = SessionToolOutputs(Folder(tmp_path / "s1"))
    one = first("the first output", "read_file")
    two = first("the second output", "run_shell_command")
    assert (one.name, two.name) == ("read_file_1.txt", "run_shell_command_2.txt")
    again = SessionToolOutputs(Folder(tmp_path / "s1"))  # the same session after a restart
    three = again("a later output", "read_file")
    assert three.name == "read_file_3.txt"
    assert one.read_text() == "the first output" and two.read_text() == "the second output"
    other = SessionToolOutputs(Folder(tmp_path / "s2"))("another session's", "read_file")
    assert other.name == "read_file_1.txt"
