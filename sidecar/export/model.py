"""The contract as a type model for the generators: every Struct it reaches, named literals and unions."""

from __future__ import annotations

import typing
from collections.abc import Iterable
from typing import Any

import msgspec
import msgspec.inspect as mi

from sidecar.protocol import error_info, methods, sessions, tools, types

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
LITERAL_NAMES = {frozenset(typing.get_args(t)): name for name, t in NAMED_LITERALS.items()}
#: Unions of Structs that the mirrors name.
NAMED_UNIONS: dict[str, Any] = {"TranscriptEntry": sessions.TranscriptEntry}
UNION_NAMES = {frozenset(typing.get_args(t)): name for name, t in NAMED_UNIONS.items()}


def structs(roots: Iterable[Any]) -> list[type[msgspec.Struct]]:
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


def contract_roots() -> list[Any]:
    roots: list[Any] = list(error_info.DATA_TYPES)
    for method in methods.ALL:
        roots.append(method.params)
        if method.result is not None:
            roots.append(method.result)
    return roots


def omits_defaults(cls: type[msgspec.Struct]) -> bool:
    return bool(cls.__struct_config__.omit_defaults)


def without_null(info: mi.Type) -> mi.Type:
    if isinstance(info, mi.UnionType):
        rest = tuple(t for t in info.types if not isinstance(t, mi.NoneType))
        return rest[0] if len(rest) == 1 else mi.UnionType(rest)
    return info


def doc(obj: Any) -> str | None:
    text = (obj.__doc__ or "").strip()
    if not text or text.startswith(("A base class", "Create a new")):  # msgspec.Struct's own docstring
        return None
    return " ".join(line.strip() for line in text.split("\n\n")[0].splitlines())


#: Titles of the server's work-done progress: (key, quoted title) for the mirrors' tables.
PROGRESS = [("turn", f"'{methods.PROGRESS_TURN}'"), ("compress", f"'{methods.PROGRESS_COMPRESS}'")]
