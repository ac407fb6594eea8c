"""The fake's model list (GET models), shaped as the Gemini API and Vertex AI's publisher list answer it."""

from __future__ import annotations

import re
from typing import Any

#: GET paths of the model list: the Gemini API's, Vertex AI express mode's and Vertex AI's with a project.
GEMINI_LIST = re.compile(r"^/v1beta/models/?$")
VERTEX_LIST = re.compile(r"^/v1beta1/(?:projects/([^/]+)/locations/([^/]+)/)?publishers/google/models/?$")

_CHAT = ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"]
#: (id, display name, input token limit, supported generation methods): chat models and one that cannot chat.
MODELS: tuple[tuple[str, str, int, list[str]], ...] = (
    ("gemini-2.5-pro", "Gemini 2.5 Pro", 1_048_576, _CHAT),
    ("gemini-2.5-flash", "Gemini 2.5 Flash", 1_048_576, _CHAT),
    ("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", 1_048_576, _CHAT),
    ("gemma-4-31b-it", "Gemma 4 31B", 256_000, ["generateContent", "countTokens"]),
    ("gemini-embedding-001", "Gemini Embedding 001", 2_048, ["embedContent", "countTextTokens", "countTokens"]),
)


def gemini_models() -> dict[str, Any]:
    """The Gemini API's answer (one page: no nextPageToken)."""
    return {
        "models": [
            {
                "name": f"models/{model_id}",
                "version": "001",
                "displayName": display,
                "inputTokenLimit": limit,
                "outputTokenLimit": 65_536,
                "supportedGenerationMethods": methods,
            }
            for model_id, display, limit, methods in MODELS
        ]
    }


def vertex_models() -> dict[str, Any]:
    """Vertex AI's publisher model list (no generation methods, no token limits: Vertex does not list them)."""
    return {
        "publisherModels": [
            {"name": f"publishers/google/models/{model_id}", "versionId": "001", "launchStage": "GA"}
            for model_id, _, _, _ in MODELS
        ]
    }
