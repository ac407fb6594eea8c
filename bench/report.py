"""The results table (markdown) and JSON files, and the copy of the latest table in docs/performance.md."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.common import REPO, RESULTS, Row

DOC = REPO / "docs" / "performance.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows: list[Row], meta: dict[str, Any]) -> str:
    """The table, then one note per row with what exactly was measured."""
    lines = [
        f"Run {meta['started']} · {meta['duration_s']:.0f} s · commit `{meta['commit']}`"
        f"{' (+ uncommitted changes)' if meta['dirty'] else ''} · Python {meta['python']} · node {meta['node']} · "
        f"{meta['cpus']} CPUs · load average {meta['load_before']} before, {meta['load_after']} after",
        "",
        "| # | What | Measured (medians) | Target | Verdict |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        verdict = f"**{row.verdict}**" if row.verdict.startswith("MISS") else row.verdict
        lines.append(f"| {row.target} | {_cell(row.what)} | {_cell(row.measured)} | {_cell(row.limit)} | {verdict} |")
    lines += ["", "Details:", ""]
    lines += [f"- **{row.target}** — {row.detail}" for row in rows if row.detail]
    if meta.get("errors"):
        lines += ["", "Benchmarks that failed to run:", ""]
        lines += [f"- {name}: {error}" for name, error in meta["errors"].items()]
    return "\n".join(lines) + "\n"


def _plain(value: Any) -> Any:
    """JSON-safe: NaN becomes null, tuples lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def write(rows: list[Row], meta: dict[str, Any], raw: dict[str, Any], *, update_doc: bool) -> Path:
    """bench/results/<stamp>.{md,json} and latest.{md,json}; the table goes into docs/performance.md too."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    table = markdown(rows, meta)
    data = _plain({"meta": meta, "rows": [asdict(r) for r in rows], "raw": raw})
    stamp = meta["started"].replace(":", "").replace("-", "")
    for name in (stamp, "latest"):
        (RESULTS / f"{name}.md").write_text(table)
        (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=1, ensure_ascii=False))
    if update_doc:
        update_document(table)
    return RESULTS / f"{stamp}.md"


def update_document(table: str) -> None:
    """Replace the text between the bench markers of docs/performance.md (the rest is written by hand)."""
    text = DOC.read_text() if DOC.exists() else f"# Performance\n\n{START}\n{END}\n"
    if START not in text or END not in text:
        text = text.rstrip("\n") + f"\n\n{START}\n{END}\n"
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{START}\n{table}{END}{tail}")
