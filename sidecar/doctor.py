"""`sidecar doctor`: what this installation would use — Python, packages, backend, credentials, data home."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

import msgspec

from sidecar import __version__

MIN_PYTHON = (3, 11)
REQUIRED = ("pygls", "lsprotocol", "google-genai", "httpx2", "msgspec", "watchdog", "agent-client-protocol")
KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")


class Check(msgspec.Struct):
    name: str
    ok: bool
    detail: str
    hint: str | None = None


def add_parser(subparsers: Any) -> None:
    doctor = subparsers.add_parser(
        "doctor", help="check this installation: Python, packages, backend, credentials, data folder"
    )
    doctor.add_argument("--project", metavar="DIR", help="project whose recording folder to check (default: .)")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.set_defaults(func=main_doctor)


def _python() -> Check:
    version = ".".join(str(n) for n in sys.version_info[:3])
    ok = sys.version_info[:2] >= MIN_PYTHON
    hint = None if ok else "the sidecar needs Python 3.11 or newer: install it and reinstall the sidecar with it"
    return Check("python", ok, f"Python {version} at {sys.executable}", hint)


def _packages() -> Check:
    found: list[str] = []
    missing: list[str] = []
    for name in REQUIRED:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        hint = "reinstall the sidecar (pip install --force-reinstall sidecar, or the editor's Reinstall Server)"
        return Check("packages", False, f"missing: {', '.join(missing)}", hint)
    return Check("packages", True, ", ".join(found))


def _credentials() -> tuple[Check, Check]:
    """Which backend and which key variable (never the key, nor any part of it)."""
    base = os.environ.get("GOOGLE_GEMINI_BASE_URL") or None
    present = [v for v in KEY_VARIABLES if os.environ.get(v)]
    if present:
        key = f"{present[0]} is set" + (f" (also {', '.join(present[1:])}, not used)" if present[1:] else "")
    else:
        key = "no GEMINI_API_KEY or GOOGLE_API_KEY in the environment"
    editors = "editors can also pass a key in their settings (VS Code: Sidecar: Set API Key; Neovim: api_key)"
    if base is not None:
        backend = f"the Gemini-compatible endpoint {base} (GOOGLE_GEMINI_BASE_URL)"
    elif present:
        backend = "Gemini (generativelanguage.googleapis.com)"
    else:
        backend = "the embedded fake Gemini, unless the editor passes a key or baseUrl"
    return Check("backend", True, backend), Check("credentials", True, key, None if present else editors)


def _home() -> Check:
    from sidecar.recording.layout import data_home

    if os.environ.get("SIDECAR_HOME"):
        origin = "SIDECAR_HOME"
    elif os.environ.get("XDG_DATA_HOME"):
        origin = "XDG_DATA_HOME/sidecar"
    else:
        origin = "default: ~/.local/share/sidecar"
    return Check("dataHome", True, f"{data_home()} ({origin})")


def _writable(directory: Path) -> Check:
    """Is the recording folder writable: a real file is created and removed (in the nearest existing folder when
    the folder itself does not exist yet; the sidecar creates it on the first message)."""
    probe = directory
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    where = str(directory) if probe == directory else f"{directory} (does not exist yet; {probe} is checked)"
    try:
        if not probe.is_dir():
            raise NotADirectoryError(f"{probe} is not a folder")
        with tempfile.NamedTemporaryFile(dir=probe, prefix=".sidecar-doctor-"):
            pass
    except OSError as exc:
        hint = "make the folder writable, or set SIDECAR_HOME to a folder you own"
        return Check("recordings", False, f"{where}: not writable ({exc.strerror or exc})", hint)
    return Check("recordings", True, f"{where}: writable")


def run_checks(project: str) -> list[Check]:
    from sidecar.recording.store import SessionStore

    backend, credentials = _credentials()
    directory = SessionStore(project).directory
    return [_python(), _packages(), backend, credentials, _home(), _writable(directory)]


def main_doctor(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    checks = run_checks(getattr(args, "project", None) or os.getcwd())
    healthy = all(c.ok for c in checks)
    if getattr(args, "json", False):
        body = {"version": __version__, "ok": healthy, "checks": msgspec.to_builtins(checks)}
        out.write(msgspec.json.encode(body).decode() + "\n")
        return 0 if healthy else 1
    out.write(f"sidecar {__version__}\n")
    for c in checks:
        out.write(f"  {'ok ' if c.ok else 'BAD'} {c.name:<12} {c.detail}\n")
        if c.hint:
            out.write(f"      {'→ ' if not c.ok else ''}{c.hint}\n")
    out.write("All good.\n" if healthy else "Problems found (BAD above).\n")
    return 0 if healthy else 1
