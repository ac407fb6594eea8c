"""What the doctor found: one Check per thing looked at, the backend verdict, and their text and JSON forms."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from sidecar.config.settings import Settings

FrontEnd = Literal["editor", "acp"]


class Check(msgspec.Struct):
    """One thing looked at. `ok` False: something configured will not work; `hint` is the next step in words."""

    name: str
    ok: bool
    detail: str
    hint: str | None = None


class Verdict(msgspec.Struct, rename="camel"):
    """What the server would do with the first message: which backend it talks to (`label`, as the status bar and
    sidecar/tokenUsage name it) and, when the message would fail, the error kind the server answers with."""

    kind: str
    label: str
    ok: bool
    error_kind: str | None = None
    message: str | None = None


@dataclass
class Context:
    """What one doctor run knows: the project, which front-end's settings it reads and how, the settings in effect,
    and (filled in by the backend section) the verdict. Every section reads it; later sections may add fields."""

    project: str
    front_end: FrontEnd
    editor_settings: Any
    editor_settings_error: str | None
    user_file: Path
    trusted: bool
    online: bool
    editor: str | None = None
    settings: Settings = field(default_factory=Settings)
    verdict: Verdict | None = None


def render_text(version: str, front_end: FrontEnd, checks: list[Check]) -> str:
    healthy = all(c.ok for c in checks)
    how = "the editor passes them" if front_end == "editor" else "`sidecar acp` reads them"
    lines = [f"sidecar {version} (settings as {how})"]
    width = max(12, *(len(c.name) for c in checks)) if checks else 12
    for c in checks:
        lines.append(f"  {'ok ' if c.ok else 'BAD'} {c.name:<{width}} {c.detail}")
        if c.hint:
            lines.append(f"      {'→ ' if not c.ok else ''}{c.hint}")
    lines.append("All good." if healthy else "Problems found (BAD above).")
    return "\n".join(lines) + "\n"


def render_json(version: str, front_end: FrontEnd, checks: list[Check], verdict: Verdict | None) -> str:
    body = {
        "version": version,
        "ok": all(c.ok for c in checks),
        "frontEnd": front_end,
        "backend": msgspec.to_builtins(verdict) if verdict is not None else None,
        "checks": msgspec.to_builtins(checks),
    }
    return msgspec.json.encode(body).decode() + "\n"
