"""The allocator tuning the server applies at start-up takes effect on this (glibc) machine."""

from __future__ import annotations

import platform
import subprocess
import sys

from sidecar.allocator import return_big_buffers_to_the_os


def test_this_machine_has_glibc() -> None:
    """The project's machines (Debian) do; the properties below are glibc's."""
    assert sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


def test_the_mmap_threshold_is_fixed_on_glibc() -> None:
    assert return_big_buffers_to_the_os() is True


def test_a_freed_big_buffer_leaves_the_process() -> None:
    """Without the fixed threshold, freeing a 9 MB block raises glibc's threshold, and the next blocks of that
    size stay in the heap after they are freed: RSS keeps them."""
    code = """
import sys
from sidecar.allocator import return_big_buffers_to_the_os
if sys.argv[1] == "fixed":
    assert return_big_buffers_to_the_os()
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
big = bytearray(9 << 20)
del big  # one big block freed: glibc's dynamic threshold rises past 8 MB
base = rss()
blocks, pins = [], []
for _ in range(6):
    blocks.append(bytearray(8 << 20))  # zero-filled, so resident
    pins.append(bytearray(4096))  # a small live block after each: the freed space cannot merge into the heap top
del blocks
print(rss() - base)
"""
    grown = {
        mode: int(subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, check=True).stdout)
        for mode in ("default", "fixed")
    }
    assert grown["fixed"] < 4, grown  # 0 measured
    assert grown["default"] >= 40, grown  # the control: the freed buffers stayed resident (48 measured)
