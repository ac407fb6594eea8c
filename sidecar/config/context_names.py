"""Which context file names may be configured: a plain file name, never one that could load a credential file."""

from __future__ import annotations

import fnmatch
import re

#: Files that hold credentials: whatever a setting says, none is read into the model's context.
CREDENTIAL_PATTERNS = ("oauth_creds.json", "*.pem", "id_*", ".env*", "credentials*.json", "*.key", "*.p12")


def credential_name(name: str) -> bool:
    """Whether `name` (its last part, case-insensitively) is a credential file's name."""
    base = re.split(r"[\\/]", name.strip())[-1].lower()
    return any(fnmatch.fnmatchcase(base, pattern) for pattern in CREDENTIAL_PATTERNS)


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a context file name (None: it can). A name is looked for in ~/.gemini and in the
    workspace's folders: one with a folder part or `..` could reach elsewhere."""
    stripped = name.strip()
    if not stripped:
        return "an empty name"
    if re.search(r"[\\/]", stripped) or stripped in (".", ".."):
        return f"{name!r} is not a plain file name (no folder, no `..`)"
    if credential_name(stripped):
        return f"{name!r} names a credential file ({', '.join(CREDENTIAL_PATTERNS)} are never loaded)"
    return None
