"""Command line: `sidecar` serves JSON-RPC on stdio; `--version`, logging options, and helper subcommands."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from sidecar import __version__
from sidecar.logging_setup import configure_logging


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sidecar",
        description="Gemini agent sidecar for editors. With no command it serves JSON-RPC (LSP framing) on stdio.",
    )
    parser.add_argument("--version", action="version", version=f"sidecar {__version__}")
    parser.add_argument(
        "--log-file", metavar="PATH", help="write the log here instead of stderr (which then gets errors only)"
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log verbosity (default: INFO)",
    )
    parser.add_argument("--stdio", action="store_true", help="serve on stdio (the default; accepted for editors)")
    from sidecar.doctor import add_parser as add_doctor
    from sidecar.recording.cli import add_parsers

    subparsers = parser.add_subparsers(dest="command", metavar="{acp,sessions,import,doctor}")
    from sidecar.acp.cli import add_parser as add_acp_parser

    add_acp_parser(subparsers)
    add_parsers(subparsers)
    add_doctor(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    configure_logging(args.log_level, args.log_file)
    if getattr(args, "func", None) is not None:
        return int(args.func(args))
    from sidecar.allocator import return_big_buffers_to_the_os

    return_big_buffers_to_the_os()
    # Collecting while lsprotocol's ~40k type objects are created only costs start-up time: freeze them instead.
    gc.disable()
    from sidecar.rpc.server import build_server

    server = build_server()
    gc.freeze()
    gc.enable()
    server.start(sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
