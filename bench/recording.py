"""Targets 5 and 6: recording costs at 100 / 1,000 / 10,000 messages, resuming 40 MB, memory of a 1M-token session."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from bench import generator, sessionfiles
from bench.common import (
    Row,
    fake_options,
    init_params,
    judge,
    median,
    pid_of,
    proc_kb,
    reset_peak,
    sched,
    sidecar_client,
    verdict,
)
from bench.timedfake import TimedFake
from sidecar.config.settings import Settings
from sidecar.core.history import Content, text_content
from sidecar.core.outcome import Outcome, Status
from sidecar.recording.recorder import Recorder
from sidecar.session import Session

FLAT_RATIO = 1.5
RESUME_LIMIT_S = 0.2
RSS_FACTOR = 3.0
PROBES = 400  # appends timed per session size
COMPACTIONS = 15  # compaction records timed per session size


def _recorder(home: Path, root: Path, session_id: str) -> Recorder:
    session = Session(settings=Settings(model=sessionfiles.MODEL), workspace_folders=[str(root)])
    recorder = Recorder(session, lambda _text: None, home=home)
    recorder.start(session_id)
    return recorder


def _probe_messages() -> list[tuple[str, Content]]:
    """A typical turn's four messages, appended over and over."""
    src = list(generator.session_messages(40, seed=9))
    wanted = ["user", "toolCall", "toolResult", "model"]
    picked = [next(m for m in src if m[0] == kind) for kind in wanted]
    return [(kind, sessionfiles.as_content(item)) for kind, item in picked]


def _compaction(ids: list[str], number: int) -> Outcome:
    """A COMPRESSED outcome keeping the newest ~30% of `ids`, with one truncated tool output."""
    kept_from = int(len(ids) * 0.7)
    snapshot = sessionfiles.snapshot_text(number)
    kept = [text_content("user", f"kept {i}") for i in range(len(ids) - kept_from)]
    head = [text_content("user", "<session_context>bench</session_context>"), text_content("user", snapshot)]
    return Outcome(
        Status.COMPRESSED,
        600_000,
        180_000,
        "auto",
        new_history=[*head, text_content("model", "Got it."), *kept],
        snapshot=snapshot,
        kept_from=kept_from,
        replacements={kept_from + 1: text_content("user", "Output too large. " + snapshot[:2000])},
    )


def recording_costs(tmp: Path) -> dict[str, Any]:
    """Per-message append (µs) and per-compaction record (ms, with its fsync) after N recorded messages.

    The three sessions are built first; then the timed appends and compactions alternate between them, round by
    round, so that the disk's fsync latency (shared with the rest of the machine) hits every size alike.
    """
    root = tmp / "ws"
    root.mkdir(parents=True, exist_ok=True)
    probes = _probe_messages()
    sessions: dict[int, tuple[Recorder, list[str]]] = {}
    for count in generator.SESSION_SIZES:
        recorder = _recorder(tmp / f"home-{count}", root, f"rec-{count}")
        messages = generator.session_messages(count)
        ids = [recorder.message(sessionfiles.as_content(item), kind) for kind, item in messages]
        recorder.sync()
        sessions[count] = (recorder, ids)
    out: dict[str, dict[str, Any]] = {
        str(n): {"append_us": [], "compaction_ms": [], "compaction_cpu_ms": []} for n in sessions
    }
    for i in range(PROBES):
        kind, content = probes[i % len(probes)]
        for count, (recorder, ids) in sessions.items():
            start = time.perf_counter()
            ids.append(recorder.message(content, kind, "turn-probe"))
            out[str(count)]["append_us"].append((time.perf_counter() - start) * 1e6)
            if i % len(probes) == len(probes) - 1:
                recorder.sync()  # a turn boundary, as the server does (not timed)
    outcomes = {count: _compaction(ids, 1) for count, (_, ids) in sessions.items()}  # the timed call: recording
    for _ in range(COMPACTIONS):
        for count, (recorder, ids) in sessions.items():
            start, cpu = time.perf_counter(), time.process_time()
            recorder.compaction(outcomes[count], ids)
            out[str(count)]["compaction_cpu_ms"].append((time.process_time() - cpu) * 1000)
            out[str(count)]["compaction_ms"].append((time.perf_counter() - start) * 1000)
    for count, (recorder, _) in sessions.items():
        out[str(count)]["bytes"] = recorder.path.stat().st_size if recorder.path else 0
        recorder.close()
    return out


async def _server_measures(tmp: Path, repeat: int) -> dict[str, Any]:
    """In one fresh server: peak RSS of resuming the 1M-token session, then timed resumes of the 40 MB one."""
    home, root = tmp / "home", tmp / "ws"
    root.mkdir(parents=True, exist_ok=True)
    one_m = sessionfiles.conversation_session(home, root, "rss-1m", generator.conversation(1_000_000))
    big = sessionfiles.compacted_session(home, root, "resume-40mb", 40)
    store = sessionfiles.store(home, root)
    loads, load_cpu = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        loaded = store.load("resume-40mb")
        load_cpu.append(time.process_time() - cpu)
        loads.append(time.perf_counter() - start)
    history_len, message_count = len(loaded.history), loaded.message_count
    del loaded
    fake = TimedFake().start()
    client = sidecar_client(home)
    usage: list[Any] = []
    client.on("sidecar/tokenUsage", usage.append)
    try:
        await client.start()
        await client.request("initialize", init_params(str(root), fake_options(fake.url)))
        client.notify("initialized", {})
        while not usage:  # google-genai is imported and the first usage pushed: the server is warm
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)
        pid = pid_of(client)
        peak_reset = reset_peak(pid)
        before = proc_kb(pid, "VmRSS")
        await client.request("sidecar/resumeSession", {"sessionId": "rss-1m"})
        peak, after = proc_kb(pid, "VmHWM"), proc_kb(pid, "VmRSS")
        resumes, waits = [], []
        for _ in range(repeat):
            before_wait = sched(pid)[1]
            start = time.perf_counter()
            answer = await client.request("sidecar/resumeSession", {"sessionId": "resume-40mb"})
            resumes.append(time.perf_counter() - start)
            waits.append((sched(pid)[1] - before_wait) / 1000)
    finally:
        await client.close()
        fake.stop()
    return {
        "rss_kb": {"before": before, "peak": peak, "after": after, "peak_reset": peak_reset},
        "rss_file_bytes": one_m.stat().st_size,
        "resume_s": resumes,
        "resume_wait_s": waits,
        "load_s": loads,
        "load_cpu_s": load_cpu,
        "resume_file_bytes": big.stat().st_size,
        "resume_history": history_len,
        "resume_messages": message_count,
        "resume_answer": answer,
    }


def measure(tmp: Path, repeat: int) -> dict[str, Any]:
    result = {"costs": recording_costs(tmp / "costs")}
    result.update(asyncio.run(_server_measures(tmp / "server", repeat)))
    return result


def rows(result: dict[str, Any]) -> list[Row]:
    costs = result["costs"]
    small, large = str(generator.SESSION_SIZES[0]), str(generator.SESSION_SIZES[-1])
    append = {n: median(c["append_us"]) for n, c in costs.items()}
    compaction = {n: median(c["compaction_ms"]) for n, c in costs.items()}
    compaction_cpu = {n: median(c["compaction_cpu_ms"]) for n, c in costs.items()}
    append_ratio = append[large] / append[small]
    compaction_ratio = compaction[large] / compaction[small]
    rss = result["rss_kb"]
    growth = (rss["peak"] - rss["before"]) * 1024
    factor = growth / result["rss_file_bytes"]
    resume = median(result["resume_s"])
    listing = ", ".join(f"{int(n):,}: {v:.1f} µs" for n, v in append.items())
    return [
        Row(
            "5a",
            "Recording: per-message append, 100 → 10,000 messages",
            f"{listing} (ratio {append_ratio:.2f})",
            f"ratio ≤ {FLAT_RATIO}",
            verdict(append_ratio <= FLAT_RATIO),
            f"Median of {PROBES} appends of a typical turn's messages (1 write each, no fsync; the turn's fsync "
            "is not timed). Session files: "
            + ", ".join(f"{int(n):,} msgs {c['bytes'] / 1e6:.1f} MB" for n, c in costs.items()),
        ),
        Row(
            "5b",
            "Recording a compaction, 100 vs 10,000 messages",
            f"{compaction[small]:.2f} ms vs {compaction[large]:.2f} ms (ratio {compaction_ratio:.2f})",
            f"ratio ≤ {FLAT_RATIO}",
            verdict(compaction_ratio <= FLAT_RATIO),
            f"Median of {COMPACTIONS}, interleaved across the sizes; wall time including the record's fsync "
            "(its latency is the shared disk's, not the file's); CPU time "
            + ", ".join(f"{int(n):,}: {v:.2f} ms" for n, v in compaction_cpu.items()),
        ),
        Row(
            "6a",
            f"Resume a {result['resume_file_bytes'] / 1e6:.0f} MB session (sidecar/resumeSession round trip)",
            f"{resume:.3f} s",
            f"≤ {RESUME_LIMIT_S} s",
            judge(resume, RESUME_LIMIT_S, median(result["resume_wait_s"])),
            f"Median of {len(result['resume_s'])} (the server waited {median(result['resume_wait_s']) * 1000:.0f} ms "
            f"for a CPU); {result['resume_messages']:,} messages recorded, "
            f"{result['resume_history']} in the resumed history. SessionStore.load alone: "
            f"{median(result['load_s']):.3f} s wall, {median(result['load_cpu_s']):.3f} s CPU.",
        ),
        Row(
            "6b",
            "Peak RSS growth when resuming a 1M-token session",
            f"{growth / 1e6:.1f} MB = {factor:.2f}× its {result['rss_file_bytes'] / 1e6:.1f} MB file",
            f"≤ {RSS_FACTOR:.0f}×",
            verdict(factor <= RSS_FACTOR),
            f"Server VmRSS {rss['before'] / 1024:.0f} MB before, VmHWM {rss['peak'] / 1024:.0f} MB, VmRSS "
            f"{rss['after'] / 1024:.0f} MB after (peak reset before the resume: {rss['peak_reset']}).",
        ),
    ]
