"""The compression split point (reference §1, §9 items 1-10) and the model table."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.core.compaction import (
    ends_with_plain_model_reply,
    find_split_point,
    is_split_candidate,
    measure_content,
)
from sidecar.core.history import parse_contents
from sidecar.core.jsonlen import js_json_length
from sidecar.core.models import compression_model_alias, token_limit
from tests.examples import examples


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def model(text: str) -> dict[str, Any]:
    return {"role": "model", "parts": [{"text": text}]}


FIVE = [
    user("This is the first message."),
    model("This is the second message."),
    user("This is the third message."),
    model("This is the fourth message."),
    user("This is the fifth message."),
]


@pytest.mark.parametrize("fraction", [0, 1, -0.5, 1.5, math.nan])
def test_fraction_outside_zero_one_is_rejected_with_the_value(fraction: float) -> None:
    with pytest.raises(ValueError, match=r"Fraction must be between 0 and 1, got"):
        find_split_point([], fraction)


def test_empty_history_splits_at_zero() -> None:
    assert find_split_point([], 0.5) == 0


def test_middle_fraction_picks_first_user_message_at_or_past_the_target() -> None:
    assert [js_json_length(c) for c in FIVE] == [63, 65, 63, 65, 63]  # the reference's comments say 66, 68, ...
    assert find_split_point(FIVE, 0.5) == 4


def test_fraction_near_the_end_still_returns_the_last_user_message() -> None:
    assert find_split_point(FIVE, 0.9) == 4


def test_history_ending_with_a_plain_model_reply_compresses_everything() -> None:
    assert find_split_point(FIVE[:4], 0.8) == 4


def test_no_valid_split_after_target_and_pending_function_call_returns_earlier_split() -> None:
    history = [*FIVE[:3], {"role": "model", "parts": [{"functionCall": {"name": "foo", "args": {}}}]}]
    assert find_split_point(history, 0.99) == 2


def test_single_user_message_splits_at_zero() -> None:
    assert find_split_point([user("Message 1")], 0.5) == 0


def test_non_text_parts_in_model_turns_do_not_break_the_split() -> None:
    history = [
        user("Message 1"),
        {"role": "model", "parts": [{"fileData": {"fileUri": "derp", "mimeType": "text/plain"}}]},
        user("Message 2"),
    ]
    assert find_split_point(history, 0.5) == 2


def test_user_turns_carrying_function_responses_are_never_split_points() -> None:
    response = {"role": "user", "parts": [{"functionResponse": {"name": "t", "response": {"output": "x" * 500}}}]}
    call = {"role": "model", "parts": [{"functionCall": {"name": "t", "args": {}}}]}
    history = [user("go"), call, response, model("done")]
    assert find_split_point(history, 0.5) == 4  # ends on a plain model reply
    assert find_split_point([*history[:3], call], 0.5) == 0  # index 2 is a response: only 0 is valid
    # An empty functionResponse object is still truthy in JavaScript.
    assert not is_split_candidate({"role": "user", "parts": [{"functionResponse": {}}]})
    assert is_split_candidate({"role": "user", "parts": [{"functionResponse": None}]})
    assert is_split_candidate({"role": "user"})


def test_last_content_checks_follow_javascript_truthiness() -> None:
    assert not ends_with_plain_model_reply([{"role": "model", "parts": [{"functionCall": {}}]}])
    assert ends_with_plain_model_reply([{"role": "model", "parts": [{"functionCall": None}]}])
    assert ends_with_plain_model_reply([{"role": "model"}])
    assert not ends_with_plain_model_reply([])


def test_sizes_are_utf16_json_lengths_so_emoji_move_the_split() -> None:
    history = [user("😀" * 40), model("a"), user("b" * 40), model("c"), user("d")]
    sizes = [js_json_length(c) for c in history]
    assert sizes == [117, 39, 77, 39, 38]  # each emoji is 2 UTF-16 units
    assert find_split_point(history, 0.5) == 2
    # Counting code points (Python's len of the same compact JSON) would move the split to 4.
    code_points = [len(json.dumps(c, ensure_ascii=False, separators=(",", ":"))) for c in history]
    assert find_split_point(history, 0.5, code_points) == 4


def test_structs_and_cached_sizes_give_the_same_split() -> None:
    raw = [user("中文" * 30), model("ok"), user("more 😀"), model("x"), user("last"), model("bye")]
    contents = parse_contents(raw)
    cached = [measure_content(c).json_length for c in contents]
    for fraction in (0.1, 0.3, 0.5, 0.7, 0.9):
        expected = find_split_point(raw, fraction)
        assert find_split_point(contents, fraction) == expected
        assert find_split_point(contents, fraction, cached) == expected
    with pytest.raises(ValueError, match="sizes"):
        find_split_point(contents, 0.5, cached[:-1])


roles = st.sampled_from(["user", "model"])
part = st.one_of(
    st.builds(lambda t: {"text": t}, st.text(max_size=40)),
    st.just({"functionCall": {"name": "f", "args": {}}}),
    st.just({"functionResponse": {"name": "f", "response": {"output": "ok"}}}),
)
histories = st.lists(st.builds(lambda r, p: {"role": r, "parts": p}, roles, st.lists(part, max_size=3)), max_size=12)


@settings(max_examples=examples(300), deadline=None)
@given(histories, st.floats(min_value=0.01, max_value=0.99))
def test_split_is_always_a_safe_boundary(history: list[dict[str, Any]], fraction: float) -> None:
    split = find_split_point(history, fraction)
    assert 0 <= split <= len(history)
    if split == len(history) and history:
        assert ends_with_plain_model_reply(history)
    elif 0 < split < len(history):
        assert is_split_candidate(history[split])


def test_unknown_models_map_to_the_default_compression_alias() -> None:
    assert compression_model_alias("gemini-flash-flash") == "chat-compression-default"


@pytest.mark.parametrize(
    ("name", "alias"),
    [
        ("gemini-3-pro-preview", "chat-compression-3-pro"),
        ("gemini-3.1-pro-preview", "chat-compression-3-pro"),
        ("gemini-2.5-pro", "chat-compression-2.5-pro"),
        ("gemini-2.5-flash", "chat-compression-2.5-flash"),
        ("gemini-2.5-flash-lite", "chat-compression-2.5-flash-lite"),
        ("gemini-3-flash-preview", "chat-compression-3-flash"),
        ("gemini-3.5-flash", "chat-compression-3-flash"),
        ("gemini-3.8-flash", "chat-compression-3-flash"),
        ("gemini-3-flash", "chat-compression-3-flash"),
        ("gemini-3.1-flash-lite", "chat-compression-3.1-flash-lite"),
        ("gemini-3.5-flash-lite", "chat-compression-3.1-flash-lite"),
    ],
)
def test_known_models_map_to_their_compression_alias(name: str, alias: str) -> None:
    assert compression_model_alias(name) == alias


def test_token_limits() -> None:
    assert token_limit("gemini-2.5-pro") == token_limit("anything") == 1_048_576
    assert token_limit("gemma-4-31b-it") == token_limit("gemma-4-26b-a4b-it") == 256_000
