"""`sidecar sessions stats [ID]`: the token estimate's error against the API's counts, and the compactions made."""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import msgspec

from sidecar.core.recording import CompactionRatingRecord, CompactionRecord, SessionRecord, UsageRecord
from sidecar.recording.store import RecordingError, SessionStore, all_sessions

#: A learned correction is a ratio API count / estimate, kept within these bounds (as Gemini CLI's experimental
#: adaptive estimator bounds its own).
CORRECTION_BOUNDS = (0.5, 2.0)


@dataclass(frozen=True)
class Pair:
    """One request: the API's promptTokenCount and what the sidecar had estimated for it."""

    api: int
    estimated: int
    model: str

    @property
    def error(self) -> float:
        """Signed relative error of the estimate: (estimate − API) / API."""
        return (self.estimated - self.api) / self.api


@dataclass
class Compaction:
    time: str
    trigger: str
    status: str
    before: int
    after: int
    id: str = ""
    #: The user edited the summary before it was applied.
    edited: bool = False
    #: The user's latest rating ("good", "lost") and its note.
    rating: str | None = None
    note: str | None = None


@dataclass
class SessionStats:
    session_id: str
    title: str | None
    model: str
    pairs: list[Pair] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)


@dataclass(frozen=True)
class ErrorSummary:
    """The estimate's error over some requests: count, median and 95th percentile of |error|, median signed error."""

    n: int
    median: float
    p95: float
    bias: float


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of non-empty `values`: the smallest value with q% at or below it."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summarize(pairs: Sequence[Pair]) -> ErrorSummary | None:
    """None without pairs."""
    if not pairs:
        return None
    errors = [p.error for p in pairs]
    absolute = [abs(e) for e in errors]
    return ErrorSummary(len(pairs), statistics.median(absolute), percentile(absolute, 95), statistics.median(errors))


def correction_check(pairs: Sequence[Pair]) -> tuple[int, float, float] | None:
    """Would a per-model correction help on these pairs? Each request in order is estimated as recorded and as
    corrected by the median API/estimate ratio of the same model's *earlier* requests (bounded), so nothing is
    judged on the data it learned from. Returns (requests judged, median |error| as recorded, corrected), or None
    when no model has two requests."""
    low, high = CORRECTION_BOUNDS
    seen: dict[str, list[float]] = {}
    raw: list[float] = []
    corrected: list[float] = []
    for p in pairs:
        earlier = seen.setdefault(p.model, [])
        if earlier and p.estimated > 0:
            ratio = min(high, max(low, statistics.median(earlier)))
            raw.append(abs(p.error))
            corrected.append(abs(p.estimated * ratio - p.api) / p.api)
        if p.estimated > 0:
            earlier.append(p.api / p.estimated)
    if not raw:
        return None
    return len(raw), statistics.median(raw), statistics.median(corrected)


def read_session(path: Path) -> SessionStats:
    """The pairs and compactions of one session file (only usage, compaction and session lines are decoded; a
    damaged line is skipped, as the reader salvages)."""
    usage = msgspec.json.Decoder(UsageRecord)
    compaction = msgspec.json.Decoder(CompactionRecord)
    rating = msgspec.json.Decoder(CompactionRatingRecord)
    head = msgspec.json.Decoder(SessionRecord)
    stats = SessionStats(path.stem, None, "")
    with open(path, "rb") as f:
        for line in f:
            try:
                if b'"type":"usage"' in line:
                    u = usage.decode(line)
                    if u.source == "api" and u.estimated_token_count is not None and u.prompt_token_count > 0:
                        stats.pairs.append(Pair(u.prompt_token_count, u.estimated_token_count, stats.model))
                elif b'"type":"compaction"' in line:
                    c = compaction.decode(line)
                    stats.compactions.append(
                        Compaction(
                            c.time, c.trigger, c.status, c.original_token_count, c.new_token_count, c.id, c.edited
                        )
                    )
                elif b'"type":"compactionRating"' in line:
                    r = rating.decode(line)
                    for rated in stats.compactions:
                        if rated.id == r.compaction_id:
                            rated.rating, rated.note = r.rating, r.note
                elif b'"type":"session"' in line and not stats.model:
                    s = head.decode(line)
                    stats.session_id, stats.title, stats.model = s.session_id, s.title, s.model
                elif b'"type":"rename"' in line:
                    stats.title = msgspec.json.decode(line).get("title", stats.title)
            except msgspec.DecodeError:
                continue
    return stats


# ---------------------------------------------------------------- the command


def add_parser(actions: Any, common: Any, bad_id: Any) -> None:
    """Register `sessions stats [ID]` (`common` adds --project and --json; `bad_id` refuses what cannot be an id,
    as the other sessions commands do)."""
    stats = actions.add_parser(
        "stats", help="the token estimate's error against the API's counts, and the compactions, per session"
    )
    stats.add_argument("session_id", metavar="ID", nargs="?", help="one session (id or unique prefix); default: all")
    stats.add_argument("--all", action="store_true", help="the sessions of every project")
    common(stats)
    stats.set_defaults(func=main_sessions_stats, bad_id=bad_id)


def _paths(args: argparse.Namespace) -> list[Path]:
    if getattr(args, "all", False):
        _root, infos = all_sessions()
        return [SessionStore(i.project_root).path(i.session_id) for i in infos]
    store = SessionStore(getattr(args, "project", None) or os.getcwd())
    if args.session_id:
        return [store.path(store.resolve(args.session_id))]
    return [store.path(i.session_id) for i in store.list()]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _error_line(label: str, s: ErrorSummary | None) -> str:
    if s is None:
        return f"{label}  no request with both counts recorded"
    return f"{label}  {s.n} requests  median |error| {_pct(s.median)}  p95 {_pct(s.p95)}  bias {100 * s.bias:+.1f}%"


def report(sessions: Iterable[SessionStats]) -> dict[str, Any]:
    """The numbers the command prints (its --json form)."""
    sessions = list(sessions)
    pairs = [p for s in sessions for p in s.pairs]
    check = correction_check(pairs)
    return {
        "sessions": [
            {
                "sessionId": s.session_id,
                "title": s.title,
                "model": s.model,
                "estimateError": msgspec.to_builtins(summarize(s.pairs)),
                "compactions": [msgspec.to_builtins(c) for c in s.compactions],
            }
            for s in sessions
        ],
        "overall": msgspec.to_builtins(summarize(pairs)),
        "correctionCheck": None if check is None else {"judged": check[0], "recorded": check[1], "corrected": check[2]},
        "ratings": ratings([c for s in sessions for c in s.compactions]),
    }


def ratings(compactions: Sequence[Compaction]) -> dict[str, int]:
    """How the user rated the compactions that replaced the history: good, lost something, not rated; and how
    many summaries the user edited before applying them."""
    compressed = [c for c in compactions if c.status == "COMPRESSED"]
    return {
        "good": sum(c.rating == "good" for c in compressed),
        "lost": sum(c.rating == "lost" for c in compressed),
        "unrated": sum(c.rating is None for c in compressed),
        "edited": sum(c.edited for c in compressed),
    }


def main_sessions_stats(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    bad_id = getattr(args, "bad_id", None)
    if args.session_id and bad_id is not None and (code := bad_id(args.session_id)) is not None:
        return int(code)
    try:
        sessions = [read_session(p) for p in _paths(args) if p.exists()]
    except (RecordingError, OSError) as exc:
        print(f"sidecar: {exc}", file=sys.stderr)
        return 1
    data = report(sessions)
    if args.json:
        out.write(msgspec.json.encode(data).decode() + "\n")
        return 0
    if not sessions:
        out.write("No recorded sessions.\n")
        return 0
    out.write("Token estimate against the API's count (error = (estimate − API count) / API count):\n")
    for s in sessions:
        out.write(_error_line(f"  {s.session_id[:8]}  {(s.title or '(no title)')[:40]:<40}", summarize(s.pairs)) + "\n")
    pairs = [p for s in sessions for p in s.pairs]
    if not args.session_id:
        out.write(_error_line(f"  {'overall':<50}", summarize(pairs)) + "\n")
    check = data["correctionCheck"]
    if check is not None:
        out.write(
            f"A per-model correction learned from earlier requests would change the median |error| from "
            f"{_pct(check['recorded'])} to {_pct(check['corrected'])} ({check['judged']} requests judged).\n"
        )
    compactions = [(s, c) for s in sessions for c in s.compactions]
    out.write("Compactions:\n" if compactions else "No compactions.\n")
    for s, c in compactions:
        change = f" ({100 * (c.after - c.before) / c.before:+.0f}%)" if c.before else ""
        out.write(
            f"  {s.session_id[:8]}  {c.time[:19].replace('T', ' ')}  {c.trigger:<6}  {c.status}  "
            f"{c.before:,} → {c.after:,} tokens{change}{_rated(c)}\n"
        )
    rated = data["ratings"]
    if compactions:
        out.write(
            f"Ratings: {rated['good']} good, {rated['lost']} lost something, {rated['unrated']} not rated "
            f"(of the compactions that replaced the history; {rated['edited']} with an edited summary).\n"
        )
    return 0


def _rated(c: Compaction) -> str:
    edited = "  edited" if c.edited else ""
    if c.rating is None:
        return edited
    said = "good" if c.rating == "good" else "lost something"
    return f"{edited}  rated {said}" + (f": {c.note}" if c.note else "")


def overall_error(paths: Iterable[Path]) -> ErrorSummary | None:
    """The estimate's error over every recorded pair in these session files (the doctor's row)."""
    return summarize([p for path in paths for p in read_session(path).pairs])
