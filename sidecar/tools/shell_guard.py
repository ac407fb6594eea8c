"""Runs one shell command for the sidecar and takes the command's process group down if the sidecar dies.

Started as `python -I -S shell_guard.py SIDECAR_PID ARGV...` in a new session, so it leads the command's process
group. It forks ARGV (bash -c ...), passes on its exit status (a signal as the same signal), and asks the kernel
for SIGHUP when the sidecar dies (PR_SET_PDEATHSIG; a 0.5 s poll where that is unavailable). On that signal it
stops the whole group: SIGTERM, then SIGKILL a second later. Without it, a command would outlive a sidecar
killed with SIGKILL (an editor crash), since nothing else would stop its group. Standard library only, imported
by path: it must start fast and must not import the sidecar.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

GRACE_SECONDS = 1.0
PR_SET_PDEATHSIG = 1


def _bring_down(*_: object) -> None:
    """The sidecar is gone: SIGTERM the group (not this process), then SIGKILL it (this process included)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    group = os.getpgrp()
    for sig in (signal.SIGTERM, signal.SIGCONT):
        with contextlib.suppress(OSError):
            os.killpg(group, sig)
    time.sleep(GRACE_SECONDS)
    os.killpg(group, signal.SIGKILL)


def _watch_parent(parent: int) -> None:
    signal.signal(signal.SIGHUP, _bring_down)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGHUP), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
    except (ImportError, OSError, AttributeError):
        threading.Thread(target=_poll_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it died before the kernel was asked to tell us
        _bring_down()


def _poll_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGHUP)


def main(argv: list[str]) -> int:
    parent, command = int(argv[0]), argv[1:]
    _watch_parent(parent)
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"cannot run {command[0]}: {exc.strerror}\n".encode())
            os._exit(127)
    # The command's output pipe is the command's: this process keeps no copy open.
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(devnull, fd)
    while True:
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            break
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig  # a signal whose default action is not to end the process
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
