"""Command line: `python -m sidecar.fakegemini --port N [--script FILE]` serves until SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

import msgspec

from .fake import FakeGemini
from .faults import parse_steps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sidecar.fakegemini", description=__doc__)
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    ap.add_argument("--script", type=Path, help='JSON file: a list of steps or {"steps": [...]}')
    ap.add_argument("--token-multiplier", type=float, default=1.0, help="scale prompt token counts")
    ap.add_argument("--token-limit", type=int, help="reject prompts above this many tokens (400)")
    ap.add_argument("-v", "--verbose", action="store_true", help="log requests to stderr")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr)

    steps = None
    if args.script is not None:
        try:
            steps = parse_steps(msgspec.json.decode(args.script.read_bytes()))
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            print(f"fake-gemini: cannot load script {args.script}: {exc}", file=sys.stderr)
            return 2
    multiplier = int(args.token_multiplier) if args.token_multiplier.is_integer() else args.token_multiplier
    fake = FakeGemini(
        host=args.host, port=args.port, token_multiplier=multiplier, token_limit=args.token_limit, steps=steps
    )
    done = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        done.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        fake.start()
    except OSError as exc:
        print(f"fake-gemini: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    print(f"fake-gemini listening on {fake.url}", flush=True)
    while not done.wait(3600):
        pass
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
