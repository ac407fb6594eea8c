"""Time our split point + token estimate against the reference under node on a ~1M-token history (not a test).

Run: .venv/bin/python tests/parity/measure_speed.py [--chars 4000000] [--repeat 15]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from sidecar.core.compaction import find_split_point, measure_content  # noqa: E402
from sidecar.core.history import dump_contents, parse_contents  # noqa: E402
from sidecar.core.tokens import estimate_history_tokens  # noqa: E402

WORDS = "def return self import value result error config path test data the of and to in for is".split()  # noqa: SIM905
CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 2000)]


def prose(r: random.Random, n: int) -> str:
    """About n characters of code-like text, ~10% of them CJK."""
    out: list[str] = []
    size = 0
    while size < n:
        if r.random() < 1 / 3:  # ~12 CJK characters against ~55 ASCII ones in the other pieces
            piece = "".join(r.choices(CJK, k=r.randint(4, 20)))
        else:
            piece = " ".join(r.choices(WORDS, k=r.randint(4, 20))) + r.choice(" \n")
        out.append(piece)
        size += len(piece)
    return "".join(out)[:n]


def build_history(total_chars: int, seed: int = 7) -> list[dict[str, Any]]:
    r = random.Random(seed)
    history: list[dict[str, Any]] = []
    chars = 0
    n = 0
    while chars < total_chars:
        n += 1
        ask = prose(r, r.randint(100, 2000))
        output = prose(r, int(min(200_000, 1000 * 10 ** (r.random() * 2.3))))
        reply = prose(r, r.randint(100, 3000))
        history += [
            {"role": "user", "parts": [{"text": ask}]},
            {"role": "model", "parts": [{"functionCall": {"name": "run", "args": {"cmd": f"grep -n x{n}", "t": 1.5}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "run", "response": {"output": output}}}]},
            {"role": "model", "parts": [{"text": reply}]},
        ]
        chars += len(ask) + len(output) + len(reply)
    return history


def build_text_history(total_chars: int, seed: int = 3) -> list[dict[str, Any]]:
    """Plain conversation: long texts (500 chars to 99k, ~10% CJK), every character through the full heuristic."""
    r = random.Random(seed)
    history: list[dict[str, Any]] = []
    chars = 0
    while chars < total_chars:
        text = prose(r, int(min(99_000, 500 * 10 ** (r.random() * 2.3))))
        history.append({"role": "model" if len(history) % 2 else "user", "parts": [{"text": text}]})
        chars += len(text)
    return history


def timings(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(min, median) wall-clock milliseconds; the minimum is the figure least disturbed by other load."""
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t0) * 1000)
    return min(runs), statistics.median(runs)


def measure_all(contents: list[Any]) -> tuple[int, int]:
    """What a server does once on loading a history: measure every content, then split and add up."""
    measures = [measure_content(c) for c in contents]
    return find_split_point(contents, 0.7, [m.json_length for m in measures]), sum(m.quarters for m in measures) // 4


def run_reference(wire: list[dict[str, Any]], repeat: int) -> dict[str, Any]:
    package = subprocess.run(
        [str(REPO / "tools" / "fetch-reference.sh")], capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    with tempfile.TemporaryDirectory() as tmp:
        request = Path(tmp) / "bench.json"
        request.write_text(json.dumps({"bench": {"history": wire, "repeat": repeat}}))
        out = subprocess.run(
            ["node", str(Path(__file__).with_name("reference.mjs")), package, str(request)],
            capture_output=True,
            text=True,
            check=True,
        )
    bench: dict[str, Any] = json.loads(out.stdout)["bench"]
    return bench


def scenario(label: str, raw: list[dict[str, Any]], repeat: int) -> None:
    contents = parse_contents(raw)
    wire = dump_contents(contents)
    json_chars = len(json.dumps(wire, ensure_ascii=False, separators=(",", ":")))
    tokens = estimate_history_tokens(contents)
    print(f"\n== {label}: {len(contents)} contents, {json_chars:,} JSON chars, estimate {tokens:,} tokens")

    def ours_cold() -> object:
        return find_split_point(contents, 0.7), estimate_history_tokens(contents)

    measures = [measure_content(c) for c in contents]

    def ours_cached() -> object:
        return find_split_point(contents, 0.7, [m.json_length for m in measures]), sum(
            m.quarters for m in measures
        ) // 4

    # Fresh structs for each cold run: nothing cached on the str objects either.
    fresh = [parse_contents(raw) for _ in range(repeat)]
    cold_runs = []
    for copy in fresh:
        t0 = time.perf_counter()
        find_split_point(copy, 0.7), estimate_history_tokens(copy)
        cold_runs.append((time.perf_counter() - t0) * 1000)
    ours = {
        "structs, first touch": (min(cold_runs), statistics.median(cold_runs)),
        "structs, again": timings(ours_cold, repeat),
        "dicts": timings(lambda: (find_split_point(raw, 0.7), estimate_history_tokens(raw)), repeat),
        "measure all, then split + sum": timings(lambda: measure_all(contents), repeat),
        "per-content measures cached": timings(ours_cached, repeat),
        "measure one appended content": timings(lambda: measure_content(contents[-1]), repeat),
    }
    assert ours_cold() == ours_cached()

    bench = run_reference(wire, repeat)
    assert (bench["split"]["value"], bench["estimate"]["value"]) == ours_cold(), "results differ!"
    ref_min = bench["split"]["min"] + bench["estimate"]["min"]
    ref_median = bench["split"]["median"] + bench["estimate"]["median"]
    print(
        f"reference (split + estimate)          min {ref_min:7.2f} ms  median {ref_median:7.2f} ms"
        f"  (split {bench['split']['min']:.1f} + estimate {bench['estimate']['min']:.1f}; first run"
        f" {bench['split']['first'] + bench['estimate']['first']:.1f})"
    )
    for name, (fastest, median) in ours.items():
        print(
            f"ours, {name:32s} min {fastest:7.2f} ms  median {median:7.2f} ms"
            f"  = {fastest / ref_min:.2f}x / {median / ref_median:.2f}x of the reference"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chars", type=int, default=4_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"python {sys.version.split()[0]}, node {version}; {args.repeat} runs each")
    scenario("tool outputs 1 KB-200 KB", build_history(args.chars), args.repeat)
    scenario("long texts", build_text_history(args.chars), args.repeat)


if __name__ == "__main__":
    main()
