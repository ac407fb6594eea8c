"""Survival by fact type and round, per strategy: the markdown table and the JSON under eval/results/."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from eval.facts import FACT_TYPES, GUARANTEED, NOT_SHIPPED
from eval.probes import SURVIVED
from eval.runner import SessionResult
from sidecar.recording.stats import Pair, correction_check, summarize

#: The rounds the tables show (every round is in the JSON).
SHOWN_ROUNDS = (1, 3, 5)


def survival(results: Sequence[SessionResult], *, answers: bool = False) -> dict[str, Any]:
    """strategy -> fact type -> round -> {"kept", "of", "stale"} over the facts planted before the first compaction
    (so at round k each has been through k compactions); `answers`: the real model's exact-match answers instead."""
    table: dict[str, Any] = {}
    for result in results:
        first = {f.id: f.type for f in result.facts if f.segment == 0}
        per_type = table.setdefault(result.strategy, {})
        for rnd in result.rounds:
            got = rnd.answers if answers else {k: v in SURVIVED for k, v in rnd.verdicts.items()}
            if got is None:
                continue
            for fact_id, kind in first.items():
                cell = per_type.setdefault(kind, {}).setdefault(rnd.round, {"kept": 0, "of": 0, "stale": 0})
                cell["of"] += 1
                cell["kept"] += int(bool(got.get(fact_id)))
                cell["stale"] += int(rnd.verdicts.get(fact_id) == "stale")
    return table


def _cell(cell: dict[str, int] | None) -> str:
    if not cell or not cell["of"]:
        return "–"
    text = f"{100 * cell['kept'] / cell['of']:.0f}% ({cell['kept']}/{cell['of']})"
    return text + (f", {cell['stale']} stale" if cell["stale"] else "")


def markdown(table: dict[str, Any], rounds: Sequence[int], title: str, *, mark_guaranteed: bool = True) -> str:
    """One row per fact type, one column per strategy and round (`mark_guaranteed`: label the types whose presence
    in the request is ours to guarantee; not for answers, which the model may still get wrong)."""
    strategies = list(table)
    shown = [r for r in SHOWN_ROUNDS if r in rounds] or list(rounds)
    head = ["fact type", *(f"{s}, round {r}" for s in strategies for r in shown)]
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for kind in FACT_TYPES:
        if kind in NOT_SHIPPED:
            label = f"{kind} (not shipped)"
            cells = ["n/a"] * (len(head) - 1)
        else:
            label = kind + (" (guaranteed)" if mark_guaranteed and kind in GUARANTEED else "")
            cells = [_cell(table[s].get(kind, {}).get(r)) for s in strategies for r in shown]
        lines.append("| " + " | ".join([label, *cells]) + " |")
    return "\n".join(lines)


def estimate_error(results: Sequence[SessionResult]) -> dict[str, Any]:
    """The token estimate against the counts of the API the run talked to, and whether a per-model correction
    learned from earlier requests would have helped (sidecar/recording/stats.py, as `sidecar sessions stats`)."""
    pairs = [Pair(api, est, "run") for r in results for api, est in r.estimates]
    summary = summarize(pairs)
    check = correction_check(pairs)
    return {
        "error": None if summary is None else asdict(summary),
        "correction": None if check is None else {"judged": check[0], "recorded": check[1], "corrected": check[2]},
    }


def estimate_markdown(data: dict[str, Any], title: str) -> str:
    """Two lines on the estimate's error and the correction check."""
    error, correction = data["error"], data["correction"]
    if error is None:
        return f"### {title}\n\nNo request with both counts."
    text = (
        f"### {title}\n\n{error['n']} requests: median |error| {100 * error['median']:.1f}%, p95 "
        f"{100 * error['p95']:.1f}%, bias {100 * error['bias']:+.1f}% (error = (estimate − count) / count)."
    )
    if correction is not None:
        text += (
            f" A correction learned from earlier requests (bounded 0.5–2×) would give a median |error| of "
            f"{100 * correction['corrected']:.1f}% instead of {100 * correction['recorded']:.1f}% "
            f"({correction['judged']} requests judged)."
        )
    return text


def to_json(results: Sequence[SessionResult], meta: dict[str, Any]) -> dict[str, Any]:
    """Everything: the run's settings, the survival tables, and every session's facts and per-round verdicts."""
    return {
        **meta,
        "factTypes": list(FACT_TYPES),
        "notShipped": NOT_SHIPPED,
        "survival": survival(results),
        "answers": survival(results, answers=True),
        "estimate": estimate_error(results),
        "sessions": [
            {
                "seed": r.seed,
                "strategy": r.strategy,
                "summaryCalls": r.summary_calls,
                "estimates": r.estimates,
                "warnings": r.warnings,
                "facts": [asdict(f) for f in r.facts],
                "rounds": [asdict(x) for x in r.rounds],
            }
            for r in results
        ],
    }
