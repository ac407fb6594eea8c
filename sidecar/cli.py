"""Command line: `sidecar` serves JSON-RPC on stdio; `--version`, logging options, and helper subcommands."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from sidecar import __version__

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sidecar",
        description="Gemini agent sidecar for editors. With no command it serves JSON-RPC (LSP framing) on stdio.",
    )
    parser.add_argument("--version", action="version", version=f"sidecar {__version__}")
    parser.add_argument("--log-file", metavar="PATH", help="write the log here instead of stderr")
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


def configure_logging(level: str, log_file: str | None) -> None:
    # stdout carries JSON-RPC: never log there. A log file holds conversations at DEBUG: only its owner reads it.
    handler: logging.Handler = (
        logging.StreamHandler(_private_log(log_file)) if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    from sidecar.logging_setup import KeyRedactingFilter

    handler.addFilter(KeyRedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # pygls logs every message body at INFO; keep that for DEBUG runs only.
    if level != "DEBUG":
        logging.getLogger("pygls").setLevel(logging.WARNING)


def _private_log(path: str) -> TextIO:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)  # also when the file existed with looser permissions
    return open(fd, "a", encoding="utf-8", buffering=1)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    configure_logging(args.log_level, args.log_file)
    if getattr(args, "func", None) is not None:
        return int(args.func(args))
    from sidecar.memory import return_big_buffers_to_the_os

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
