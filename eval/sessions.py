"""Coding-agent session segments in the benchmark generator's shapes, with the planted facts put in place."""

from __future__ import annotations

from typing import Any

from bench.generator import _Source, turn  # the benchmarks' deterministic generator: same shapes, same corpus
from eval.facts import Planted
from sidecar.core.history import Content, parse_contents

#: Turns per segment (each: a prompt, 0-3 tool rounds, a reply) and the size caps that keep the eval quick.
TURNS_PER_SEGMENT = 10
TURN_CHARS = 6_000
MAX_OUTPUT = 3_000

FIRST_PROMPT = (
    "We are working on the ingestion service in /work/app: the importer, the exporter and the fetcher. "
    "Read the code first, then we will fix the failing tests one by one."
)
PROBE_PROMPT = "Continue with the next step."


def _tool_round(name: str, args: dict[str, Any], output: str, call_id: str) -> list[dict[str, Any]]:
    call = {"functionCall": {"name": name, "args": args, "id": call_id}}
    response = {"functionResponse": {"name": name, "id": call_id, "response": {"output": output}}}
    return [{"role": "model", "parts": [call]}, {"role": "user", "parts": [response]}]


def segment(seed: int, number: int, planted: Planted) -> list[Content]:
    """Segment `number` of session `seed`: TURNS_PER_SEGMENT generated turns, the facts planted for this segment
    inside them (a user fact opens its turn's prompt, a tool fact is an extra tool round of its turn). Starts with
    a user message and ends with a model reply, so it can follow any finished turn."""
    src = _Source(seed * 1000 + number)
    turns = [turn(src, TURN_CHARS, MAX_OUTPUT) for _ in range(TURNS_PER_SEGMENT)]
    for index, (seg, where, kind, payload) in enumerate(planted.messages):
        if seg != number:
            continue
        contents = turns[min(int(where * TURNS_PER_SEGMENT), TURNS_PER_SEGMENT - 1)]
        if kind == "user":
            prompt = contents[0]["parts"][0]
            prompt["text"] = f"{payload}\n\n{prompt['text']}"
        else:
            name, args, output = payload
            contents[1:1] = _tool_round(name, args, output, f"eval-{number}-{index}")
    return parse_contents(c for t in turns for c in t)
