"""`sidecar doctor`: what the server would do with this installation, these settings and this environment, using the
server's own settings layering and backend resolution; every problem with the next step in words."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from sidecar import __version__
from sidecar.doctor.report import Check, Context, render_json, render_text

#: One part of the setup: it reads (and may fill in) the Context and returns its checks.
Section = Callable[[Context], list[Check]]


def sections() -> list[Section]:
    """The parts checked, in order. A part added later (the context files, say) becomes one
    more Section here: a function of the Context (project, settings in effect, front-end)
    returning its Checks — each failing Check with the next step in words."""
    from sidecar.doctor.backend import backend_check
    from sidecar.doctor.editor_install import editor_install_check
    from sidecar.doctor.estimate_check import estimate_check
    from sidecar.doctor.install import packages_check, python_check, recordings_check
    from sidecar.doctor.mcp_check import mcp_check
    from sidecar.doctor.online import online_check
    from sidecar.doctor.settings_check import settings_check

    return [
        python_check,
        editor_install_check,
        packages_check,
        settings_check,
        backend_check,
        online_check,
        recordings_check,
        estimate_check,
        mcp_check,
    ]


def add_parser(subparsers: Any) -> None:
    doctor = subparsers.add_parser(
        "doctor",
        help="check what the sidecar would do here: installation, settings, backend and credentials, recordings",
        description="Checks the installation, the settings files, which Gemini the server would talk to (with the "
        "server's own resolution) and the recording folder. Exit code 1 when something configured will not work.",
    )
    doctor.add_argument("--project", metavar="DIR", help="the workspace folder to check (default: .)")
    doctor.add_argument("--json", action="store_true", help="machine-readable output (the editors' health views)")
    doctor.add_argument(
        "--online",
        action="store_true",
        help="also obtain an access token (Vertex AI) and make one countTokens call to the backend",
    )
    doctor.add_argument(
        "--editor-settings",
        metavar="FILE",
        help="check as an editor starts the server: its `sidecar` settings as JSON in FILE (- for standard input); "
        "without it, the settings are read as `sidecar acp` reads them",
    )
    doctor.add_argument(
        "--editor",
        metavar="NAME",
        choices=("vscode", "nvim"),
        help="the editor running the doctor (vscode, nvim): the report names its private install and reinstall command",
    )
    doctor.add_argument("--trusted", action="store_true", help="with --editor-settings: the workspace is trusted")
    doctor.add_argument("--settings", metavar="FILE", help="the user settings file, as `sidecar acp --settings`")
    doctor.set_defaults(func=main_doctor)


def _editor_settings(source: str | None) -> tuple[Any, str | None]:
    """The editor's settings object from FILE or stdin, or a problem in words (never echoing the content)."""
    if source is None:
        return None, None
    try:
        raw = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"--editor-settings {source}: cannot be read ({getattr(exc, 'strerror', None) or exc})"
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        return None, f"--editor-settings {source}: not valid JSON (line {exc.lineno}, column {exc.colno})"  # type: ignore[attr-defined]
    if not isinstance(data, dict):
        return None, f"--editor-settings {source}: expected a JSON object"
    return data, None


def build_context(args: argparse.Namespace) -> Context:
    from sidecar.config.user_file import user_settings_path

    source = getattr(args, "editor_settings", None)
    editor, error = _editor_settings(source)
    return Context(
        project=os.path.abspath(getattr(args, "project", None) or os.getcwd()),
        front_end="editor" if source is not None else "acp",
        editor_settings=editor,
        editor_settings_error=error,
        user_file=user_settings_path(getattr(args, "settings", None)),
        trusted=bool(getattr(args, "trusted", False)),
        online=bool(getattr(args, "online", False)),
        editor=getattr(args, "editor", None),
    )


def run_checks(ctx: Context) -> list[Check]:
    checks: list[Check] = []
    for section in sections():
        checks += section(ctx)
    return checks


def main_doctor(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    if getattr(args, "log_level", "INFO") == "INFO":  # the report says it all: no INFO lines around it by default
        logging.getLogger().setLevel(logging.WARNING)
    ctx = build_context(args)
    checks = run_checks(ctx)
    if getattr(args, "json", False):
        out.write(render_json(__version__, ctx.front_end, checks, ctx.verdict))
    else:
        out.write(render_text(__version__, ctx.front_end, checks))
    return 0 if all(c.ok for c in checks) else 1
