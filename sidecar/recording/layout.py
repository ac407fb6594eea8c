"""Where the sidecar keeps its data: $SIDECAR_HOME, else the XDG data directory; one folder per project."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path


def data_home() -> Path:
    """$SIDECAR_HOME, else $XDG_DATA_HOME/sidecar, else ~/.local/share/sidecar."""
    explicit = os.environ.get("SIDECAR_HOME")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "sidecar"


def project_id(project_root: str) -> str:
    """A readable, stable folder name for a project: `<slug>-<8 hex of the path's sha256>`."""
    resolved = os.path.realpath(project_root)
    slug = re.sub(r"[^a-z0-9]+", "-", os.path.basename(resolved).lower()).strip("-")[:40] or "root"
    return f"{slug}-{hashlib.sha256(resolved.encode()).hexdigest()[:8]}"
