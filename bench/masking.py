"""Tool-output masking measured: request-prefix stability and billed tokens over a session, and the per-request cost."""

# Run: .venv/bin/python -m bench.masking [--turns 30] [--seed 1]
# A generated coding-agent session (bench/generator.py's turns: reads and shell outputs of 1-200 KB) is replayed request
# by request through the masking code the chat service runs (ToolOutputMasker.decide/mask, Conversation.replace_items)
# with masking off, with the reference's rule alone (paybackRequests 0), and with the default cache rule. Compaction is
# left out: this isolates what masking does to the requests.

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from bench.generator import _Source, conversation, turn
from sidecar.compaction.masking import ToolOutputMasker
from sidecar.compaction.tool_outputs import ToolOutputSaver
from sidecar.config.settings import ToolOutputMasking
from sidecar.core.conversation import Conversation
from sidecar.core.history import Content, Part

MIN_CACHEABLE = 1_024  # Gemini 2.5 Flash's minimum implicit-cache prefix, in tokens


def _contents(raw: list[dict[str, Any]]) -> list[Content]:
    return msgspec.convert(raw, list[Content])


def session(turns: int, seed: int) -> list[list[Content]]:
    src = _Source(seed)
    return [_contents(turn(src)) for _ in range(turns)]


def run(turns_list: list[list[Content]], settings: ToolOutputMasking, folder: Path) -> dict[str, float]:
    conv = Conversation("bench")
    masker = ToolOutputMasker(ToolOutputSaver(folder))
    previous: list[bytes] = []
    previous_tokens: list[int] = []
    requests = same_prefix = maskings = 0
    sent = billed = 0.0

    def request() -> None:
        nonlocal previous, previous_tokens, requests, same_prefix, maskings, sent, billed
        chosen = masker.decide(conv, settings)
        if chosen:
            masking = masker.mask(conv, chosen)
            if masking is not None:
                conv.replace_items(masking.replacements)
                maskings += 1
        wire = list(conv.wire())
        tokens = [conv.content_tokens(i) for i in range(len(wire))]
        common = 0
        while common < min(len(previous), len(wire)) and previous[common] == wire[common]:
            common += 1
        if previous:
            same_prefix += common == len(previous)
        cached = sum(tokens[:common])
        cached = cached if cached >= MIN_CACHEABLE else 0
        total = sum(tokens)
        sent += total
        billed += (total - cached) + 0.25 * cached
        requests += 1
        previous, previous_tokens = wire, tokens

    for contents in turns_list:
        for content in contents:
            conv.append(content)
            if content.role == "user":  # the user's message and every tool response is a request
                request()
    return {
        "requests": requests,
        "same_prefix": same_prefix / max(1, requests - 1),
        "sent": sent,
        "billed": billed,
        "maskings": maskings,
        "final": conv.estimated_tokens(),
    }


def decide_cost(tokens: int, folder: Path, repeats: int = 20) -> tuple[float, float, int]:
    """(first decision ms, later decisions ms median, history items) at a history of about `tokens`."""
    conv = Conversation("bench", _contents(conversation(tokens)))
    conv.append(Content(role="user", parts=[Part(text="next")]))
    masker = ToolOutputMasker(ToolOutputSaver(folder))
    settings = ToolOutputMasking(min_prunable_tokens=10**12)  # decide every time, never mask: the steady state
    start = time.perf_counter()
    masker.decide(conv, settings)
    first = (time.perf_counter() - start) * 1000
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        masker.decide(conv, settings)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return first, times[len(times) // 2], len(conv)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--history", type=int, default=1_000_000, help="tokens of history for the timing")
    args = parser.parse_args()
    turns_list = session(args.turns, args.seed)
    variants = {
        "off": ToolOutputMasking(enabled=False),
        "reference rule (paybackRequests 0)": ToolOutputMasking(payback_requests=0),
        "default (paybackRequests 4)": ToolOutputMasking(),
    }
    print(f"{args.turns} turns, seed {args.seed}")
    print(
        f"{'masking':38} {'requests':>8} {'same prefix':>11} {'maskings':>8} {'sent':>11} {'billed eq.':>11} "
        f"{'last':>9}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, settings in variants.items():
            r = run(turns_list, settings, Path(tmp) / name.split()[0])
            print(
                f"{name:38} {r['requests']:>8} {r['same_prefix']:>10.0%} {r['maskings']:>8} {r['sent']:>11,.0f} "
                f"{r['billed']:>11,.0f} {r['final']:>9,}"
            )
        first, later, items = decide_cost(args.history, Path(tmp) / "timing")
    print(f"decide() at {args.history:,} tokens ({items} items): first {first:.1f} ms, then {later:.2f} ms (median)")


if __name__ == "__main__":
    main()
