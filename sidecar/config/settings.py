"""User settings: the `sidecar` section, decoded field by field so one bad value never costs the others."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from sidecar.config.context_names import name_problem
from sidecar.core.models import token_limit as model_token_limit

DEFAULT_MODEL = "gemini-2.5-flash"


class HookSpec(msgspec.Struct, forbid_unknown_fields=False):
    """One hook command (docs/hooks.md)."""

    command: str
    timeout: int | None = None
    matcher: str | None = None


class Hooks(
    msgspec.Struct,
    rename={"pre_compress": "PreCompress", "before_agent": "BeforeAgent", "session_start": "SessionStart"},
):
    """The hooks section: commands run before a compaction, before each user turn, when a session starts."""

    pre_compress: list[HookSpec] = msgspec.field(default_factory=list)
    before_agent: list[HookSpec] = msgspec.field(default_factory=list)
    session_start: list[HookSpec] = msgspec.field(default_factory=list)


class ToolOutputMasking(msgspec.Struct, rename="camel", kw_only=True, forbid_unknown_fields=True):
    """Masking old tool outputs before every request (docs/compaction.md, "Layer 1: masking")."""

    enabled: bool = True
    #: The newest tool-output tokens always sent whole (the reference's protectionThresholdTokens, 50,000 there:
    #: 30,000 here sends 18% fewer billed tokens over the long-session bench, docs/performance.md).
    protection_tokens: int = 30_000
    #: Mask only when at least this many tool-output tokens can be masked (minPrunableThresholdTokens, 30,000 there).
    min_prunable_tokens: int = 20_000
    #: The latest turn is never masked (protectLatestTurn).
    protect_latest_turn: bool = True
    #: A masking must repay the cache it breaks within this many requests (0: the reference's rule alone). 4 kept
    #: ~150k tokens unmasked between batches and cost 17% more billed tokens over 200 turns than 20.
    payback_requests: int = 20
    #: Tools whose outputs are never masked (e.g. a tool that returns notes the model must keep seeing).
    exempt_tools: list[str] = msgspec.field(default_factory=list)
    #: MCP servers (by their name in mcpServers) whose tools' outputs are never masked.
    exempt_mcp_servers: list[str] = msgspec.field(default_factory=list)


#: The hook events by wire name, with their attribute on Hooks.
HOOK_EVENTS = {"PreCompress": "pre_compress", "BeforeAgent": "before_agent", "SessionStart": "session_start"}


def flat_hooks(value: Any) -> Any:
    """The `hooks` value with Gemini CLI's nested entries `{matcher, hooks: [{type, command, timeout}]}` spelled
    as this project's flat `{command, timeout, matcher}` ones (anything else is left for the decoder to judge)."""
    if not isinstance(value, Mapping):
        return value
    flat: dict[Any, Any] = {}
    for event, entries in value.items():
        if not isinstance(entries, list):
            flat[event] = entries
            continue
        flat[event] = []
        for entry in entries:
            if isinstance(entry, Mapping) and "command" not in entry and isinstance(entry.get("hooks"), list):
                group = {"matcher": entry["matcher"]} if "matcher" in entry else {}
                flat[event] += [{**inner, **group} if isinstance(inner, Mapping) else inner for inner in entry["hooks"]]
            else:
                flat[event].append(entry)
    return flat


def concat_hooks(*sections: Hooks) -> Hooks:
    """Hooks of several sources run one after another: each event's lists joined, in the order given."""
    return Hooks(**{a: [spec for section in sections for spec in getattr(section, a)] for a in HOOK_EVENTS.values()})


def _about(
    description: str,
    *,
    schema: dict[str, Any] | None = None,
    vscode: dict[str, Any] | None = None,
    note_vscode: str = "",
) -> msgspec.Meta:
    """A setting's documentation, the one source of docs/settings.md's table and the editors' settings lists.

    `schema`: JSON-schema bounds the editors show (the checks themselves are `_RANGES`, tested to agree);
    `vscode`: extra keys of its `contributes.configuration` entry (`{"hidden": True}`: not a VS Code setting);
    `note_vscode`: a sentence only VS Code's description adds.
    """
    extra: dict[str, Any] = {"vscode": vscode or {}, "note_vscode": note_vscode}
    return msgspec.Meta(description=description, extra_json_schema=schema or {}, extra=extra)


_MACHINE = {"scope": "machine-overridable"}


class Settings(msgspec.Struct, rename="camel", kw_only=True):
    """Every documented setting with its default (docs/settings.md)."""

    model: Annotated[str, _about("The chat model.")] = DEFAULT_MODEL
    api_key: Annotated[
        str | None,
        _about(
            "Gemini API key. Unset: env `GEMINI_API_KEY`, then `GOOGLE_API_KEY`. Never logged or echoed.",
            vscode={"hidden": True},  # VS Code keeps it in its secret storage (Sidecar: Set API Key)
        ),
    ] = msgspec.field(default=None)
    base_url: Annotated[
        str | None,
        _about(
            "Gemini-compatible endpoint (a proxy, or the fake Gemini); API version `v1beta` (Vertex AI: `v1beta1`). "
            "Unset: env `GOOGLE_GEMINI_BASE_URL` (Vertex AI: `GOOGLE_VERTEX_BASE_URL`), else Google's endpoint.",
            note_vscode="The API key is set with **Sidecar: Set API Key** and kept in VS Code's secret storage, "
            "never in settings.",
        ),
    ] = None
    backend: Annotated[
        Literal["gemini", "vertex"] | None,
        _about(
            "Which API: `gemini` (the Gemini API, with an API key) or `vertex` (Vertex AI with Application Default "
            "Credentials: `gcloud auth application-default login`). Unset: from env `GOOGLE_GENAI_USE_VERTEXAI` "
            "(`true`/`1`: `vertex`); with nothing configured the embedded fake Gemini answers.",
            vscode=_MACHINE,
        ),
    ] = None
    vertex_project: Annotated[
        str | None,
        _about(
            "Vertex AI: the Google Cloud project. Unset: env `GOOGLE_CLOUD_PROJECT`, else the credentials' project.",
            vscode=_MACHINE,
        ),
    ] = None
    vertex_location: Annotated[
        str | None,
        _about(
            "Vertex AI: the location, e.g. `us-central1` or `global`. Unset: env `GOOGLE_CLOUD_LOCATION`, "
            "else `us-central1`.",
            vscode=_MACHINE,
        ),
    ] = None
    token_limit: Annotated[
        int | None,
        _about(
            "The context window used for percentages and the compression threshold. Unset: from the model table "
            "(1,048,576 for Gemini models; 256,000 for Gemma 4).",
            schema={"minimum": 1},
        ),
    ] = None
    compression_threshold: Annotated[
        float,
        _about(
            "Automatic compaction starts when the last prompt reaches this fraction of the token limit; the "
            "status bar turns to the warning colour there.",
            schema={"exclusiveMinimum": 0, "maximum": 1},
        ),
    ] = 0.5
    compression_prepare_ratio: Annotated[
        float,
        _about(
            "Background compaction starts preparing a summary when the last prompt reaches this fraction of the "
            "compression threshold (by default 80% of it, i.e. 40% of the token limit), so the turn that crosses "
            "the threshold does not wait for it (docs/compaction.md).",
            schema={"exclusiveMinimum": 0, "maximum": 1},
        ),
    ] = 0.8
    background_compaction: Annotated[
        bool,
        _about(
            "Prepare the compaction summary in the background while you keep chatting. Off: the turn that "
            "crosses the threshold waits for the summary inside the turn (Gemini CLI's behaviour)."
        ),
    ] = True
    compression_model: Annotated[
        str | None, _about("Model used for summaries. Unset: derived from the chat model (docs/compaction.md).")
    ] = None
    approved_plan_path: Annotated[
        str | None,
        _about("An approved plan file whose steps every summary must keep (docs/compaction.md). Unset: none."),
    ] = None
    request_timeout_ms: Annotated[
        int,
        _about(
            "Timeout of each HTTP request to Gemini, in milliseconds: connecting, sending, and each wait for data "
            "(a reply that keeps streaming is not cut off).",
            schema={"minimum": 1, "maximum": 3_600_000},
        ),
    ] = 120_000
    retry_attempts: Annotated[
        int,
        _about(
            "Retries of rate limits (429), server errors (5xx), timeouts (408) and connection failures.",
            schema={"minimum": 0, "maximum": 10},
        ),
    ] = 3
    retry_initial_delay_ms: Annotated[
        int,
        _about(
            "First retry delay in milliseconds; doubles on each retry (±25% jitter); a 429's `retryDelay` wins. "
            "Also the base of the waits between attempts at an unusable reply (×1, ×2, ×4; docs/protocol.md).",
            schema={"minimum": 0, "maximum": 60_000},
        ),
    ] = 1_000
    max_tool_rounds: Annotated[
        int, _about("Tool-call rounds per user turn.", schema={"minimum": 1, "maximum": 1_000})
    ] = 25
    approval_mode: Annotated[
        Literal["default", "autoEdit", "yolo"],
        _about(
            "Which tool calls ask for confirmation (docs/tools.md).",
            vscode={
                "enumDescriptions": [
                    "Ask before every tool call that changes something.",
                    "Apply edits without asking; ask for other tools.",
                    "Never ask (dangerous).",
                ]
            },
        ),
    ] = "default"
    mcp_servers: Annotated[
        dict[str, Any],
        _about(
            "MCP servers whose tools the agent may use, by name: each `{command, args, env, cwd}` (stdio), "
            "`{url, type: http|sse, headers}` or `{httpUrl, headers}`, plus `timeout` (ms), `trust`, `includeTools`, "
            "`excludeTools`, `description` (docs/mcp.md). A workspace's servers start only in a trusted "
            "workspace once you approved each, never with `trust`, never under a name your own settings use.",
            vscode=_MACHINE,
        ),
    ] = msgspec.field(default_factory=dict)
    hooks: Annotated[
        Hooks,
        _about(
            "Commands run at points of a session, by event: `PreCompress` (before a compaction), `BeforeAgent` "
            "(before each of your messages: may add context or block it), `SessionStart` (may add context), e.g. "
            '`{"BeforeAgent": [{"command": "./check.sh"}]}`; each may set `timeout` (milliseconds, default '
            "60000) and `matcher`. The editor's, the user file's and a trusted workspace file's hooks all run, in "
            "that order (docs/hooks.md).",
            vscode=_MACHINE,
        ),
    ] = msgspec.field(default_factory=Hooks)
    loop_detection: Annotated[
        bool,
        _about(
            "Loop detection within a turn: the same 1–5 tool calls repeated 5 times, or the same text repeated 10 "
            "times close together. The first time the model is warned (in that request only); the second time the "
            "turn stops with finish reason `LOOP_DETECTED` and you are told what repeated (docs/tools.md)."
        ),
    ] = True
    tool_output_masking: Annotated[
        ToolOutputMasking,
        _about(
            "Before every request, old tool outputs are replaced by a short preview and the path of the saved full "
            "output (which `read_file` reads back); you are told once per masking. `enabled` (default true); "
            "`protectionTokens` (30000: the newest tool output kept whole); `minPrunableTokens` (20000: mask only "
            "that much at once); `protectLatestTurn` (true); `paybackRequests` (20: wait for a batch whose saving "
            "repays the broken cache within that many requests; 0: the reference's rule alone); `exemptTools` and "
            "`exemptMcpServers` (never masked). See docs/compaction.md.",
        ),
    ] = msgspec.field(default_factory=ToolOutputMasking)
    checkpointing: Annotated[
        bool,
        _about(
            "Save a file's content before the agent's first change to it in a turn (write_file, replace, files a "
            "shell command names), in every approval mode, so that a rewind can put the files back with the "
            "conversation (docs/checkpoints.md). Off: nothing is saved, and a rewind restores no files."
        ),
    ] = True
    checkpoint_max_file_bytes: Annotated[
        int,
        _about(
            "Files larger than this many bytes (and binary files) are not saved by checkpoints; a rewind names them "
            "as skipped.",
            schema={"minimum": 0},
        ),
    ] = 5 * 1024 * 1024
    checkpoint_store_mb: Annotated[
        int,
        _about(
            "The most the project's checkpoint store may hold, in megabytes; past it the contents saved longest ago "
            "are removed first, never those a session open in a sidecar still needs (docs/checkpoints.md).",
            schema={"minimum": 1},
        ),
    ] = 500
    truncate_tool_output_threshold: Annotated[
        int,
        _about(
            "Shell output longer than this many characters (or 4 × the tokens left in the window, if less) is "
            "saved in full and shown to the model as its first 20% and last 80%, with the file to read the rest "
            "(docs/tools.md). `0` turns it off.",
            schema={"minimum": 0},
        ),
    ] = 40_000
    context_file_names: Annotated[
        list[str],
        _about(
            "Names of the instruction files the agent loads (docs/memory.md): `~/.gemini/<name>` for every "
            "workspace, and in a trusted workspace each folder's files from its project root down, plus a "
            "subfolder's files when a tool first touches it. `[]` loads none. Plain file names only (no folder, no "
            "`..`), never a credential file's (`oauth_creds.json`, `*.pem`, `id_*`, `.env*`, `credentials*.json`); "
            "a workspace cannot set it.",
        ),
    ] = msgspec.field(default_factory=lambda: ["GEMINI.md", "AGENTS.md"])
    memory_boundary_markers: Annotated[
        list[str],
        _about(
            "Files or folders that mark a project root: context files are looked for from each workspace folder "
            "up to the first folder holding one of them (none found: the workspace folder only), and `@path` "
            "imports stay inside that root (docs/memory.md).",
        ),
    ] = msgspec.field(default_factory=lambda: [".git"])
    include_directory_tree: Annotated[
        bool,
        _about(
            "The session context that opens every conversation shows each workspace folder's tree (at most 200 "
            "entries, `.gitignore` respected) (docs/memory.md).",
        ),
    ] = True

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


def _plain_relative(name: str) -> bool:
    """A non-empty name relative to a folder that cannot climb out of it."""
    stripped = name.strip()
    return bool(stripped) and not os.path.isabs(stripped) and ".." not in re.split(r"[\\/]", stripped)


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
    "checkpoint_max_file_bytes": (lambda v: v >= 0, "0 or a positive number of bytes"),
    "checkpoint_store_mb": (lambda v: v >= 1, "a positive number of megabytes"),
    "truncate_tool_output_threshold": (lambda v: v >= 0, "0 (off) or a positive number of characters"),
    "model": (lambda v: bool(v.strip()), "a non-empty model name"),
    "tool_output_masking": (
        lambda v: min(v.protection_tokens, v.min_prunable_tokens, v.payback_requests) >= 0,
        "non-negative token counts and paybackRequests",
    ),
    "context_file_names": (
        lambda v: all(name_problem(n) is None for n in v),
        "plain file names (no folder, no `..`), none a credential file (oauth_creds.json, *.pem, id_*, .env*, "
        "credentials*.json)",
    ),
    "memory_boundary_markers": (lambda v: all(_plain_relative(n) for n in v), "names relative to a folder, no `..`"),
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
    if isinstance(raw, Mapping) and isinstance(raw.get("sidecar"), list | Mapping):
        raw = raw["sidecar"]
    if raw is None or raw == []:  # an empty list too: clients encode an empty Lua table as `[]` (no settings)
        return settings, []
    if not isinstance(raw, Mapping):
        return settings, [SettingsProblem("(section)", "expected an object", "settings")]
    values: dict[str, Any] = {}
    problems: list[SettingsProblem] = []
    for key, value in raw.items():
        name = _BY_WIRE_NAME.get(key)
        if name is None:
            continue
        wire = _WIRE_NAMES[name]
        if name == "hooks":
            value = flat_hooks(value)
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
