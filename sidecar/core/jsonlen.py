"""JavaScript's JSON.stringify for JSON-like Python values: its text and its length in UTF-16 code units."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import msgspec.inspect as mi

__all__ = [
    "ascii_and_units",
    "js_json_dumps",
    "js_json_length",
    "js_number",
    "utf8_counts",
    "utf16_len",
    "utf16_len_utf8",
]

_encode = msgspec.json.Encoder().encode
_ASCII_BYTES = bytes(range(0x80))
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))
_BELOW_F0 = bytes(range(0xF0))
_MAX_SAFE_INTEGER = 2**53
_LONE_SURROGATE = re.compile("([\ud800-\udfff])")
_NODEFAULT: Any = msgspec.NODEFAULT


# ---------------------------------------------------------------- UTF-16 lengths at C speed


def utf16_len(s: str) -> int:
    """JavaScript's `s.length`: UTF-16 code units (an astral character counts 2, a lone surrogate 1)."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) >> 1


def utf8_counts(data: bytes) -> tuple[int, int, int]:
    """(ASCII characters, non-ASCII characters, of which astral) in UTF-8 (or surrogatepass) `data`."""
    if data.isascii():
        return len(data), 0, 0
    high = data.translate(None, _ASCII_BYTES)  # every byte >= 0x80
    leads = high.translate(None, _CONTINUATION_BYTES)  # one per non-ASCII character
    return len(data) - len(high), len(leads), len(leads.translate(None, _BELOW_F0))  # 4-byte leads


def utf16_len_utf8(data: bytes) -> int:
    """UTF-16 length of the text whose UTF-8 (or surrogatepass) encoding is `data`."""
    if data.isascii():
        return len(data)
    ascii_count, non_ascii, astral = utf8_counts(data)
    return ascii_count + non_ascii + astral


def ascii_and_units(s: str) -> tuple[int, int]:
    """(code units <= 127, total UTF-16 code units) of `s`."""
    if s.isascii():
        return len(s), len(s)
    # A copy of the UTF-8 that CPython caches on the str once msgspec has encoded it (e.g. by measuring its content).
    _, non_ascii, astral = utf8_counts(s.encode("utf-8", "surrogatepass"))
    return len(s) - non_ascii, len(s) + astral


# ---------------------------------------------------------------- numbers


def js_number(x: float) -> str:
    """`JSON.stringify(x)` for a double: shortest round-trip digits in ECMAScript Number::toString layout."""
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x == 0:
        return "0"  # also -0
    text = repr(x)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + (int(exp) if exp else 0)  # value = 0.<digits> * 10**point
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        body = digits + "0" * (point - k)
    elif 0 < point <= 21:
        body = f"{digits[:point]}.{digits[point:]}"
    elif -6 < point <= 0:
        body = "0." + "0" * -point + digits
    else:
        e = point - 1
        suffix = f"e{'+' if e >= 0 else '-'}{abs(e)}"
        body = digits + suffix if k == 1 else f"{digits[0]}.{digits[1:]}{suffix}"
    return sign + body


def _js_int(n: int) -> str:
    """An integer as JavaScript prints it after JSON.parse turned it into a double."""
    if -_MAX_SAFE_INTEGER <= n <= _MAX_SAFE_INTEGER:
        return str(n)
    try:
        return js_number(float(n))
    except OverflowError:  # JSON.parse gives Infinity, which JSON.stringify prints as null
        return "null"


# ---------------------------------------------------------------- faithful (slow) serialiser


def _js_string(s: str) -> str:
    """A JSON string literal exactly as JSON.stringify writes it (lone surrogates as \\udxxx)."""
    try:
        return _encode(s).decode()
    except UnicodeEncodeError:
        pass
    # Python may hold a surrogate pair as two code points; to JavaScript that is one valid character.
    s = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    pieces = _LONE_SURROGATE.split(s)  # odd indices are the lone surrogates
    out = ['"']
    for i, piece in enumerate(pieces):
        if i % 2:
            out.append(f"\\u{ord(piece):04x}")
        elif piece:
            out.append(_encode(piece).decode()[1:-1])
    out.append('"')
    return "".join(out)


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1


def _js_items(d: dict[Any, Any]) -> list[tuple[str, Any]]:
    """Object entries in JavaScript property order: array-index keys ascending, then insertion order."""
    items = [(k if isinstance(k, str) else _scalar(k), v) for k, v in d.items()]
    if any(_is_array_index(k) for k, _ in items):
        index = sorted((kv for kv in items if _is_array_index(kv[0])), key=lambda kv: int(kv[0]))
        items = index + [kv for kv in items if not _is_array_index(kv[0])]
    return items


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return _js_int(v)
    if isinstance(v, float):
        return js_number(v)
    return str(v)


def _dump(v: Any, out: list[str], indent: str, prefix: str) -> None:
    if isinstance(v, str):
        out.append(_js_string(v))
    elif v is None:
        out.append("null")
    elif isinstance(v, (bool, int, float)):
        out.append(_scalar(v))
    elif isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        inner = prefix + indent
        sep = ":" if not indent else ": "
        out.append("{")
        for n, (k, item) in enumerate(_js_items(v)):
            out.append("," if n else "")
            if indent:
                out.append("\n" + inner)
            out.append(_js_string(k) + sep)
            _dump(item, out, indent, inner)
        out.append(("\n" + prefix if indent else "") + "}")
    elif isinstance(v, (list, tuple)):
        if not v:
            out.append("[]")
            return
        inner = prefix + indent
        out.append("[")
        for n, item in enumerate(v):
            out.append("," if n else "")
            if indent:
                out.append("\n" + inner)
            _dump(item, out, indent, inner)
        out.append(("\n" + prefix if indent else "") + "]")
    else:
        raise TypeError(f"not a JSON value: {type(v).__name__}")


def js_json_dumps(value: Any, indent: int | None = None) -> str:
    """`JSON.stringify(value, null, indent)` for a JSON-like value (msgspec Structs as their wire JSON)."""
    out: list[str] = []
    _dump(msgspec.to_builtins(value), out, " " * indent if indent else "", "")
    return "".join(out)


# ---------------------------------------------------------------- fast length


def _unsafe(t: mi.Type, seen: set[type]) -> bool:
    """Whether a value of this declared type may hold a number msgspec prints unlike JavaScript."""
    if isinstance(t, (mi.StrType, mi.BoolType, mi.NoneType)):
        return False
    if isinstance(t, mi.LiteralType):
        return not all(isinstance(v, str) for v in t.values)
    if isinstance(t, mi.UnionType):
        return any(_unsafe(m, seen) for m in t.types)
    if isinstance(t, mi.StructType):
        if t.cls in seen:
            return True
        seen.add(t.cls)
        return any(_unsafe(f.type, seen) for f in t.fields)
    return True


_plans: dict[type, tuple[tuple[str, Any], ...]] = {}


def _struct_plan(cls: type) -> tuple[tuple[str, Any], ...]:
    """The (attribute, default) pairs of a Struct type worth visiting when looking for numbers."""
    plan = _plans.get(cls)
    if plan is None:
        try:
            info = mi.type_info(cls)
            assert isinstance(info, mi.StructType)
            fields = [(f.name, f.default) for f in info.fields if _unsafe(f.type, {cls})]
        except Exception:  # unresolvable annotations: visit every field
            fields = [(name, _NODEFAULT) for name in getattr(cls, "__struct_fields__", ())]
        omit = getattr(getattr(cls, "__struct_config__", None), "omit_defaults", False)
        plan = tuple((name, default if omit else _NODEFAULT) for name, default in fields)
        _plans[cls] = plan
    return plan


def _number_delta(v: Any) -> int:
    """JavaScript length minus msgspec length of every number inside `v`."""
    t = type(v)
    if t is str or t is bool or v is None:
        return 0
    if t is float:
        return len(js_number(v)) - len(_encode(v))
    if t is int:
        return 0 if -_MAX_SAFE_INTEGER <= v <= _MAX_SAFE_INTEGER else len(_js_int(v)) - len(str(v))
    delta = 0
    if t is dict:
        for item in v.values():
            if type(item) is not str:
                delta += _number_delta(item)
    elif t is list or t is tuple:
        for item in v:
            if type(item) is not str:
                delta += _number_delta(item)
    elif isinstance(v, msgspec.Struct):
        for name, default in _struct_plan(t):
            item = getattr(v, name)
            if item is None or (default is not _NODEFAULT and item == default):
                continue
            delta += _number_delta(item)
    elif isinstance(v, (int, float)):  # subclasses (IntEnum, ...): compare as the plain number
        return _number_delta(int(v) if isinstance(v, int) else float(v))
    return delta


def js_json_length(value: Any) -> int:
    """`JSON.stringify(value).length` in UTF-16 code units, computed at C speed.

    Structs count as their wire JSON (camelCase names, defaults omitted). Numbers print as JavaScript
    prints them (1.0 -> 1, 1e21 -> 1e+21, NaN -> null, integers beyond 2**53 rounded to a double).
    """
    try:
        data = _encode(value)
    except UnicodeEncodeError:  # lone surrogates: msgspec refuses them, JavaScript escapes them
        return utf16_len(js_json_dumps(value))
    return utf16_len_utf8(data) + _number_delta(value)
