"""An MCP server's stderr read through a pipe as it comes, of which only the last bytes are kept."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import IO

#: How much of a server's stderr is kept (the end of it), for the words of a failure.
STDERR_TAIL = 2_000


class StderrTail:
    """A server's stderr through a pipe read as it comes, keeping only the last STDERR_TAIL bytes (a chatty server
    wrote 524 MB into a temporary file that was kept whole)."""

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self._read_fd: int | None = read_fd
        #: The end the server's stderr is given (a file object: the SDK wants one); ours is closed once it started.
        self.writer: IO[bytes] | None = os.fdopen(write_fd, "wb", buffering=0)
        self._tail = bytearray()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(read_fd, self.drain)

    def started(self) -> None:
        """The server has its copy of the write end: close ours, so that its exit is the pipe's end."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def drain(self) -> None:
        """Read what the pipe holds now (never blocks); at its end stop watching it."""
        while self._read_fd is not None:
            try:
                chunk = os.read(self._read_fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._unwatch()
                return
            self._tail += chunk
            del self._tail[:-STDERR_TAIL]

    def text(self) -> str:
        """The last lines written (what is waiting in the pipe included)."""
        self.drain()
        return bytes(self._tail).decode("utf-8", "replace").strip()

    def close(self) -> None:
        """Stop reading and close both ends (what was kept stays readable)."""
        self.started()
        self._unwatch()

    def _unwatch(self) -> None:
        if self._read_fd is not None:
            with contextlib.suppress(Exception):  # the loop may be closing
                self._loop.remove_reader(self._read_fd)
            os.close(self._read_fd)
            self._read_fd = None
