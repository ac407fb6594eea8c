"""Where the user's own settings file is: `sidecar acp --settings FILE`, $SIDECAR_SETTINGS, or ~/.config/sidecar."""

from __future__ import annotations

import os
from pathlib import Path

#: `sidecar acp --settings FILE` and this variable name the user-level file explicitly.
SETTINGS_ENV = "SIDECAR_SETTINGS"


def user_settings_path(explicit: str | None = None) -> Path:
    """--settings FILE, else $SIDECAR_SETTINGS, else $XDG_CONFIG_HOME/sidecar/settings.json (~/.config/…)."""
    chosen = explicit or os.environ.get(SETTINGS_ENV)
    if chosen:
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "sidecar" / "settings.json"
