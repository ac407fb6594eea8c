"""The approvals store hooks and workspace MCP servers share: 0600, a broken file asks again, a failed write holds."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest

from sidecar.private_files import read_approvals, write_approvals


def test_kept_approvals_read_back_from_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "approvals" / "p.json"
    assert read_approvals(path, "hook approvals") == {}, "nothing kept yet: nothing approved"
    write_approvals(path, "/work/p", {"k": {"commands": ["./x.sh"]}}, "hook approval")
    assert read_approvals(path, "hook approvals") == {"k": {"commands": ["./x.sh"]}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"approved": ["k"]}'])
def test_a_broken_store_approves_nothing_and_says_so(
    tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    with caplog.at_level(logging.WARNING):
        assert read_approvals(path, "MCP server approvals") == {}
    if text.startswith("{not"):
        assert "cannot read the MCP server approvals" in caplog.text


def test_a_failed_write_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with caplog.at_level(logging.WARNING):
        write_approvals(blocker / "p.json", "/work/p", {"k": {}}, "MCP approval")
    assert "cannot keep the MCP approval" in caplog.text and "holds for this session" in caplog.text
