"""Model facts used by compaction: context-window sizes and the summarizer's model-config alias."""

from __future__ import annotations

__all__ = [
    "DEFAULT_TOKEN_LIMIT",
    "GEMMA_4_TOKEN_LIMIT",
    "KNOWN_CHAT_MODELS",
    "chat_model_id",
    "compression_model_alias",
    "offers_chat",
    "token_limit",
]

# Constants of @google/gemini-cli-core 0.61.0 (config/models.js, core/tokenLimits.js).
DEFAULT_TOKEN_LIMIT = 1_048_576
GEMMA_4_TOKEN_LIMIT = 256_000

_GEMMA_4_MODELS = frozenset({"gemma-4-31b-it", "gemma-4-26b-a4b-it"})

# The reference switches on mutable "current flash model" bindings; these are their default values.
_COMPRESSION_ALIASES: dict[str, str] = {
    "gemini-3-pro-preview": "chat-compression-3-pro",
    "gemini-3.1-pro-preview": "chat-compression-3-pro",
    "gemini-3-flash-preview": "chat-compression-3-flash",
    "gemini-3.5-flash": "chat-compression-3-flash",
    "gemini-3.8-flash": "chat-compression-3-flash",
    "gemini-3-flash": "chat-compression-3-flash",
    "none": "chat-compression-3.1-flash-lite",  # the deprecated PREVIEW_GEMINI_FLASH_LITE_MODEL constant
    "gemini-3.1-flash-lite": "chat-compression-3.1-flash-lite",
    "gemini-3.5-flash-lite": "chat-compression-3.1-flash-lite",
    "gemini-2.5-flash-lite": "chat-compression-2.5-flash-lite",
    "gemini-2.5-pro": "chat-compression-2.5-pro",
    "gemini-2.5-flash": "chat-compression-2.5-flash",
}


def token_limit(model: str) -> int:
    """The context window of `model` in tokens (1,048,576 unless it is a Gemma 4 model)."""
    return GEMMA_4_TOKEN_LIMIT if model in _GEMMA_4_MODELS else DEFAULT_TOKEN_LIMIT


def compression_model_alias(model: str) -> str:
    """The summarizer's model-config alias for a chat on `model` (modelStringToModelConfigAlias)."""
    return _COMPRESSION_ALIASES.get(model, "chat-compression-default")


#: The chat models offered when the backend's model list cannot be had (offline, or Vertex AI): id, display name.
KNOWN_CHAT_MODELS: tuple[tuple[str, str], ...] = (
    ("gemini-2.5-pro", "Gemini 2.5 Pro"),
    ("gemini-2.5-flash", "Gemini 2.5 Flash"),
    ("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite"),
    ("gemini-3-pro-preview", "Gemini 3 Pro Preview"),
    ("gemini-3-flash-preview", "Gemini 3 Flash Preview"),
    ("gemma-4-31b-it", "Gemma 4 31B"),
)


def offers_chat(model_id: str, methods: list[str]) -> bool:
    """Whether a listed model can chat: its methods include generateContent; a list without methods (Vertex AI's
    publisher list) offers the Gemini and Gemma families, embedding models left out."""
    if methods:
        return "generateContent" in methods
    return model_id.startswith(("gemini", "gemma")) and "embedding" not in model_id


def chat_model_id(name: str) -> str:
    """A listed model's id as the `model` setting takes it: the resource name without `models/` or a publisher."""
    return name.rsplit("/", 1)[-1]
