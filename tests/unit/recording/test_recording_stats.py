"""`sidecar sessions stats`: the estimate's error math, old recordings without the estimate, the command's output."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import msgspec
import pytest

from sidecar.core.history import text_content
from sidecar.core.recording import UsageRecord
from sidecar.recording.cli import add_parsers
from sidecar.recording.stats import (
    Pair,
    correction_check,
    main_sessions_stats,
    percentile,
    read_session,
    summarize,
)
from sidecar.recording.store import SessionStore


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="sidecar")
    add_parsers(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentile(values, 95) == 19.0
    assert percentile(values, 50) == 10.0
    assert percentile([3.0], 95) == 3.0
    assert percentile([5.0, 1.0], 100) == 5.0


def test_error_is_relative_to_the_api_count_with_its_sign() -> None:
    pairs = [Pair(100, 90, "m"), Pair(200, 220, "m"), Pair(1000, 1000, "m"), Pair(50, 40, "m")]
    assert [p.error for p in pairs] == [-0.1, 0.1, 0.0, -0.2]
    s = summarize(pairs)
    assert s is not None
    assert (s.n, s.median, s.p95) == (4, pytest.approx(0.1), pytest.approx(0.2))
    assert s.bias == pytest.approx(-0.05)  # median of -0.2, -0.1, 0.0, 0.1
    assert summarize([]) is None


def test_correction_is_judged_only_on_requests_after_the_ones_it_learned_from() -> None:
    # An estimate that reads 20% low every time: a learned ratio fixes it from the second request on.
    steady = [Pair(100 * k, 80 * k, "m") for k in range(1, 6)]
    judged, recorded, corrected = correction_check(steady) or (0, 0.0, 0.0)
    assert (judged, recorded, corrected) == (4, pytest.approx(0.2), pytest.approx(0.0))
    # Errors with no pattern: the correction does not help (and is never judged on its own data).
    noisy = [Pair(100, 80, "m"), Pair(100, 125, "m"), Pair(100, 80, "m"), Pair(100, 125, "m")]
    judged, recorded, corrected = correction_check(noisy) or (0, 0.0, 0.0)
    assert judged == 3 and corrected >= recorded
    # One request per model: nothing to learn from.
    assert correction_check([Pair(100, 80, "a"), Pair(100, 80, "b")]) is None
    # The ratio is bounded: a wild first pair cannot scale later estimates by more than 2x.
    _, _, corrected = correction_check([Pair(1000, 10, "m"), Pair(100, 100, "m")]) or (0, 0.0, 0.0)
    assert corrected == pytest.approx(1.0)


def test_a_recording_made_before_the_estimate_was_recorded_still_loads(tmp_path: Path) -> None:
    old_line = b'{"type":"usage","time":"2026-11-01T00:00:00.000Z","promptTokenCount":1234,"source":"api"}'
    record = msgspec.json.decode(old_line, type=UsageRecord)
    assert record.estimated_token_count is None
    store = SessionStore(str(tmp_path), home=tmp_path / "home")
    writer = store.create("old", model="m")
    writer.message(text_content("user", "hello"), kind="user")
    writer.usage(1234, "api", message_id=None)  # as every recording before the field existed
    writer.close()
    assert store.load("old").last_usage is not None
    assert read_session(store.path("old")).pairs == []


def _session(store: SessionStore, session_id: str, pairs: list[tuple[int, int]], compacted: bool) -> None:
    writer = store.create(session_id, model="gemini-2.5-pro", title=f"work {session_id}")
    first = writer.message(text_content("user", "hello"), kind="user")
    writer.usage(999, "api")  # no estimate: left out of the error
    for api, estimated in pairs:
        writer.usage(api, "api", estimated=estimated)
    writer.usage(500, "estimate", estimated=400)  # not an API count: left out
    if compacted:
        writer.compaction(
            trigger="auto",
            status="COMPRESSED",
            original_tokens=520_000,
            new_tokens=130_000,
            snapshot="<state_snapshot></state_snapshot>",
            summary=text_content("user", "s"),
            ack=text_content("model", "ok"),
            kept_from=first,
        )
    writer.close()


def test_cli_prints_the_error_per_session_and_overall_and_the_compactions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIDECAR_HOME", str(tmp_path / "home"))
    store = SessionStore(str(tmp_path))
    _session(store, "aaaa1111", [(1000, 900), (2000, 2200)], compacted=True)
    _session(store, "bbbb2222", [(1000, 1500)], compacted=False)

    out = io.StringIO()
    args = parse(["sessions", "stats", "--project", str(tmp_path)])
    assert args.func is main_sessions_stats and main_sessions_stats(args, out) == 0
    text = out.getvalue()
    assert "aaaa1111  work aaaa1111" in text
    assert "2 requests  median |error| 10.0%  p95 10.0%  bias +0.0%" in text
    assert "1 requests  median |error| 50.0%  p95 50.0%  bias +50.0%" in text
    assert "overall" in text and "3 requests  median |error| 10.0%  p95 50.0%" in text
    assert "auto    COMPRESSED  520,000 → 130,000 tokens (-75%)" in text

    out = io.StringIO()
    assert main_sessions_stats(parse(["sessions", "stats", "bbbb", "--project", str(tmp_path), "--json"]), out) == 0
    data = json.loads(out.getvalue())
    [one] = data["sessions"]
    assert one["sessionId"] == "bbbb2222" and one["model"] == "gemini-2.5-pro" and one["compactions"] == []
    assert one["estimateError"] == {"n": 1, "median": 0.5, "p95": 0.5, "bias": 0.5}

    assert main_sessions_stats(parse(["sessions", "stats", "../x", "--project", str(tmp_path)]), io.StringIO()) == 2
