"""Settings in ACP mode (no settings channel): defaults < the user's settings file < the workspace's file; env."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from sidecar.config.settings import Settings, decode_settings
from sidecar.config.workspace_file import MAX_BYTES, read_workspace_settings
from sidecar.logging_setup import register_secret

log = logging.getLogger(__name__)

#: `sidecar acp --settings FILE` and this variable name the user-level file explicitly.
SETTINGS_ENV = "SIDECAR_SETTINGS"


def user_settings_path(explicit: str | None = None) -> Path:
    """--settings FILE, else $SIDECAR_SETTINGS, else $XDG_CONFIG_HOME/sidecar/settings.json (~/.config/…)."""
    chosen = explicit or os.environ.get(SETTINGS_ENV)
    if chosen:
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "sidecar" / "settings.json"


def _read_user_file(path: Path) -> tuple[Any, list[str]]:
    """The user's own file may set anything (apiKey, baseUrl, approvalMode, hooks); a missing file is fine."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None, []
    except OSError as exc:
        return None, [f"Cannot read {path}: {exc.strerror or exc}; it is ignored."]
    if len(raw) > MAX_BYTES:
        return None, [f"{path} is larger than {MAX_BYTES:,} bytes; it is ignored."]
    try:
        return json.loads(raw), []
    except (ValueError, UnicodeDecodeError) as exc:
        return None, [f"{path} is not valid JSON ({exc}); it is ignored."]


def load_settings(user_file: Path, workspace_root: str) -> tuple[Settings, list[str]]:
    """The settings for a session in `workspace_root`, and the problems to tell the user (each in words).

    The workspace file cannot set apiKey, baseUrl or approvalMode, and its hooks stay off: ACP has no way to
    ask the user whether to trust a repository. GEMINI_API_KEY / GOOGLE_GEMINI_BASE_URL apply when the files
    set no key / base URL (Settings.effective_*).
    """
    user_raw, problems = _read_user_file(user_file)
    settings, bad = decode_settings(user_raw)
    messages = problems + [p.message() + f" (in {user_file})" for p in bad]
    section, file_problems = read_workspace_settings([workspace_root], trusted=False)
    settings, bad = decode_settings(section, base=settings)
    messages += file_problems + [p.message() for p in bad]
    register_secret(settings.api_key)  # never in a log line
    return settings, messages
