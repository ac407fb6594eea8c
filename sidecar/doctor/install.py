"""The installation and the recording folder: Python, the packages, the data home and whether it is writable."""

from __future__ import annotations

import importlib.metadata
import os
import sys
import tempfile
from pathlib import Path

from sidecar.doctor.report import Check, Context

MIN_PYTHON = (3, 11)
REQUIRED = ("pygls", "lsprotocol", "google-genai", "httpx2", "msgspec", "watchdog", "agent-client-protocol")


def python_check(_ctx: Context) -> list[Check]:
    version = ".".join(str(n) for n in sys.version_info[:3])
    ok = sys.version_info[:2] >= MIN_PYTHON
    hint = None if ok else "the sidecar needs Python 3.11 or newer: install it and reinstall the sidecar with it"
    return [Check("python", ok, f"Python {version} at {sys.executable}", hint)]


def packages_check(_ctx: Context) -> list[Check]:
    found: list[str] = []
    missing: list[str] = []
    for name in REQUIRED:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        hint = "reinstall the sidecar (pip install --force-reinstall sidecar, or the editor's Reinstall Server)"
        return [Check("packages", False, f"missing: {', '.join(missing)}", hint)]
    return [Check("packages", True, ", ".join(found))]


def recordings_check(ctx: Context) -> list[Check]:
    """The data home and the project's recording folder (the server creates it on the first message)."""
    from sidecar.recording.store import SessionStore

    return [_home(), _writable(SessionStore(ctx.project).directory)]


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
