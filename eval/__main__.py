"""`python -m eval` (`make eval`): compaction quality on the fake Gemini, and on the real model when one is set up."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.facts import FACT_TYPES
from eval.report import SHOWN_ROUNDS, estimate_error, estimate_markdown, markdown, survival, to_json
from eval.runner import EvalClient, SessionResult, client_request, run_session
from eval.strategies import STRATEGIES, Strategy, by_name
from sidecar.config.settings import Settings
from sidecar.gemini.client import ClientConfig, ModelClient

RESULTS = Path(__file__).resolve().parent / "results"


def _args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m eval", description=__doc__)
    parser.add_argument("--sessions", type=int, default=4, help="sessions (seeds) per strategy (default 4)")
    parser.add_argument("--rounds", type=int, default=5, help="compaction rounds per session (default 5)")
    names = ", ".join(s.name for s in STRATEGIES)
    parser.add_argument("--strategy", action="append", dest="strategies", help=f"only these ({names})")
    real = parser.add_mutually_exclusive_group()
    real.add_argument("--real", action="store_true", help="also run on the real model (needs a key or Vertex AI)")
    real.add_argument("--fake-only", action="store_true", help="never call the real model, even with a key set")
    parser.add_argument("--real-sessions", type=int, default=2, help="sessions per strategy on the real model")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"results folder (default {RESULTS})")
    return parser.parse_args(argv)


def real_configured() -> bool:
    """A real backend is set up (GEMINI_API_KEY / GOOGLE_API_KEY, or Vertex AI), as the sidecar itself reads it."""
    from sidecar.gemini import routes

    return routes.resolve(Settings()) is not None


async def _fake_runs(strategies: list[Strategy], sessions: int, rounds: int) -> list[SessionResult]:
    from sidecar.fakegemini import FakeGemini

    fake = FakeGemini().start()
    client = ModelClient(
        ClientConfig(
            api_key="eval-key", base_url=fake.url, timeout_ms=120_000, retry_attempts=0, retry_initial_delay_ms=1
        )
    )

    async def source() -> ModelClient:
        return client

    def at_the_fake(_client: EvalClient) -> dict[str, Any]:
        chat = [r for r in fake.requests() if r.kind == "stream" and not r.summary]
        body: dict[str, Any] = chat[-1].body
        return body

    results = []
    try:
        for strategy in strategies:
            for seed in range(1, sessions + 1):
                fake.reset()
                results.append(await run_session(seed, strategy, rounds, source, at_the_fake))
    finally:
        await client.aclose()
        fake.stop()
    return results


async def _real_runs(strategies: list[Strategy], sessions: int, rounds: int) -> list[SessionResult]:
    from sidecar.gemini.backend import Backend
    from sidecar.session import Session

    backend = Backend(Session(settings=Settings()), lambda text: print(text, file=sys.stderr))

    async def source() -> ModelClient:
        return await backend.client(why="the compaction eval")

    results = []
    try:
        for strategy in strategies:
            for seed in range(1, sessions + 1):
                print(f"real model: {strategy.name}, session {seed}", file=sys.stderr)
                results.append(await run_session(seed, strategy, rounds, source, client_request, questions=True))
    finally:
        await backend.aclose()
    return results


def write(out: Path, name: str, text: str, data: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.md").write_text(text)
    (out / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = _args(argv)
    # The pipeline logs what it does (e.g. "keeping pass 1's snapshot" for every no-verify compaction): not news here.
    logging.getLogger("sidecar").setLevel(logging.ERROR)
    try:
        strategies = by_name(args.strategies)
    except ValueError as exc:
        print(f"eval: {exc}", file=sys.stderr)
        return 2
    rounds = list(range(1, args.rounds + 1))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    started = time.monotonic()
    fake = asyncio.run(_fake_runs(strategies, args.sessions, args.rounds))
    meta = {
        "time": stamp,
        "sessions": args.sessions,
        "rounds": args.rounds,
        "strategies": [{"name": s.name, "description": s.description} for s in strategies],
    }
    text = [
        f"# Compaction eval, {stamp}",
        "",
        f"{args.sessions} sessions per strategy, {args.rounds} rounds of compaction each. Each cell: the facts planted "
        "before the first compaction that the model is sent (verbatim or restated with their exact values) after "
        "that round. Strategies: " + "; ".join(f"**{s.name}**: {s.description}" for s in strategies) + ".",
        "",
        markdown(survival(fake), rounds, "Fake Gemini (the pipeline with the fake's deterministic summarizer)"),
        "",
        estimate_markdown(estimate_error(fake), "Token estimate against the fake's count (JSON bytes / 4)"),
    ]
    data = {"fake": to_json(fake, meta)}
    use_real = args.real or (not args.fake_only and real_configured())
    if use_real:
        real = asyncio.run(_real_runs(strategies, args.real_sessions, args.rounds))
        text += [
            "",
            markdown(survival(real), rounds, "Real model: sent to it (deterministic probes)"),
            "",
            markdown(
                survival(real, answers=True),
                rounds,
                "Real model: answered correctly (exact-match rules; printed, never asserted)",
                mark_guaranteed=False,
            ),
            "",
            estimate_markdown(estimate_error(real), "Token estimate against the real API's promptTokenCount"),
        ]
        data["real"] = to_json(real, {**meta, "sessions": args.real_sessions})
    else:
        text += ["", "No real model configured (GEMINI_API_KEY, GOOGLE_API_KEY or Vertex AI): fake only."]
    text += [
        "",
        f"Took {time.monotonic() - started:.1f} s. Rounds shown: "
        f"{', '.join(str(r) for r in SHOWN_ROUNDS if r in rounds)} (all in the JSON). Types: "
        f"{', '.join(FACT_TYPES)}.",
    ]
    report = "\n".join(text) + "\n"
    write(args.out, stamp, report, data)
    write(args.out, "latest", report, data)
    print(report)
    print(f"Written to {args.out}/{stamp}.md and .json (and latest.*).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
