"""Target 3: split point + token estimate, ours vs the reference under node, on the same input files, side by side."""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Any

import msgspec

from bench import generator, reference
from bench.common import Row, median, verdict
from sidecar.core.compaction import find_split_point
from sidecar.core.conversation import Conversation
from sidecar.core.history import Content
from sidecar.core.tokens import estimate_history_tokens

RATIO_LIMIT = 0.5
FRACTION = 0.7  # 1 - COMPRESSION_PRESERVE_THRESHOLD, as compaction calls it
_decode = msgspec.json.Decoder(list[Content]).decode


def write_inputs(directory: Path) -> dict[str, Path]:
    """The generated conversations as JSON files (UTF-8), read by both implementations."""
    directory.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, tokens in generator.CONVERSATION_SIZES.items():
        path = directory / f"conversation-{name}.json"
        path.write_bytes(msgspec.json.encode(generator.conversation(tokens)))
        files[name] = path
    return files


def _ours(data: bytes, repeat: int) -> dict[str, Any]:
    """Per run: fresh Content structs decoded from the file (untimed), then split + estimate (timed, ms).
    `again` repeats the call on structs that were already measured once."""
    first, again, cached = [], [], []
    value: tuple[int, int] = (0, 0)
    for _ in range(repeat):
        contents = _decode(data)
        gc.collect()
        start = time.perf_counter()
        value = (find_split_point(contents, FRACTION), estimate_history_tokens(contents))
        first.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        find_split_point(contents, FRACTION), estimate_history_tokens(contents)
        again.append((time.perf_counter() - start) * 1000)
        # What the sidecar does: each content was measured once when it entered the conversation (untimed); the
        # Conversation holds JSON bytes, so the history is decoded first (timed).
        conv = Conversation("bench", contents)
        start = time.perf_counter()
        from_cache = (find_split_point(conv.history, FRACTION, conv.json_sizes()), conv.estimated_tokens())
        cached.append((time.perf_counter() - start) * 1000)
        assert from_cache == value, (from_cache, value)
    return {"value": list(value), "first": first, "again": again, "cached": cached}


def measure(inputs: dict[str, Path], repeat: int, rounds: int = 3) -> dict[str, Any]:
    """`rounds` alternations of (reference, ours), each `repeat` runs per size; the runs are pooled."""
    files = [str(p) for p in inputs.values()]
    ref_runs: dict[str, dict[str, Any]] = {name: {"both": [], "split": [], "estimate": []} for name in inputs}
    our_runs: dict[str, dict[str, Any]] = {name: {"first": [], "again": [], "cached": []} for name in inputs}
    values: dict[str, dict[str, Any]] = {name: {} for name in inputs}
    node = ""
    for _ in range(rounds):
        answer = reference.run({"split": {"files": files, "repeat": repeat}})
        node = answer["node"]
        for name, path in inputs.items():
            got = answer["split"][str(path)]
            for key in ("both", "split", "estimate"):
                ref_runs[name][key] += got["runs"][key]
            values[name]["reference"] = [got["split"], got["estimate"]]
        for name, path in inputs.items():
            ours = _ours(path.read_bytes(), repeat)
            our_runs[name]["first"] += ours["first"]
            our_runs[name]["again"] += ours["again"]
            our_runs[name]["cached"] += ours["cached"]
            values[name]["ours"] = ours["value"]
    return {"reference": ref_runs, "ours": our_runs, "values": values, "node": node}


def rows(result: dict[str, Any]) -> list[Row]:
    out = []
    for name in generator.CONVERSATION_SIZES:
        ref = median(result["reference"][name]["both"])
        first = median(result["ours"][name]["first"])
        again = median(result["ours"][name]["again"])
        cached = median(result["ours"][name]["cached"])
        ratio = cached / ref
        same = result["values"][name]["ours"] == result["values"][name]["reference"]
        split, tokens = result["values"][name]["ours"]
        target = name == "1m"
        out.append(
            Row(
                "3" if target else "3 (info)",
                f"Split point + token estimate, {name.upper()}-token history, vs the reference (node {result['node']})",
                f"{cached:.2f} ms vs {ref:.1f} ms = {ratio:.3f}×; results {'identical' if same else 'DIFFER'}",
                f"≤ {RATIO_LIMIT}×, identical" if target else "info",
                verdict(ratio <= RATIO_LIMIT and same) if target else ("info" if same else "MISS"),
                f"split {split}, estimate {tokens:,} tokens (reference {result['values'][name]['reference']}). "
                f"Ours as the sidecar runs it: the history decoded from the Conversation's cached JSON (as a "
                f"compaction does once, for truncation too), then per-content sizes and estimates cached when each "
                f"content entered the conversation. Cold, on fresh structs decoded from the file: {first:.1f} ms "
                f"({first / ref:.2f}×), again on the same structs {again:.1f} ms; "
                f"{len(result['ours'][name]['first'])} runs. Reference split "
                f"{median(result['reference'][name]['split']):.1f} + estimate "
                f"{median(result['reference'][name]['estimate']):.1f} ms (JIT-warm medians).",
            )
        )
    return out
