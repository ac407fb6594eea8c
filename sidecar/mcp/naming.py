"""MCP tools as the model sees them: Gemini CLI's names (`mcp_<server>_<tool>`), filters, schema cleanup."""

from __future__ import annotations

import copy
import re
from typing import Any

from sidecar.mcp.config import ServerConfig

PREFIX = "mcp_"
MAX_NAME = 63
_INVALID = re.compile(r"[^A-Za-z0-9_\-.:]")


def qualified_name(server: str, tool: str) -> str:
    """Gemini CLI's generateValidName("<server>_<tool>"): `mcp_` prefix, other characters → `_`, a leading `_`
    unless it starts with a letter or `_`, and past 63 characters the first 30 + `...` + the last 30."""
    name = f"{server}_{tool}"
    if not name.startswith(PREFIX):
        name = PREFIX + name
    name = _INVALID.sub("_", name)
    if not re.match(r"[A-Za-z_]", name):
        name = "_" + name
    if len(name) > MAX_NAME:
        name = name[:30] + "..." + name[-30:]
    return name


def tool_enabled(server: ServerConfig, tool: str) -> bool:
    """`excludeTools` wins; `includeTools` matches the exact name or entries written `name(…)`."""
    if any(_matches(entry, tool) for entry in server.exclude_tools):
        return False
    if server.include_tools is None:
        return True
    return any(_matches(entry, tool) for entry in server.include_tools)


def _matches(entry: str, tool: str) -> bool:
    return entry == tool or entry.startswith(tool + "(")


def clean_schema(schema: Any) -> dict[str, Any]:
    """The one cleanup Gemini CLI makes: a `type` of exactly [X, "null"] becomes X plus `nullable: true`,
    recursively. Everything else is passed on. No schema: an object without properties."""
    if not isinstance(schema, dict) or not schema:
        return {"type": "object", "properties": {}}
    result = _clean(copy.deepcopy(schema))
    assert isinstance(result, dict)
    return result


def _clean(value: Any) -> Any:
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("type")
    if isinstance(kind, list) and len(kind) == 2 and "null" in kind:
        other = [k for k in kind if k != "null"]
        if len(other) == 1:
            value["type"] = other[0]
            value["nullable"] = True
    return {key: _clean(item) for key, item in value.items()}
