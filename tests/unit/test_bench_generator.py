"""The benchmark input generator: deterministic, on size, and shaped like a coding agent's conversation."""

from __future__ import annotations

import hashlib
import itertools
from typing import Any

import msgspec
import pytest

from bench import generator
from sidecar.core.history import parse_contents
from sidecar.core.tokens import estimate_history_tokens


def digest(value: Any) -> str:
    return hashlib.sha256(msgspec.json.encode(value)).hexdigest()


@pytest.fixture(scope="module")
def conversations() -> dict[str, list[dict[str, Any]]]:
    return {name: generator.conversation(tokens) for name, tokens in generator.CONVERSATION_SIZES.items()}


def test_same_size_and_seed_give_identical_output(conversations: dict[str, list[dict[str, Any]]]) -> None:
    assert digest(generator.conversation(100_000)) == digest(conversations["100k"])
    assert digest(list(generator.session_messages(300))) == digest(list(generator.session_messages(300)))
    assert digest(generator.conversation(100_000, seed=2)) != digest(conversations["100k"])


@pytest.mark.parametrize("name", list(generator.CONVERSATION_SIZES))
def test_conversations_hit_their_size(conversations: dict[str, list[dict[str, Any]]], name: str) -> None:
    tokens = estimate_history_tokens(conversations[name])
    assert tokens == pytest.approx(generator.CONVERSATION_SIZES[name], rel=0.01)


def test_conversations_are_valid_agent_histories(conversations: dict[str, list[dict[str, Any]]]) -> None:
    history = conversations["1m"]
    parse_contents(history)  # every item is a Gemini Content
    assert history[0]["role"] == "user" and history[-1]["role"] == "model"
    assert "functionCall" not in history[-1]["parts"][-1]
    outputs = []
    for before, item in itertools.pairwise(history):
        part = item["parts"][0]
        if "functionResponse" in part:  # answers the call right before it, by id
            call = before["parts"][-1]["functionCall"]
            assert part["functionResponse"]["id"] == call["id"]
            outputs.append(len(part["functionResponse"]["response"]["output"]))
    assert len(outputs) > 50
    assert min(outputs) >= generator.MIN_OUTPUT and max(outputs) <= generator.MAX_OUTPUT
    assert max(outputs) > 100_000  # the long tail is there


def test_text_mix_has_cjk_and_emoji(conversations: dict[str, list[dict[str, Any]]]) -> None:
    chars = "".join(
        p.get("text") or p.get("functionResponse", {}).get("response", {}).get("output", "")
        for c in conversations["500k"]
        for p in c["parts"]
    )
    cjk = sum(1 for ch in chars if 0x3040 <= ord(ch) <= 0x9FFF)
    assert 0.08 <= cjk / len(chars) <= 0.12
    assert any(ord(ch) > 0xFFFF for ch in chars)  # astral emoji: two UTF-16 units each


@pytest.mark.parametrize("count", [100, 1_000])
def test_sessions_have_exactly_n_messages(count: int) -> None:
    messages = list(generator.session_messages(count))
    assert len(messages) == count
    assert {kind for kind, _ in messages} == {"user", "model", "toolCall", "toolResult"}
    assert all(generator.kind_of(content) == kind for kind, content in messages)
