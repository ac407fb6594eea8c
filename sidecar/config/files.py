"""The one safe reader of settings files (the user's and the workspace's): a regular file only — a FIFO or device is
refused without blocking — at most MAX_BYTES, and every problem in words."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

MAX_BYTES = 1_000_000


class _Missing:
    """The value read from a settings file that does not exist (JSON `null` is a value, and a problem)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def _read_regular_file(path: str | Path) -> bytes:
    """At most MAX_BYTES + 1 bytes of a regular file; a FIFO or device is refused without blocking."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(str(path))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_BYTES + 1)
    finally:
        os.close(fd)


def read_json_file(path: str | Path) -> tuple[Any, str | None]:
    """(the file's JSON value, None); (MISSING, None) when there is no such file; (None, the problem in words) when
    it cannot be used — the caller then ignores the file and changes nothing."""
    try:
        raw = _read_regular_file(path)
    except FileNotFoundError:
        return MISSING, None
    except IsADirectoryError:
        return None, f"{path} is not a regular file; it is ignored."
    except OSError as exc:
        return None, f"Cannot read {path}: {exc.strerror or exc}; it is ignored."
    if len(raw) > MAX_BYTES:
        return None, f"{path} is larger than {MAX_BYTES:,} bytes; it is ignored."
    try:
        return json.loads(raw), None
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"{path} is not valid JSON ({exc}); it is ignored and nothing was changed."
