"""Neovim's mirrors: protocol.lua (tables and LuaCATS types of the contract) and settings_schema.lua (the settings)."""

from __future__ import annotations

import typing
from collections.abc import Iterable
from typing import Any

import msgspec
import msgspec.inspect as mi

from sidecar.export.model import (
    LITERAL_NAMES,
    NAMED_LITERALS,
    NAMED_UNIONS,
    PROGRESS,
    UNION_NAMES,
    contract_roots,
    doc,
    structs,
    without_null,
)
from sidecar.export.settings import docs_type, lua_value, setting_fields
from sidecar.protocol import error_info, methods
from sidecar.protocol.version import PROTOCOL_VERSION

#: LuaCATS names live in this namespace (`sidecar.TokenUsage`), as conform.nvim's do in `conform.`.
NS = "sidecar."


def _literal(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value).lower()


def lua_type(info: mi.Type) -> str:
    """The LuaCATS type of a wire type: `string`, `integer`, `sidecar.TokenUsage[]`, `'a'|'b'`, …"""
    if isinstance(info, mi.Metadata):
        extra = info.extra or {}
        return lua_type(mi.type_info(extra["wire"])) if "wire" in extra else lua_type(info.type)
    simple = {mi.StrType: "string", mi.IntType: "integer", mi.FloatType: "number", mi.BoolType: "boolean"}
    for kind, name in simple.items():
        if isinstance(info, kind):
            return name
    if isinstance(info, mi.NoneType):
        return "nil"
    if isinstance(info, mi.AnyType):
        return "any"
    if isinstance(info, mi.LiteralType):
        named = LITERAL_NAMES.get(frozenset(info.values))
        return NS + named if named else "|".join(_literal(v) for v in info.values)
    if isinstance(info, mi.StructType):
        return NS + info.cls.__name__
    if isinstance(info, mi.ListType):
        item = lua_type(info.item_type)
        return f"({item})[]" if "|" in item else f"{item}[]"
    if isinstance(info, mi.DictType):
        return f"table<string, {lua_type(info.value_type)}>"
    if isinstance(info, mi.UnionType):
        classes = frozenset(t.cls for t in info.types if isinstance(t, mi.StructType))
        if len(classes) == len(info.types) and classes in UNION_NAMES:
            return NS + UNION_NAMES[classes]
        rest = [t for t in info.types if not isinstance(t, mi.NoneType)]
        shown = "|".join(lua_type(t) for t in rest)
        if len(rest) == len(info.types):
            return shown
        return f"({shown})?" if "|" in shown else f"{shown}?"
    raise TypeError(f"no LuaCATS type for {info!r}")


def lua_class(cls: type[msgspec.Struct], name: str | None = None, *, all_optional: bool = False) -> str:
    """`---@class sidecar.Name` with a `---@field` per wire field (`name?` where the field may be left out)."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    text = doc(cls)
    lines = [f"--- {text}"] if text else []
    lines.append(f"---@class {NS}{name or cls.__name__}")
    if info.tag_field is not None:
        lines.append(f"---@field {info.tag_field} {_literal(info.tag)}")
    for f in info.fields:
        optional = all_optional or not f.required
        shown = lua_type(without_null(f.type) if optional else f.type)
        if optional and shown.endswith("?"):  # `name?` already says it may be nil
            shown = shown[1:-2] if shown.startswith("(") else shown[:-1]
        lines.append(f"---@field {f.encode_name}{'?' if optional else ''} {shown}")
    return "\n".join(lines)


def type_annotations() -> str:
    """LuaCATS for every type of the contract: the named literals and unions, result aliases, one class per Struct."""
    parts = ["-- Types (LuaCATS, for lua-language-server): every params/result type of the contract."]
    for name, literal in NAMED_LITERALS.items():
        parts.append(f"---@alias {NS}{name} " + "|".join(_literal(v) for v in typing.get_args(literal)))
    for name, union in NAMED_UNIONS.items():
        parts.append(f"---@alias {NS}{name} " + "|".join(NS + t.__name__ for t in typing.get_args(union)))
    for m in methods.ALL:
        if m.result is not None and not isinstance(mi.type_info(m.result), mi.StructType):
            parts.append(f"---@alias {NS}{m.key[0].upper() + m.key[1:]}Result {lua_type(mi.type_info(m.result))}")
    return "\n".join(parts) + "\n\n" + "\n\n".join(lua_class(cls) for cls in structs(contract_roots()))


def protocol_lua(command: str) -> str:
    def table(name: str, entries: Iterable[tuple[str, str]]) -> str:
        rows = "\n".join(f"  {key} = {value}," for key, value in entries)
        return f"M.{name} = {{\n{rows}\n}}"

    fields = []
    for cls in structs(contract_roots()):
        info = mi.type_info(cls)
        assert isinstance(info, mi.StructType)
        names = ([info.tag_field] if info.tag_field else []) + [f.encode_name for f in info.fields]
        fields.append((cls.__name__, "{ " + ", ".join(f"'{n}'" for n in names) + " }" if names else "{}"))
    header = (
        "-- The sidecar wire contract (docs/protocol.md): method names, error codes, field names and types.\n"
        f"-- GENERATED by `{command}` from sidecar/protocol/ -- do not edit; change the Python and regenerate.\n"
        "local M = {}"
    )
    return (
        "\n\n".join(
            [
                header,
                "-- The wire protocol version this editor speaks; the server reports its own in `initialize`\n"
                "-- (capabilities.experimental.sidecar.protocolVersion).\n"
                f"M.protocol_version = {PROTOCOL_VERSION}",
                "-- Every sidecar/* method and notification, by its name without the prefix.\n"
                + table("method", [(m.key, f"'{m.name}'") for m in methods.ALL]),
                "-- What the server sends (notifications and requests): a client handles each of them.\n"
                + "M.from_server = { "
                + ", ".join(f"'{m.name}'" for m in methods.ALL if m.sender == "server")
                + " }",
                "-- Titles of the server's work-done progress.\n" + table("progress", PROGRESS),
                "-- JSON-RPC error codes the server answers.\n"
                + table("error", [(e.key, str(e.code)) for e in error_info.CODES]),
                "-- The fields of each params/result type, as they appear on the wire.\n" + table("fields", fields),
                type_annotations(),
                "return M",
            ]
        )
        + "\n"
    )


def settings_lua(settings_cls: type[msgspec.Struct], command: str) -> str:
    """settings_schema.lua: the `sidecar` settings section's fields, types, defaults and descriptions."""
    fields = setting_fields(settings_cls)
    nested = [cls for cls in structs([settings_cls]) if cls is not settings_cls]
    settings_class = [f"--- The `sidecar` settings section (docs/settings.md).\n---@class {NS}Settings"]
    for f in fields:
        settings_class.append(f"---@field {f.name}? {lua_type(without_null(f.type))} {f.description}")
    rows = []
    for f in fields:
        row = [f"name = {lua_value(f.name)}", f"type = {lua_value(docs_type(f, markdown=False))}"]
        if f.default is not None:
            row.append(f"default = {lua_value(f.default)}")
        row.append(f"description = {lua_value(f.description)}")
        rows.append("  { " + ", ".join(row) + " },")
    defaults = [f"  {f.name} = {lua_value(f.default)}," for f in fields if f.default is not None]
    return (
        "\n\n".join(
            [
                "-- The sidecar's settings (the `sidecar` section, docs/settings.md): names, types, defaults and\n"
                "-- descriptions.\n"
                f"-- GENERATED by `{command}` from sidecar/config/settings.py -- do not edit; change the Python and "
                "regenerate.",
                *[lua_class(cls) for cls in nested],
                "\n".join(settings_class),
                "local M = {}",
                "-- Every setting in the order of docs/settings.md: its wire name, type, default (absent: unset, the\n"
                "-- server then decides, e.g. from the environment) and description.\n"
                "M.settings = {\n" + "\n".join(rows) + "\n}",
                "-- The defaults the server uses for the settings that have one.\n"
                f"---@type {NS}Settings\nM.defaults = {{\n" + "\n".join(defaults) + "\n}",
                "return M",
            ]
        )
        + "\n"
    )
