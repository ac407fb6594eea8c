"""Unit tests: marks the files whose every test starts a process, so that `make test-fast` leaves them out."""

from __future__ import annotations

from pathlib import Path

import pytest

#: Test files (relative to tests/unit) where every test starts a process: the shell tool runs bash.
PROCESS_FILES = {"tools/test_tools_shell.py"}
HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath))
        if path.is_relative_to(HERE) and path.relative_to(HERE).as_posix() in PROCESS_FILES:
            item.add_marker(pytest.mark.process)
