"""Issue 19: the compacting turn's extra wall time with background compaction, beside the synchronous path."""

# The real sidecar process against the embedded fake Gemini (in the bench process) whose every summary call takes
# SUMMARY_DELAY_S; chat replies come at once. A scripted user sends messages of ~1,000 tokens and pauses PAUSE_S
# between them (reading the reply, typing), until a turn compacts. Each turn is timed from the client: request
# written -> response read. The compacting turn (the one during which `sidecar/compressed` COMPRESSED arrived) is
# compared with the median of the run's ordinary turns. The same user, same messages and same fake run once with
# `backgroundCompaction: true` (the default) and once with `false` (the synchronous flow Gemini CLI has), in
# alternation. Summary calls per applied compaction = every summary request the fake saw up to the compacting turn
# (a preparation that was thrown away counts too) / compactions applied.

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from bench.common import Row, fake_options, init_params, judge, median, pid_of, sched, sidecar_client, verdict, worst
from sidecar.fakegemini import FakeGemini

SUMMARY_DELAY_S = 2.0
PAUSE_S = 1.5
TOKEN_LIMIT = 40_000  # compaction at 20,000 tokens (threshold 0.5); preparation from 16,000 (0.8 of that)
THRESHOLD = 0.5
MESSAGE = " ".join(f"detail{i:04d}" for i in range(400))  # ~4,400 ASCII characters: ~1,100 tokens
LIMIT_MS = 100.0
SYNC_MIN_MS = 1000 * 2 * SUMMARY_DELAY_S  # the synchronous flow waits for both passes
MAX_TURNS = 60


async def _run(home: Path, fake: FakeGemini, background: bool) -> dict[str, Any]:
    fake.reset()
    fake.script([{"kind": "delay", "seconds": SUMMARY_DELAY_S, "match": "summary", "times": -1}])
    client = sidecar_client(home)
    notices: list[dict[str, Any]] = []
    problems: list[str] = []
    client.on("sidecar/compressed", notices.append)
    client.on("window/showMessage", lambda p: problems.append(str(p.get("message"))))
    client.on("window/workDoneProgress/create", lambda _p: None)
    await client.start()
    options = fake_options(
        fake.url, tokenLimit=TOKEN_LIMIT, compressionThreshold=THRESHOLD, backgroundCompaction=background
    )
    await client.request("initialize", init_params(None, options))
    client.notify("initialized", {})
    turns_ms: list[float] = []
    waits_ms: list[float] = []  # the sidecar's time runnable but waiting for a CPU, per turn (other load)
    pid = pid_of(client)
    compacting: int | None = None
    try:
        for number in range(MAX_TURNS):
            seen = len(notices)
            waited = sched(pid)[1]
            start = time.perf_counter()
            await client.request("sidecar/sendMessage", {"text": f"Message {number}: {MESSAGE}"})
            turns_ms.append((time.perf_counter() - start) * 1000)
            waits_ms.append(sched(pid)[1] - waited)
            if any(n["status"] == "COMPRESSED" for n in notices[seen:]):
                compacting = number
                break
            await asyncio.sleep(PAUSE_S)  # the user reads the reply and types the next message
        summary_calls = len([r for r in fake.requests() if r.summary])
    finally:
        await client.close()
    if compacting is None:
        raise RuntimeError(f"no turn compacted in {MAX_TURNS} turns; messages: {problems[-3:]}")
    applied = len([n for n in notices if n["status"] == "COMPRESSED"])
    ordinary = [ms for i, ms in enumerate(turns_ms) if i not in (0, compacting)]  # the first turn warms up
    return {
        "turns_ms": turns_ms,
        "compacting_ms": turns_ms[compacting],
        "compacting_wait_ms": waits_ms[compacting],
        "ordinary_ms": median(ordinary),
        "compacting_turn": compacting,
        "summary_calls": summary_calls,
        "applied": applied,
        "notices": [n["status"] for n in notices],
    }


async def _measure(tmp: Path, repeat: int) -> dict[str, Any]:
    fake = FakeGemini().start()
    runs: dict[str, list[dict[str, Any]]] = {"background": [], "synchronous": []}
    try:
        for number in range(repeat):
            for mode in ("background", "synchronous"):
                home = tmp / f"{mode}-{number}"
                runs[mode].append(await _run(home, fake, background=mode == "background"))
    finally:
        fake.stop()
    return runs


def measure(tmp: Path, repeat: int) -> dict[str, Any]:
    return asyncio.run(_measure(tmp, repeat))


def _summary(runs: list[dict[str, Any]]) -> tuple[float, float, float, float, float]:
    """(median extra ms, median compacting ms, median ordinary ms, summary calls per applied compaction,
    median CPU wait of the sidecar during the compacting turn)."""
    extra = median([r["compacting_ms"] - r["ordinary_ms"] for r in runs])
    calls = sum(r["summary_calls"] for r in runs) / max(1, sum(r["applied"] for r in runs))
    waited = median([r["compacting_wait_ms"] for r in runs])
    return extra, median([r["compacting_ms"] for r in runs]), median([r["ordinary_ms"] for r in runs]), calls, waited


def rows(result: dict[str, Any]) -> list[Row]:
    bg_extra, bg_compacting, bg_ordinary, bg_calls, bg_waited = _summary(result["background"])
    sync_extra, sync_compacting, sync_ordinary, sync_calls, _ = _summary(result["synchronous"])
    n = len(result["background"])
    setup = (
        f"Real sidecar process, fake Gemini taking {SUMMARY_DELAY_S:.0f} s per summary call, a user sending "
        f"~1,100-token messages with {PAUSE_S} s pauses until a turn compacts (tokenLimit {TOKEN_LIMIT:,}, "
        f"threshold {THRESHOLD}: preparation from {0.8 * THRESHOLD * TOKEN_LIMIT:,.0f} tokens); median of {n} runs "
        f"per mode, alternating. Compacting turn = the turn #{result['background'][0]['compacting_turn']} "
        f"(background) / #{result['synchronous'][0]['compacting_turn']} (synchronous) of the first run."
    )
    return [
        Row(
            "issue 19",
            "Compacting turn's extra wall time over an ordinary turn, background compaction (2 s summary calls)",
            f"{bg_extra:.1f} ms ({bg_compacting:.1f} ms vs {bg_ordinary:.1f} ms; {bg_waited:.1f} ms of it the sidecar "
            f"waited for a CPU); synchronous "
            f"(backgroundCompaction: false) {sync_extra:,.0f} ms ({sync_compacting:,.0f} ms vs {sync_ordinary:.1f} ms)",
            f"≤ {LIMIT_MS:.0f} ms; synchronous ≥ {SYNC_MIN_MS:,.0f} ms",
            worst(judge(bg_extra, LIMIT_MS, bg_waited), verdict(sync_extra >= SYNC_MIN_MS)),
            setup,
        ),
        Row(
            "issue 19b",
            "Summary calls per applied compaction (wasted preparations count)",
            f"{bg_calls:.1f} background, {sync_calls:.1f} synchronous",
            "2 (as the reference)",
            verdict(bg_calls <= 2.0),
            "Every summary request the fake received up to and including the compacting turn, over all runs, divided "
            "by the compactions applied.",
        ),
    ]
