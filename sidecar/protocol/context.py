"""Wire types of what fills the context window and of the model choice: getContextBreakdown, listModels, setModel,
postponeCompaction."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from sidecar.protocol.types import UsageSource, shown_as

#: A row's category: the request's own parts, pieces carved out of them (memory files, pinned facts, the todo list,
#: masked tool outputs), and the free space up to the compaction threshold and up to the window.
ContextCategory = Literal[
    "systemPrompt",
    "builtinTools",
    "mcpTools",
    "memoryFile",
    "sessionContext",
    "pinnedFacts",
    "todoList",
    "compactionSummary",
    "ideContext",
    "messages",
    "toolOutputs",
    "maskedToolOutputs",
    "freeToThreshold",
    "freeToWindow",
]


class _Wire(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=False):
    """camelCase on the wire; optional fields left out when unset."""


class ContextRow(_Wire, kw_only=True, omit_defaults=False):
    """One category of the next request and its tokens. `source` says whether the number is the API's count
    ("api") or measured here ("estimate": JSON bytes / 4); `target` is what the row opens (a memory file's path,
    an MCP server's name), when it opens something."""

    category: Annotated[str, shown_as(ContextCategory)]
    label: str
    tokens: int
    source: UsageSource
    target: str | None = None


class ContextBreakdown(_Wire, kw_only=True, omit_defaults=False):
    """sidecar/getContextBreakdown's answer: the next request's tokens by category, then the free space.

    `promptTokens` is the status bar's figure (`source` "api": the API's promptTokenCount of the last request
    plus what was added since, measured); the used rows add up to `measuredTokens` (the whole request measured
    here). `apiPromptTokens` is the API's own last count, when it counted this history. `compactsAtNextMessage`:
    the next message compacts first (unless postponed: `compactionPostponed`)."""

    session_id: str
    model: str
    compression_model: str
    token_limit: int
    compression_threshold: float
    threshold_tokens: int
    prompt_tokens: int
    source: UsageSource
    measured_tokens: int
    api_prompt_tokens: int | None
    rows: list[ContextRow]
    compacts_at_next_message: bool = False
    compaction_postponed: bool = False


class ModelInfo(_Wire, kw_only=True, omit_defaults=False):
    """A chat model the backend offers: its id (as `model` takes it), a display name, its context window."""

    id: str
    name: str
    token_limit: int
    current: bool = False


class ListModelsResult(_Wire, kw_only=True, omit_defaults=False):
    """sidecar/listModels' answer: the models that support generateContent, and where the list came from
    ("api": the backend's model list; "table": the known models, when the list could not be had — `problem`
    says why)."""

    models: list[ModelInfo]
    current: str
    source: Literal["api", "table"]
    problem: str | None = None


class SetModelParams(_Wire, kw_only=True):
    """Params of sidecar/setModel: the model to use from the next request on."""

    model: str


class SetModelResult(_Wire, kw_only=True, omit_defaults=False):
    """What the switch did: the model, its window, and `message` in words (e.g. that the next message compacts
    first because the conversation is over the new model's threshold)."""

    model: str
    token_limit: int
    compacts_at_next_message: bool
    message: str


class PostponeCompactionResult(_Wire, kw_only=True, omit_defaults=False):
    """sidecar/postponeCompaction's answer: whether the next message will skip its automatic compaction."""

    postponed: bool
    message: str
