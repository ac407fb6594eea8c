"""Writes the editors' mirrors of the contract (protocol.ts, protocol.lua) and docs/protocol.md's tables from it.

    python -m sidecar.protocol.export          # rewrite the generated files
    python -m sidecar.protocol.export --check  # exit 1, naming them, when any is stale (what the tests run)
"""

from __future__ import annotations

import argparse
import re
import sys
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi

from sidecar.config.settings import Settings
from sidecar.protocol import error_info, methods, sessions, tools, types
from sidecar.protocol.version import PROTOCOL_VERSION

ROOT = Path(__file__).resolve().parents[2]
TS_PATH = Path("editors/vscode/src/protocol.ts")
LUA_PATH = Path("editors/nvim/lua/sidecar/protocol.lua")
DOCS_PATH = Path("docs/protocol.md")
COMMAND = "python -m sidecar.protocol.export"  # or `make protocol`

#: Literal types that the mirrors name instead of spelling out their values.
NAMED_LITERALS: dict[str, Any] = {
    "UsageSource": types.UsageSource,
    "CompressionStatus": types.CompressionStatus,
    "CompactionTrigger": types.CompactionTrigger,
    "EstimateReason": types.EstimateReason,
    "SummaryPreparation": types.SummaryPreparation,
    "MessageKind": sessions.MessageKind,
    "ToolCallStatus": tools.ToolCallStatus,
    "ToolDecision": tools.ToolDecision,
}
_LITERAL_NAMES = {frozenset(typing.get_args(t)): name for name, t in NAMED_LITERALS.items()}
#: Unions of Structs that the mirrors name.
NAMED_UNIONS: dict[str, Any] = {"TranscriptEntry": sessions.TranscriptEntry}
_UNION_NAMES = {frozenset(typing.get_args(t)): name for name, t in NAMED_UNIONS.items()}

#: The settings section (initializationOptions, didChangeConfiguration) is part of the contract too.
SETTINGS_NAME = "SidecarSettings"


# ---------------------------------------------------------------- the type model


def _structs(roots: Iterable[Any]) -> list[type[msgspec.Struct]]:
    """Every Struct reachable from `roots`, dependencies first, each once."""
    found: list[type[msgspec.Struct]] = []

    def walk(info: mi.Type) -> None:
        if isinstance(info, mi.Metadata):
            walk(info.type)
            extra = info.extra or {}
            if "wire" in extra:
                walk(mi.type_info(extra["wire"]))
        elif isinstance(info, mi.StructType):
            if info.cls in found:
                return
            for f in info.fields:
                walk(f.type)
            found.append(info.cls)
        elif isinstance(info, mi.UnionType):
            for t in info.types:
                walk(t)
        elif isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
            walk(info.item_type)
        elif isinstance(info, mi.DictType):
            walk(info.value_type)

    for root in roots:
        walk(mi.type_info(root))
    return found


def _contract_roots() -> list[Any]:
    roots: list[Any] = list(error_info.DATA_TYPES)
    for method in methods.ALL:
        roots.append(method.params)
        if method.result is not None:
            roots.append(method.result)
    return roots


def _omits_defaults(cls: type[msgspec.Struct]) -> bool:
    return bool(cls.__struct_config__.omit_defaults)


# ---------------------------------------------------------------- TypeScript


def ts_type(info: mi.Type) -> str:
    if isinstance(info, mi.Metadata):
        extra = info.extra or {}
        return ts_type(mi.type_info(extra["wire"])) if "wire" in extra else ts_type(info.type)
    if isinstance(info, mi.StrType):
        return "string"
    if isinstance(info, mi.IntType | mi.FloatType):
        return "number"
    if isinstance(info, mi.BoolType):
        return "boolean"
    if isinstance(info, mi.NoneType):
        return "null"
    if isinstance(info, mi.AnyType):
        return "unknown"
    if isinstance(info, mi.LiteralType):
        name = _LITERAL_NAMES.get(frozenset(info.values))
        return name or " | ".join(_ts_literal(v) for v in info.values)
    if isinstance(info, mi.StructType):
        return info.cls.__name__
    if isinstance(info, mi.ListType):
        item = ts_type(info.item_type)
        return f"({item})[]" if " | " in item else f"{item}[]"
    if isinstance(info, mi.DictType):
        return f"Record<string, {ts_type(info.value_type)}>"
    if isinstance(info, mi.UnionType):
        classes = frozenset(t.cls for t in info.types if isinstance(t, mi.StructType))
        if len(classes) == len(info.types) and classes in _UNION_NAMES:
            return _UNION_NAMES[classes]
        return " | ".join(ts_type(t) for t in info.types)
    raise TypeError(f"no TypeScript for {info!r}")


def _ts_literal(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value).lower()


def _without_null(info: mi.Type) -> mi.Type:
    if isinstance(info, mi.UnionType):
        rest = tuple(t for t in info.types if not isinstance(t, mi.NoneType))
        return rest[0] if len(rest) == 1 else mi.UnionType(rest)
    return info


def _ts_fields(cls: type[msgspec.Struct], *, all_optional: bool = False) -> list[str]:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    lines: list[str] = []
    if info.tag_field is not None:
        lines.append(f"  {info.tag_field}: {_ts_literal(info.tag)};")
    for f in info.fields:
        optional = all_optional or not f.required
        shown = _without_null(f.type) if optional and (all_optional or _omits_defaults(cls)) else f.type
        lines.append(f"  {f.encode_name}{'?' if optional else ''}: {ts_type(shown)};")
    return lines


def _doc(obj: Any) -> str | None:
    text = (obj.__doc__ or "").strip()
    if not text or text.startswith(("A base class", "Create a new")):  # msgspec.Struct's own docstring
        return None
    return " ".join(line.strip() for line in text.split("\n\n")[0].splitlines())


def _ts_interface(cls: type[msgspec.Struct], name: str | None = None, *, all_optional: bool = False) -> str:
    doc = _doc(cls)
    head = f"/** {doc} */\n" if doc else ""
    body = "\n".join(_ts_fields(cls, all_optional=all_optional))
    return f"{head}export interface {name or cls.__name__} {{{chr(10) + body + chr(10) if body else ''}}}"


def _ts_table(name: str, entries: Iterable[tuple[str, str]], doc: str) -> str:
    rows = "\n".join(f"  {key}: {value}," for key, value in entries)
    return f"/** {doc} */\nexport const {name} = {{\n{rows}\n}} as const;"


TS_HEADER = f"""/**
 * The sidecar wire contract (docs/protocol.md): method names, error codes, the shapes of params and results.
 *
 * GENERATED by `{COMMAND}` from sidecar/protocol/ — do not edit; change the Python and regenerate.
 * It imports nothing, so it loads under plain Node (unit tests, the round-trip test) and in the extension host.
 */"""

_PROGRESS = [("turn", f"'{methods.PROGRESS_TURN}'"), ("compress", f"'{methods.PROGRESS_COMPRESS}'")]


def typescript() -> str:
    parts = [
        TS_HEADER,
        "/** The wire protocol version this editor speaks; the server reports its own in `initialize`"
        " (capabilities.experimental.sidecar.protocolVersion). */\n"
        f"export const PROTOCOL_VERSION = {PROTOCOL_VERSION};",
        _ts_table(
            "Method",
            [(m.key, f"'{m.name}'") for m in methods.ALL],
            "Every sidecar/* method and notification (`MethodInfo` says who sends what).",
        ),
        _ts_table("ProgressTitle", _PROGRESS, "Titles of the server's work-done progress."),
        _ts_table(
            "Command",
            [("compressConversation", f"'{methods.COMPRESS_COMMAND}'")],
            "workspace/executeCommand commands the server handles.",
        ),
        _ts_table(
            "ErrorCode", [(e.key, str(e.code)) for e in error_info.CODES], "JSON-RPC error codes the server answers."
        ),
        _ts_method_info(),
    ]
    for name, literal in NAMED_LITERALS.items():
        values = " | ".join(_ts_literal(v) for v in typing.get_args(literal))
        parts.append(f"export type {name} = {values};")
    for m in methods.ALL:
        if m.result is not None and not isinstance(mi.type_info(m.result), mi.StructType):
            alias = m.key[0].upper() + m.key[1:] + "Result"
            parts.append(f"export type {alias} = {ts_type(mi.type_info(m.result))};")
    for name, union in NAMED_UNIONS.items():
        parts.append(f"export type {name} = {' | '.join(t.__name__ for t in typing.get_args(union))};")
    for cls in _structs([*_contract_roots(), Settings]):
        if cls is Settings:
            parts.append(_ts_interface(cls, SETTINGS_NAME, all_optional=True))
        else:
            parts.append(_ts_interface(cls))
    return "\n\n".join(parts) + "\n"


def _ts_method_info() -> str:
    rows = []
    for m in methods.ALL:
        result = "" if m.result is None else f", result: '{ts_type(mi.type_info(m.result))}'"
        rows.append(
            f"  {m.key}: {{ kind: '{m.kind}', sender: '{m.sender}', params: '{m.params.__name__}'{result} }},"
        )
    body = "\n".join(rows)
    doc = "/** Who sends each method, and the names of its params and result types. */"
    return f"{doc}\nexport const MethodInfo = {{\n{body}\n}} as const;"


# ---------------------------------------------------------------- Lua


def lua() -> str:
    def table(name: str, entries: Iterable[tuple[str, str]]) -> str:
        rows = "\n".join(f"  {key} = {value}," for key, value in entries)
        return f"M.{name} = {{\n{rows}\n}}"

    fields = []
    for cls in _structs(_contract_roots()):
        info = mi.type_info(cls)
        assert isinstance(info, mi.StructType)
        names = ([info.tag_field] if info.tag_field else []) + [f.encode_name for f in info.fields]
        fields.append((cls.__name__, "{ " + ", ".join(f"'{n}'" for n in names) + " }" if names else "{}"))
    return "\n\n".join(
        [
            f"-- The sidecar wire contract (docs/protocol.md): method names, error codes, field names.\n"
            f"-- GENERATED by `{COMMAND}` from sidecar/protocol/ -- do not edit; change the Python and regenerate.\n"
            "local M = {}",
            "-- The wire protocol version this editor speaks; the server reports its own in `initialize`\n"
            "-- (capabilities.experimental.sidecar.protocolVersion).\n"
            f"M.protocol_version = {PROTOCOL_VERSION}",
            "-- Every sidecar/* method and notification, by its name without the prefix.\n"
            + table("method", [(m.key, f"'{m.name}'") for m in methods.ALL]),
            "-- What the server sends (notifications and requests): a client handles each of them.\n"
            + "M.from_server = { "
            + ", ".join(f"'{m.name}'" for m in methods.ALL if m.sender == "server")
            + " }",
            "-- Titles of the server's work-done progress.\n"
            + table("progress", _PROGRESS),
            "-- JSON-RPC error codes the server answers.\n"
            + table("error", [(e.key, str(e.code)) for e in error_info.CODES]),
            "-- The fields of each params/result type, as they appear on the wire.\n" + table("fields", fields),
            "return M",
        ]
    ) + "\n"


# ---------------------------------------------------------------- docs/protocol.md

BEGIN = "<!-- BEGIN GENERATED by `{command}`: {what} (do not edit by hand) -->"
END = "<!-- END GENERATED: {what} -->"


def _md_type(t: Any) -> str:
    return ts_type(mi.type_info(t)).replace("|", "\\|")


def docs_sections() -> dict[str, str]:
    header = "| method | kind | params | result | what it does |\n|---|---|---|---|---|"

    def rows(sender: str) -> str:
        lines = [header]
        for m in methods.ALL:
            if m.sender == sender:
                result = "—" if m.result is None else f"`{_md_type(m.result)}`"
                lines.append(f"| `{m.name}` | {m.kind} | `{_md_type(m.params)}` | {result} | {m.summary} |")
        return "\n".join(lines)

    error_rows = ["| code | name | when |", "|---|---|---|"]
    error_rows += [f"| {e.code} | {e.name} | {e.when} |" for e in error_info.CODES]
    type_lines = []
    for name, literal in NAMED_LITERALS.items():
        values = " \\| ".join(f"`{_ts_literal(v)}`" for v in typing.get_args(literal))
        type_lines.append(f"- `{name}`: {values}")
    for cls in _structs(_contract_roots()):
        fields = ", ".join(line.strip().rstrip(";") for line in _ts_fields(cls))
        type_lines.append(f"- `{cls.__name__}` = `{{{fields}}}`".replace("|", "\\|"))
    return {
        "methods (client → server)": rows("client"),
        "methods (server → client)": rows("server"),
        "error codes": "\n".join(error_rows),
        "types": "\n".join(type_lines),
    }


def docs(current: str) -> str:
    """`current` with each generated section replaced (a missing section is an error: its place is for people)."""
    for what, body in docs_sections().items():
        begin, end = BEGIN.format(command=COMMAND, what=what), END.format(what=what)
        pattern = re.compile(re.escape(begin) + r"\n.*?\n" + re.escape(end), re.S)
        found = pattern.search(current)
        if found is None:
            raise ValueError(f"{DOCS_PATH} has no generated section for {what!r}: add the lines\n{begin}\n{end}")
        start, stop = found.span()
        current = f"{current[:start]}{begin}\n{body}\n{end}{current[stop:]}"
    return current


# ---------------------------------------------------------------- writing and checking


def outputs(root: Path = ROOT) -> dict[Path, str]:
    """What each generated file should hold."""
    return {
        root / TS_PATH: typescript(),
        root / LUA_PATH: lua(),
        root / DOCS_PATH: docs((root / DOCS_PATH).read_text(encoding="utf-8")),
    }


def stale(root: Path = ROOT) -> list[Path]:
    """The generated files whose content is not what the contract gives."""
    return [
        path
        for path, text in outputs(root).items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]


def main(argv: list[str] | None = None, out: Callable[[str], object] = print) -> int:
    parser = argparse.ArgumentParser(prog="python -m sidecar.protocol.export", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files (exit 1 if any)")
    args = parser.parse_args(argv)
    if args.check:
        old = stale()
        for path in old:
            out(f"stale: {path.relative_to(ROOT)} (run `{COMMAND}` or `make protocol`)")
        return 1 if old else 0
    for path, text in outputs().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            out(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
