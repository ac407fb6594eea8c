"""File access that cannot hang or flood the server: non-blocking opens, fstat before reading, work off the loop."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sidecar.tools.paths import ToolError

__all__ = ["PLAN_SECONDS", "RUN_SECONDS", "link_count", "off_loop", "open_regular", "read_regular", "write_regular"]

T = TypeVar("T")

#: Deadlines for a tool's file work (planning an edit, running a read-only tool) when it runs off the loop.
PLAN_SECONDS = 30.0
RUN_SECONDS = 120.0

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: Path, shown: str, *, follow: bool = False) -> int:
    """A descriptor for reading the regular file `path`, opened without blocking and checked with fstat.

    FileNotFoundError when it does not exist; ToolError for a directory, a FIFO, a device or a socket (never
    opened for a read that could block), and, unless `follow`, for a path that became a symbolic link.
    """
    flags = _READ_FLAGS if not follow else _READ_FLAGS & ~os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise ToolError(f"{shown} is a directory.") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolError(f"{shown} is now a symbolic link; read its path again.") from None
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ToolError(f"{shown} is a directory.")
        if not stat.S_ISREG(mode):
            raise ToolError(f"{shown} is {_kind(mode)}, not a regular file; only regular files can be read or edited.")
        os.set_blocking(fd, True)  # a regular file never blocks; buffered reads want a blocking descriptor
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path, shown: str, limit: int, what: str = "read") -> bytes | None:
    """The bytes of the regular file `path` (None when it does not exist), refused with ToolError before any
    read when fstat says it is larger than `limit`; never more than `limit` bytes are read."""
    try:
        fd = open_regular(path, shown)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise ToolError(f"{shown} is too large to {what} ({size:,} bytes; the limit is {limit:,}).")
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew after the fstat
        raise ToolError(f"{shown} is too large to {what} (over {limit:,} bytes).")
    return data


def write_regular(path: Path, data: bytes, shown: str) -> None:
    """Write `data` over the regular file `path` in place (keeping its mode, owner and hard links), or create it
    0666 & ~umask; a FIFO, device or socket there is refused without blocking."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ELOOP):
            raise ToolError(f"{shown} is not a regular file; it was not written.") from None
        raise ToolError(f"Cannot write {shown}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "wb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ToolError(f"{shown} is {_kind(mode)}, not a regular file; it was not written.")
        os.set_blocking(fd, True)
        handle.truncate(0)
        handle.write(data)


def link_count(path: Path) -> int:
    """How many hard links the regular file `path` has (0 when it does not exist or is not a regular file)."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return 0
    return info.st_nlink if stat.S_ISREG(info.st_mode) else 0


async def off_loop(job: Callable[[], T], *, seconds: float, what: str, stop: threading.Event | None = None) -> T:
    """Run blocking file work in a daemon thread; ToolError when it takes longer than `seconds` (the thread is
    told to stop through `stop` and left behind; a stuck one never keeps the process from exiting)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result, error = job(), None
        except BaseException as exc:  # handed to the awaiting coroutine
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, name=f"sidecar-tool: {what}"[:60], daemon=True).start()
    try:
        return await asyncio.wait_for(future, seconds)
    except TimeoutError:
        if stop is not None:
            stop.set()
        raise ToolError(
            f"{what} did not finish within {seconds:g} s (a slow or stuck file system?); it was abandoned."
        ) from None
    except asyncio.CancelledError:
        if stop is not None:
            stop.set()
        raise
