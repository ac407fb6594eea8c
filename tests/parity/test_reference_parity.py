"""Our split point, token estimate and function-response budget against the reference, on random inputs."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest
from conftest import RunReference
from parity_data import EMOJI, LONE, Gen

from sidecar.compaction.tool_outputs import ToolOutputSaver, tool_output_file_name
from sidecar.core.compaction import (
    find_split_point,
    format_truncated_tool_output,
    measure_content,
    truncate_history_to_budget,
)
from sidecar.core.history import dump_contents, parse_contents
from sidecar.core.jsonlen import js_json_dumps, js_json_length
from sidecar.core.models import compression_model_alias, token_limit
from sidecar.core.tokens import estimate_content_tokens, estimate_history_tokens, estimate_tokens

pytestmark = pytest.mark.slow  # about 30 s: thousands of histories through both implementations

SEED = 20260821
HISTORIES = 3000
BIG_HISTORIES = 120
CPTS = [4, 4, 4, 4, 4, 4.0, 1, 2, 3, 2.5, 8, 0.7]


def _ours(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except ValueError as e:
        return {"error": str(e)}


def _same_error(ours: Any, theirs: Any) -> bool:
    """Our error message extends the reference's one with the offending value."""
    return isinstance(ours, dict) and isinstance(theirs, dict) and ours["error"].startswith(theirs["error"])


def _flat(history: list[Any]) -> list[Any]:
    return [p for c in history for p in (c.parts if hasattr(c, "parts") else c.get("parts") or [])]


def _utf16(value: Any) -> Any:
    """A string as UTF-16: a surrogate pair held as two code points equals the joined character."""
    return value.encode("utf-16-le", "surrogatepass") if isinstance(value, str) else value


def _mismatches(label: str, ours: list[Any], theirs: list[Any]) -> list[str]:
    assert len(ours) == len(theirs), label
    return [
        f"{label}[{i}]: ours={o!r} reference={t!r}"
        for i, (o, t) in enumerate(zip(ours, theirs, strict=True))
        if _utf16(o) != _utf16(t) and not _same_error(o, t)
    ]


def _evaluate(contents: list[Any], fraction: float, cpt: float, cached: bool) -> dict[str, Any]:
    """What reference.mjs reports per history, computed by us (with cached per-content sizes or without)."""
    if cached:  # what a server keeps per content
        measures = [measure_content(c) for c in contents]
        lengths = [m.json_length for m in measures]
        per_content = [m.quarters // 4 for m in measures]
    else:
        lengths = [js_json_length(c) for c in contents]
        per_content = [estimate_content_tokens(c) for c in contents]
    return {
        "lengths": lengths,
        "split": _ours(find_split_point, contents, fraction, lengths if cached else None),
        "estimate": estimate_tokens(_flat(contents), cpt),
        "perContent": per_content,
    }


def test_split_point_and_estimate_match_reference(reference: RunReference) -> None:
    gen = Gen(SEED)
    requests, ours = [], []
    structs = 0
    for i in range(HISTORIES):
        raw = gen.history(raw=i % 2 == 0)
        fraction, cpt = gen.fraction(), gen.r.choice(CPTS)
        request: dict[str, Any] = {"contents": raw, "fraction": fraction, "cpt": cpt, "dumped": None}
        mine = {"raw": _evaluate(raw, fraction, cpt, cached=False), "dumped": None}
        try:
            contents = parse_contents(raw)
        except msgspec.ValidationError:
            contents = None
        if contents is not None:
            # The struct path, against the reference fed the structs' wire JSON.
            structs += 1
            dumped = dump_contents(contents)
            mine["dumped"] = _evaluate(contents, fraction, cpt, cached=True)
            if dumped != raw:
                request["dumped"] = dumped
            else:
                mine["raw_again"] = mine["dumped"]
            if cpt == 4 and estimate_history_tokens(contents) != mine["dumped"]["estimate"]:
                raise AssertionError(f"history {i}: the running total differs from the flat estimate")
        requests.append(request)
        ours.append(mine)
    bad_fractions = [0, 1, -1, 2, 1.5, -1e-300]
    splits = [{"contents": [], "fraction": f} for f in bad_fractions]

    theirs = reference({"histories": requests, "split": splits})

    problems: list[str] = []
    for i, (mine, result) in enumerate(zip(ours, theirs["histories"], strict=True)):
        pairs = [("raw", mine["raw"], result["raw"])]
        if mine["dumped"] is not None:
            pairs.append(("struct", mine["dumped"], result["dumped"] or result["raw"]))
        for label, a, b in pairs:
            for key in ("lengths", "split", "estimate", "perContent"):
                if a[key] != b[key] and not _same_error(a[key], b[key]):
                    problems.append(f"history {i} {label} {key}: ours={a[key]!r} reference={b[key]!r}")
    problems += _mismatches("split", [_ours(find_split_point, [], f) for f in bad_fractions], theirs["split"])
    assert not problems, f"{len(problems)} mismatches, first ones:\n" + "\n".join(problems[:8])
    assert structs > HISTORIES // 2


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_truncation_matches_reference(reference: RunReference, tmp_path: Path) -> None:
    gen = Gen(SEED + 1)
    histories = [gen.big_history() for _ in range(BIG_HISTORIES)]
    thresholds = [
        gen.r.choice([40_000, 1, 7, 1000, 12_345, 39_999, 60_000, gen.r.randint(1, 80_000)]) for _ in histories
    ]
    dumped = [dump_contents(parse_contents(h)) for h in histories]

    requests, ours_dicts, ours_structs = [], [], []
    for k, (h, threshold) in enumerate(zip(histories, thresholds, strict=True)):
        ours_dicts.append(
            truncate_history_to_budget(
                h, tool_output_threshold=threshold, save=ToolOutputSaver(tmp_path / "py" / f"{k:04d}")
            )
        )
        ours_structs.append(
            truncate_history_to_budget(
                parse_contents(h),
                tool_output_threshold=threshold,
                save=ToolOutputSaver(tmp_path / "sp" / f"{k:04d}"),
            )
        )
        requests.append({"history": h, "threshold": threshold, "dir": str(tmp_path / "js" / f"{k:04d}")})
        requests.append({"history": dumped[k], "threshold": threshold, "dir": str(tmp_path / "sj" / f"{k:04d}")})
    theirs = reference({"truncate": requests})["truncate"]

    problems: list[str] = []
    truncated = 0
    for k in range(len(histories)):
        for ours, result, mine, js in (
            (ours_dicts[k], theirs[2 * k], "py", "js"),
            (ours_structs[k], theirs[2 * k + 1], "sp", "sj"),
        ):
            text = result["history"].replace(str(tmp_path / js), str(tmp_path / mine))
            if mine == "py":
                same = js_json_dumps(ours) == text
            else:
                # Through JSON text: a surrogate pair held as two code points equals the joined character.
                theirs_contents = parse_contents(json.loads(text))
                same = js_json_dumps(ours) == js_json_dumps(theirs_contents)
            if not same:
                problems.append(f"history {k} ({mine}): truncated histories differ")
            if estimate_history_tokens(ours) != result["tokens"]:
                problems.append(f"history {k} ({mine}): estimate {estimate_history_tokens(ours)} != {result['tokens']}")
            if _files(tmp_path / mine / f"{k:04d}") != _files(tmp_path / js / f"{k:04d}"):
                problems.append(f"history {k} ({mine}): saved tool outputs differ")
            truncated += "Output too large" in text
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems[:8])
    assert truncated > BIG_HISTORIES // 3, "too few histories exercised the truncation"


def test_formatting_names_models_and_json_text_match_reference(reference: RunReference) -> None:
    gen = Gen(SEED + 2)
    r = random.Random(SEED + 2)
    formats = []
    for _ in range(400):
        content = gen.text(r.choice([0, 5, 50, 500, 5000]))
        if r.random() < 0.3:
            content = "".join(r.choices("ab" + EMOJI + LONE, k=r.randint(0, 300)))
        formats.append({"content": content, "file": "/tmp/x/tool-outputs/t_1.txt", "max": r.randint(1, 400)})
    names = [{"tool": gen.text(r.randint(0, 12)), "id": r.randint(1, 10**6)} for _ in range(200)]
    names += [{"tool": t, "id": i} for t, i in [("", 1), ("1", 12), ("Grep", 3), ("a/b\\c", 2), ("😀", 7)]]
    models = [
        "gemini-3-pro-preview", "gemini-3.1-pro-preview", "gemini-3-flash-preview", "gemini-3.5-flash",
        "gemini-3.8-flash", "gemini-3-flash", "none", "gemini-3.1-flash-lite", "gemini-3.5-flash-lite",
        "gemini-2.5-flash-lite", "gemini-2.5-pro", "gemini-2.5-flash", "gemma-4-31b-it", "gemma-4-26b-a4b-it",
        "gemini-3.1-pro-preview-customtools", "auto", "pro", "", "unknown-model",
    ]  # fmt: skip
    values = [gen.json_value() for _ in range(1500)]
    texts = [{"value": v, "indent": r.choice([2, 2, 0, 4])} for v in values[:500]]

    theirs = reference(
        {
            "format": formats,
            "fileName": names,
            "alias": models,
            "limit": models,
            "jsonLength": values,
            "jsonText": texts,
        }
    )
    problems = _mismatches(
        "format",
        [format_truncated_tool_output(f["content"], f["file"], f["max"]) for f in formats],
        theirs["format"],
    )
    problems += _mismatches("fileName", [tool_output_file_name(n["tool"], n["id"]) for n in names], theirs["fileName"])
    problems += _mismatches("alias", [compression_model_alias(m) for m in models], theirs["alias"])
    problems += _mismatches("limit", [token_limit(m) for m in models], theirs["limit"])
    problems += _mismatches("jsonLength", [js_json_length(v) for v in values], theirs["jsonLength"])
    problems += _mismatches("jsonText", [js_json_dumps(t["value"], t["indent"]) for t in texts], theirs["jsonText"])
    assert not problems, f"{len(problems)} mismatches, first ones:\n" + "\n".join(problems[:8])
