"""User settings: the `sidecar` section, decoded field by field so one bad value never costs the others."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from sidecar.core.models import token_limit as model_token_limit

DEFAULT_MODEL = "gemini-2.5-flash"


class HookSpec(msgspec.Struct, forbid_unknown_fields=False):
    """One PreCompress hook command."""

    command: str
    timeout: int | None = None
    matcher: str | None = None


class Hooks(msgspec.Struct, rename={"pre_compress": "PreCompress"}):
    """The hooks section: commands run before a compaction (PreCompress)."""
    pre_compress: list[HookSpec] = msgspec.field(default_factory=list)


class Settings(msgspec.Struct, rename="camel", kw_only=True):
    """Every documented setting with its default (docs/settings.md)."""

    model: str = DEFAULT_MODEL
    api_key: str | None = msgspec.field(default=None)
    base_url: str | None = None
    backend: Literal["gemini", "vertex"] | None = None
    vertex_project: str | None = None
    vertex_location: str | None = None
    token_limit: int | None = None
    compression_threshold: float = 0.5
    #: Background compaction starts preparing a summary at this fraction of the compaction threshold.
    compression_prepare_ratio: float = 0.8
    background_compaction: bool = True
    compression_model: str | None = None
    approved_plan_path: str | None = None
    request_timeout_ms: int = 120_000
    retry_attempts: int = 3
    retry_initial_delay_ms: int = 1_000
    max_tool_rounds: int = 25
    approval_mode: Literal["default", "autoEdit", "yolo"] = "default"
    hooks: Hooks = msgspec.field(default_factory=Hooks)

    def __repr__(self) -> str:  # never show the key
        fields = ", ".join(
            f"{name}={'<redacted>' if name == 'api_key' and value else value!r}"
            for name, value in ((f, getattr(self, f)) for f in self.__struct_fields__)
        )
        return f"Settings({fields})"

    # -- derived values -------------------------------------------------------------------------
    def effective_api_key(self) -> str | None:
        """The key the requests use: the setting, else GEMINI_API_KEY / GOOGLE_API_KEY."""
        return self.api_key or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY") or None

    def effective_base_url(self) -> str | None:
        """Where requests go: the setting, else GOOGLE_GEMINI_BASE_URL."""
        return self.base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL") or None

    def effective_token_limit(self) -> int:
        """The context window in tokens: the setting, else the model's known limit."""
        return self.token_limit if self.token_limit is not None else model_token_limit(self.model)


_RESOURCE_ID = re.compile(r"[a-z][a-z0-9.:-]{0,62}")

# Value checks msgspec types cannot express: (predicate, human description).
_RANGES: dict[str, tuple[Any, str]] = {
    "token_limit": (lambda v: v is None or v > 0, "a positive integer"),
    "compression_threshold": (lambda v: 0 < v <= 1, "a number greater than 0 and at most 1"),
    "compression_prepare_ratio": (lambda v: 0 < v <= 1, "a number greater than 0 and at most 1"),
    "request_timeout_ms": (lambda v: 1 <= v <= 3_600_000, "between 1 and 3600000 milliseconds"),
    "retry_attempts": (lambda v: 0 <= v <= 10, "an integer from 0 to 10"),
    "retry_initial_delay_ms": (lambda v: 0 <= v <= 60_000, "between 0 and 60000 milliseconds"),
    "max_tool_rounds": (lambda v: 1 <= v <= 1_000, "an integer from 1 to 1000"),
    "model": (lambda v: bool(v.strip()), "a non-empty model name"),
    "vertex_project": (lambda v: v is None or _RESOURCE_ID.fullmatch(v) is not None, "a Google Cloud project id"),
    "vertex_location": (lambda v: v is None or _RESOURCE_ID.fullmatch(v) is not None, "a location such as us-central1"),
}

_WIRE_NAMES = {name: Settings.__struct_encode_fields__[i] for i, name in enumerate(Settings.__struct_fields__)}
_BY_WIRE_NAME = {wire: name for name, wire in _WIRE_NAMES.items()}


class SettingsProblem(msgspec.Struct, frozen=True):
    """A setting that could not be used: which one, why, and what is used instead."""

    field: str
    reason: str
    default: str

    def message(self) -> str:
        """The problem in words, naming the setting and the default used instead."""
        return f"Setting sidecar.{self.field} is invalid ({self.reason}); using the default {self.default}."


def _describe_default(name: str) -> str:
    value = getattr(Settings(), name)
    if name == "token_limit" and value is None:
        return "(from the model table)"
    if isinstance(value, msgspec.Struct):
        return "(none)"
    return "(none)" if value is None else repr(value)


def decode_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, list[SettingsProblem]]:
    """Decode the `sidecar` settings section. Unknown keys are ignored; bad values fall back one by one.

    `raw` may be the section itself or an object holding it under "sidecar". Values absent from
    `raw` keep their value from `base` (so partial updates from didChangeConfiguration work).
    """
    settings = base if base is not None else Settings()
    if raw is None:
        return settings, []
    if isinstance(raw, Mapping) and isinstance(raw.get("sidecar"), Mapping):
        raw = raw["sidecar"]
    if not isinstance(raw, Mapping):
        return settings, [SettingsProblem("(section)", "expected an object", "settings")]
    values: dict[str, Any] = {}
    problems: list[SettingsProblem] = []
    for key, value in raw.items():
        name = _BY_WIRE_NAME.get(key)
        if name is None:
            continue
        wire = _WIRE_NAMES[name]
        try:
            single = msgspec.convert({wire: value}, Settings)
            decoded = getattr(single, name)
        except msgspec.ValidationError as exc:
            reason = str(exc).replace(f" - at `$.{wire}`", "").replace(f"at `$.{wire}", "at `")
            problems.append(SettingsProblem(wire, reason, _describe_default(name)))
            continue
        check = _RANGES.get(name)
        if check is not None and not check[0](decoded):
            problems.append(SettingsProblem(wire, f"expected {check[1]}, got {value!r}", _describe_default(name)))
            continue
        values[name] = decoded
    return msgspec.structs.replace(settings, **values), problems
