"""Which Python and venv the server runs from, whether it is an editor's private install, and whether that install's
sidecar version is the one running (an old private venv after an update is the common case)."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

from sidecar import __version__
from sidecar.doctor.report import Check, Context

REINSTALL = {"vscode": "run “Sidecar: Reinstall Server” in VS Code", "nvim": "run :SidecarUpdate in Neovim"}
ANY_REINSTALL = "reinstall the server (VS Code: “Sidecar: Reinstall Server”; Neovim: :SidecarUpdate)"


def private_install(prefix: str) -> str | None:
    """The editor whose private install `prefix` is: VS Code's globalStorage `server/venv`, Neovim's
    `stdpath('data')/sidecar/venv`; None for any other environment."""
    parts = Path(prefix).parts
    if parts[-2:] == ("server", "venv") and "globalStorage" in parts:
        return "vscode"
    if parts[-2:] == ("sidecar", "venv"):
        return "nvim"
    return None


def installed_version() -> str | None:
    try:
        return importlib.metadata.version("sidecar")
    except importlib.metadata.PackageNotFoundError:
        return None


def editor_install_check(ctx: Context, prefix: str | None = None, installed: str | None = None) -> list[Check]:
    prefix = prefix or sys.prefix
    installed = installed if installed is not None else installed_version()
    owner = private_install(prefix)
    venv = "a venv" if prefix != getattr(sys, "base_prefix", prefix) or owner else "no venv"
    which = {"vscode": "VS Code's private install", "nvim": "Neovim's private install"}.get(owner or "", "")
    where = f"{which} at {prefix}" if which else f"{prefix} ({venv}; not an editor's private install)"
    detail = f"server runs from {where}, Python {sys.executable}"
    if ctx.editor is None and owner is None:
        return [Check("install", True, detail)]
    reinstall = REINSTALL.get(ctx.editor or owner or "", ANY_REINSTALL)
    if installed is None:
        return [Check("install", False, f"{detail}; sidecar is not installed there", reinstall)]
    if installed != __version__:
        return [
            Check(
                "install",
                False,
                f"{detail}; installed sidecar {installed} but {__version__} is running",
                f"the install is out of date: {reinstall}",
            )
        ]
    hint = None
    if ctx.editor is not None and owner is not None and owner != ctx.editor:
        hint = f"this is not {ctx.editor}'s own install; {reinstall} to give it one"
    return [Check("install", True, f"{detail}; sidecar {installed}", hint)]
