"""The editors' settings lists and docs/settings.md's table, generated from the Settings struct's annotations.

The Settings class is passed in (this module sits in protocol/, below config/): each field's `msgspec.Meta`
holds its description, the bounds editors show and VS Code's extra keys (config/settings.py `_about`).
"""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
import msgspec.inspect as mi

#: VS Code's own settings (the extension uses them; the server never sees them), around the server's.
VSCODE_BEFORE: dict[str, dict[str, Any]] = {
    "serverCommand": {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "markdownDescription": "Command that starts the sidecar over stdio, e.g. "
        '`["/path/to/.venv/bin/python", "-m", "sidecar"]`. Empty (the default): the workspace\'s `.venv` when the '
        "sidecar is installed in it (trusted workspaces only), else the extension's own environment, installed "
        "from the server bundled in the extension on first start (see **Sidecar: Reinstall Server**). "
        "`${workspaceFolder}` and `~` are expanded. In a remote window set it in the Remote settings.",
        "scope": "machine-overridable",
    },
    "pythonPath": {
        "type": "string",
        "default": "",
        "markdownDescription": "Python 3.11+ used to create the extension's own server environment (when "
        "`sidecar.serverCommand` is empty and the workspace has no `.venv` with the sidecar). Empty: the Python "
        "extension's selected interpreter, else `python3` (`py -3` on Windows) from PATH. Takes effect with "
        "**Sidecar: Reinstall Server**.",
        "scope": "machine-overridable",
    },
}
VSCODE_AFTER: dict[str, dict[str, Any]] = {
    "trace.server": {
        "type": "string",
        "enum": ["off", "messages", "verbose"],
        "default": "off",
        "description": "Log the JSON-RPC traffic with the sidecar to the Sidecar output channel.",
    },
}


@dataclass(frozen=True)
class SettingField:
    """One setting as the editors and the docs present it."""

    name: str  #: as on the wire (camelCase)
    type: mi.Type  #: without its Metadata
    default: Any  #: as JSON (None: unset)
    description: str
    bounds: dict[str, Any]
    vscode: dict[str, Any]
    note_vscode: str
    enum: tuple[Any, ...] = ()  #: a Literal's values in the declared order (msgspec.inspect sorts them)

    @property
    def nullable(self) -> bool:
        return isinstance(self.type, mi.UnionType) and any(isinstance(t, mi.NoneType) for t in self.type.types)


def setting_fields(cls: type[msgspec.Struct]) -> list[SettingField]:
    """Every field of `cls`, in declaration order (a field without a description is an error)."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in info.fields:
        if not isinstance(f.type, mi.Metadata) or "description" not in (f.type.extra_json_schema or {}):
            raise ValueError(f"Settings.{f.name} has no description: annotate it with _about(...)")
        schema = dict(f.type.extra_json_schema or {})
        extra = f.type.extra or {}
        default = f.default_factory() if f.default is msgspec.NODEFAULT else f.default
        out.append(
            SettingField(
                name=f.encode_name,
                type=f.type.type,
                default=msgspec.to_builtins(default),
                description=schema.pop("description"),
                bounds=schema,
                vscode=dict(extra.get("vscode") or {}),
                note_vscode=str(extra.get("note_vscode") or ""),
                enum=_literal_values(hints[f.name]),
            )
        )
    return out


def _literal_values(hint: Any) -> tuple[Any, ...]:
    """The values of the Literal in a type hint (through Annotated and `| None`), in the order written."""
    if typing.get_origin(hint) is Literal:
        return typing.get_args(hint)
    for arg in typing.get_args(hint):
        found = _literal_values(arg)
        if found:
            return found
    return ()


def schema_of(f: SettingField) -> dict[str, Any]:
    """The field's JSON schema, its enum in the declared order (VS Code pairs it with enumDescriptions)."""
    schema = json_schema(f.type)
    if f.enum:
        schema["enum"] = [*f.enum, *([None] if f.nullable else [])]
    return schema


def json_schema(info: mi.Type) -> dict[str, Any]:
    """The JSON schema of a setting's type, inline (VS Code's settings editor validates with it)."""
    if isinstance(info, mi.Metadata):
        return json_schema(info.type)
    simple = {mi.StrType: "string", mi.IntType: "integer", mi.FloatType: "number", mi.BoolType: "boolean"}
    for kind, name in simple.items():
        if isinstance(info, kind):
            return {"type": name}
    if isinstance(info, mi.NoneType):
        return {"type": "null"}
    if isinstance(info, mi.LiteralType):
        return {"type": "string", "enum": list(info.values)}
    if isinstance(info, mi.DictType):  # e.g. mcpServers: objects by name, checked entry by entry by the server
        return {"type": "object"}
    if isinstance(info, mi.ListType):
        return {"type": "array", "items": json_schema(info.item_type)}
    if isinstance(info, mi.StructType):
        properties = {f.encode_name: json_schema(f.type) for f in info.fields}
        required = [f.encode_name for f in info.fields if f.required]
        return {"type": "object", "properties": properties, **({"required": required} if required else {})}
    if isinstance(info, mi.UnionType):
        parts = [json_schema(t) for t in info.types]
        types: list[str] = []
        enum: list[Any] = []
        for part in parts:
            types.append(part["type"])
            enum += part.get("enum", [])
        if len(parts) == 2 and types[-1] == "null" and not enum:
            return {**parts[0], "type": [types[0], "null"]}
        if enum:
            return {"type": types, "enum": [*enum, None]}
    raise TypeError(f"no JSON schema for the setting type {info!r}")


# ---------------------------------------------------------------- VS Code: package.json


def vscode_configuration(cls: type[msgspec.Struct]) -> dict[str, Any]:
    """package.json's `contributes.configuration`: VS Code's own settings and every server setting it offers."""
    properties: dict[str, Any] = {f"sidecar.{k}": v for k, v in VSCODE_BEFORE.items()}
    for f in setting_fields(cls):
        extra = dict(f.vscode)
        if extra.pop("hidden", False):
            continue
        text = f"{f.description} {f.note_vscode}".strip()
        properties[f"sidecar.{f.name}"] = {
            **schema_of(f),
            "default": f.default,
            **f.bounds,
            "markdownDescription": text,
            **extra,
        }
    properties.update({f"sidecar.{k}": v for k, v in VSCODE_AFTER.items()})
    return {"title": "Sidecar", "properties": properties}


def vscode_server_keys(cls: type[msgspec.Struct]) -> list[str]:
    """The settings VS Code offers and sends to the server (the API key comes from its secret storage)."""
    return [f.name for f in setting_fields(cls) if not f.vscode.get("hidden")]


def package_json(current: str, cls: type[msgspec.Struct]) -> str:
    """`current` (package.json's text) with its `contributes.configuration` value replaced; the rest as it is."""
    anchor = current.find('"configuration":', current.find('"contributes"'))
    if anchor < 0:
        raise ValueError('package.json has no "contributes": {"configuration": ...} to generate')
    start = current.index("{", anchor)
    _, end = json.JSONDecoder().raw_decode(current, start)
    line_start = current.rfind("\n", 0, anchor) + 1
    indent = current[line_start:anchor]
    body = _json(vscode_configuration(cls), indent)
    return current[:start] + body + current[end:]


def _json(value: Any, indent: str) -> str:
    """JSON with two-space indents, short lists and objects of scalars on one line (as package.json was written)."""
    inline = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    flat = not any(
        isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, list | dict) for x in v)) for v in values
    )
    if not isinstance(value, list | dict) or (flat and len(inline) <= 60):
        return inline
    inner = indent + "  "
    if isinstance(value, list):
        items = [inner + _json(v, inner) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + indent + "]"
    items = [f"{inner}{json.dumps(k)}: {_json(v, inner)}" for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + indent + "}"


# ---------------------------------------------------------------- Neovim: a Lua module


def lua_value(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
        return f"'{escaped}'"
    if isinstance(value, list):
        return "{ " + ", ".join(lua_value(v) for v in value) + " }" if value else "{}"
    if isinstance(value, dict):
        items = ", ".join(f"{k} = {lua_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    raise TypeError(f"no Lua for {value!r}")


# ---------------------------------------------------------------- docs/settings.md


def _number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def docs_type(f: SettingField, *, markdown: bool = True) -> str:
    """`string`, `integer 1…3,600,000`, `number in (0, 1]`, `` `gemini` | `vertex` ``, `object`."""
    schema = schema_of(f)
    if "enum" in schema:
        values = [v for v in schema["enum"] if v is not None]
        sep = " \\| " if markdown else " | "
        return sep.join(f"`{v}`" if markdown else str(v) for v in values)
    kind = schema["type"][0] if isinstance(schema["type"], list) else schema["type"]
    low = f.bounds.get("minimum")
    above = f.bounds.get("exclusiveMinimum")
    high = f.bounds.get("maximum")
    if above is not None and high is not None:
        return f"{kind} in ({_number(above)}, {_number(high)}]"
    if low is not None and high is not None:
        return f"{kind} {_number(low)}…{_number(high)}"
    if low is not None:
        return f"{kind} ≥ {_number(low)}"
    return str(kind)


def docs_table(cls: type[msgspec.Struct]) -> str:
    rows = ["| name | type | default | meaning |", "|---|---|---|---|"]
    for f in setting_fields(cls):
        default = "unset" if f.default is None else f"`{json.dumps(f.default)}`"
        if isinstance(f.default, str):
            default = f"`{f.default}`"
        meaning = f.description.replace("|", "\\|")
        rows.append(f"| `{f.name}` | {docs_type(f)} | {default} | {meaning} |")
    return "\n".join(rows)
