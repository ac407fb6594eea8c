"""Recording costs: flat appends, flat compaction records, 40 MB resume, memory; run as a script for the figures.

PYTHONPATH=. .venv/bin/python tests/unit/test_recording_bench.py
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.recording.store import SessionStore, SessionWriter

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "parser", "config", "module", "value"]
ROOT = Path(__file__).resolve().parents[3]


def prose(rng: random.Random, chars: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(chars // 6))


def fill(writer: SessionWriter, target_bytes: int, *, messages: int | None = None, compact_every: int = 0) -> list[str]:
    """A realistic session: user/model turns, a tool round every third turn, usage, syncs, compactions."""
    rng = random.Random(1)
    ids: list[str] = []
    turn = 0
    while (writer.size < target_bytes) if messages is None else (writer.message_count < messages):
        turn += 1
        say = prose(rng, rng.choice([80, 300, 1200]))
        ids.append(writer.message(text_content("user", say), kind="user", turn_id=f"t{turn}"))
        if turn % 3 == 0:
            call = Part(function_call=FunctionCall(name="read_file", args={"path": f"src/m{turn}.py"}, id=f"c{turn}"))
            ids.append(writer.message(Content(role="model", parts=[call]), kind="toolCall", meta={"status": "ok"}))
            output = prose(rng, rng.choice([2000, 8000, 30000]))
            response = FunctionResponse(name="read_file", id=f"c{turn}", response={"output": output})
            ids.append(
                writer.message(Content(role="user", parts=[Part(function_response=response)]), kind="toolResult")
            )
        ids.append(writer.message(text_content("model", prose(rng, rng.choice([200, 800, 3000]))), kind="model"))
        writer.usage(1000 + turn, "api", ids[-1], {"promptTokenCount": 1000 + turn})
        if turn % 50 == 0:
            writer.sync()
        if compact_every and turn % compact_every == 0:
            kept = [i for i in ids[-len(ids) // 3 :] if i.startswith("m")]
            ids = [f"c{turn}.env", f"c{turn}.summary", f"c{turn}.ack", *kept]
            compact(writer, f"c{turn}", kept[0], rng)
    writer.sync()
    return ids


def compact(writer: SessionWriter, cid: str, kept_from: str, rng: random.Random) -> None:
    snapshot = "<state_snapshot>" + prose(rng, 8000) + "</state_snapshot>"
    writer.compaction(
        trigger="auto",
        status="COMPRESSED",
        original_tokens=500_000,
        new_tokens=150_000,
        snapshot=snapshot,
        summary=text_content("user", snapshot),
        ack=text_content("model", "Got it. Thanks for the additional context!"),
        env=text_content("user", "<session_context>env</session_context>"),
        kept_from=kept_from,
        replacements={kept_from: text_content("user", prose(rng, 2000))},
        compaction_id=cid,
    )


def timed(action: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Median seconds of one call."""
    samples = []
    for _ in range(repeat):
        start = clock()
        action()
        samples.append(clock() - start)
    return statistics.median(samples)


def append_cost(home: Path, messages: int) -> float:
    """Median µs to record one ~1 KB message after `messages` messages (the per-turn fsync excluded)."""
    writer = SessionStore("/bench", home=home).create(f"a{messages}", model="m")
    fill(writer, 0, messages=messages)
    content = text_content("user", prose(random.Random(2), 1000))
    cost = timed(lambda: writer.message(content, kind="user"), 2000)
    writer.close()
    return cost * 1e6


def compaction_cost(home: Path, messages: int, *, fsync: bool) -> float:
    """Median ms to record one compaction (8 KB snapshot, one replacement) after `messages` messages."""
    writer = SessionStore("/bench", home=home).create(f"c{messages}{fsync}", model="m")
    ids = fill(writer, 0, messages=messages)
    rng = random.Random(3)
    counter = iter(range(10**6))
    real_fsync = os.fsync
    if not fsync:
        os.fsync = lambda fd: None
    try:
        cost = timed(lambda: compact(writer, f"x{next(counter)}", ids[-2], rng), 30)
    finally:
        os.fsync = real_fsync
    writer.close()
    return cost * 1e3


def load_time(home: Path, megabytes: int) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds) of a resume, median of 5, the file size and its message count."""
    store = SessionStore("/bench", home=home)
    writer = store.create(f"big{megabytes}", model="m")
    fill(writer, megabytes * 1_000_000, compact_every=2000)
    writer.close()
    size = store.path(f"big{megabytes}").stat().st_size
    loaded = store.load(f"big{megabytes}")
    wall = timed(lambda: store.load(f"big{megabytes}"), 5)
    cpu = timed(lambda: store.load(f"big{megabytes}"), 5, time.process_time)
    return wall, cpu, size, loaded.message_count


@pytest.mark.slow
def test_appending_is_flat(tmp_path: Path) -> None:
    small, large = append_cost(tmp_path, 100), append_cost(tmp_path, 10_000)
    assert large < 2 * small + 20, (small, large)


@pytest.mark.slow
def test_compaction_record_cost_is_flat(tmp_path: Path) -> None:
    small, large = compaction_cost(tmp_path, 100, fsync=False), compaction_cost(tmp_path, 10_000, fsync=False)
    assert large < 2 * small + 0.5, (small, large)


@pytest.mark.slow
def test_resume_of_40_mb_is_fast(tmp_path: Path) -> None:
    _, cpu_seconds, size, _ = load_time(tmp_path, 40)  # CPU time: wall time swings on a busy machine
    assert size >= 40_000_000 and cpu_seconds <= 0.2


RSS_SCRIPT = """
import sys
from pathlib import Path
from sidecar.recording.store import SessionStore
def status(key):  # VmHWM, not ru_maxrss: that one keeps the peak of the forked parent across exec
    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith(key)) / 1024
store = SessionStore('/bench', home=Path(sys.argv[1]))
before = status('VmRSS')
loaded = store.load(sys.argv[2])
print(before, status('VmHWM'), status('VmRSS'))
"""


def rss_growth(home: Path, target_bytes: int) -> tuple[float, float, float, int]:
    """(RSS before load, peak RSS, RSS after load) in MB in a fresh process, and the file size."""
    store = SessionStore("/bench", home=home)
    writer = store.create("rss", model="m")
    fill(writer, target_bytes)
    writer.close()
    out = subprocess.run(
        [sys.executable, "-c", RSS_SCRIPT, str(home), "rss"], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout.split()
    before, peak, after = map(float, out)
    return before, peak, after, store.path("rss").stat().st_size


@pytest.mark.slow
def test_memory_of_a_1m_token_session(tmp_path: Path) -> None:
    before, peak, _, size = rss_growth(tmp_path, 4_300_000)  # ~1M tokens of text
    assert (peak - before) * 1e6 * 1.048576 <= 3 * size


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        for n in (100, 1_000, 10_000):
            print(f"append one message after {n:>6,} messages: {append_cost(home, n):7.1f} µs (median of 2000)")
        for n in (100, 10_000):
            with_sync, without = compaction_cost(home, n, fsync=True), compaction_cost(home, n, fsync=False)
            print(
                f"record a compaction after {n:>6,} messages: {with_sync:6.2f} ms with fsync, "
                f"{without:5.2f} ms without (median of 30)"
            )
        wall, cpu, size, count = load_time(home, 40)
        print(
            f"load a {size / 1e6:.1f} MB session ({count:,} messages, compactions every 2,000 turns): "
            f"{wall * 1e3:.0f} ms wall, {cpu * 1e3:.0f} ms CPU (medians of 5)"
        )
        before, peak, after, size = rss_growth(home / "rss", 4_300_000)
        print(
            f"1M-token session ({size / 1e6:.1f} MB): RSS {before:.1f} MB before load, peak {peak:.1f} MB, "
            f"{after:.1f} MB after; peak growth {(peak - before) * 1.048576 / (size / 1e6):.2f}x the file"
        )


if __name__ == "__main__":
    main()
