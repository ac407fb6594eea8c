"""Token estimate (reference §6, §9 item 69) and the JSON.stringify length it and the split point rely on."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.core.compaction import measure_content
from sidecar.core.history import Blob, Content, FileData, FunctionCall, FunctionResponse, Part, parse_contents
from sidecar.core.jsonlen import ascii_and_units, js_json_dumps, js_json_length, js_number, utf16_len
from sidecar.core.tokens import (
    content_quarters,
    estimate_content_tokens,
    estimate_history_tokens,
    estimate_tokens,
    quarters_to_tokens,
)
from tests.examples import examples

# ---------------------------------------------------------------- JSON.stringify length


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"role": "user", "parts": [{"text": "hi"}]}, '{"role":"user","parts":[{"text":"hi"}]}'),
        ("héllo", '"héllo"'),
        ("\n\t\r\b\f\x00\x1f\x7f\u2028", '"\\n\\t\\r\\b\\f\\u0000\\u001f\x7f\u2028"'),
        ('"\\/', '"\\"\\\\/"'),
        ([1.0, 1e21, 1e-7, -0.0, 0.1, 1e16, 123e-20], "[1,1e+21,1e-7,0,0.1,10000000000000000,1.23e-18]"),
        ([float("nan"), float("inf")], "[null,null]"),
        (
            [2**53, 2**53 + 1, 2**64, -(10**25), 10**400],
            "[9007199254740992,9007199254740992,18446744073709552000,-1e+25,null]",
        ),
        ([True, False, None, [], {}], "[true,false,null,[],{}]"),
    ],
)
def test_json_text_and_length_follow_javascript(value: Any, expected: str) -> None:
    assert js_json_dumps(value) == expected
    assert js_json_length(value) == utf16_len(expected)


def test_json_length_counts_utf16_units_so_emoji_count_two() -> None:
    assert js_json_length("😀") == 4  # two quotes + a surrogate pair
    assert js_json_length("中文") == 4
    assert len(json.dumps("😀", ensure_ascii=False)) == 3  # what a naive Python measure would say


def test_lone_surrogates_are_escaped_as_six_units_but_pairs_held_as_two_code_points_join() -> None:
    assert js_json_dumps("a\ud800b") == '"a\\ud800b"'
    assert js_json_length("a\ud800b") == 10
    assert js_json_length("\ud83d\ude00") == 4  # a valid pair in UTF-16, even as two Python code points
    assert js_json_length({"t": ["\udfff", "x"]}) == utf16_len('{"t":["\\udfff","x"]}')


def test_structs_measure_as_their_camel_case_wire_json_without_defaults() -> None:
    content = Content(role="model", parts=[Part(function_call=FunctionCall(name="f", args={"x": 1.0, "y": 2**60}))])
    wire = '{"role":"model","parts":[{"functionCall":{"name":"f","args":{"x":1,"y":1152921504606847000}}}]}'
    assert js_json_length(content) == len(wire)
    assert js_json_dumps(content) == wire


def test_pretty_json_puts_array_index_keys_first_like_javascript() -> None:
    text = js_json_dumps({"b": 1, "10": [1.5, {}], "2": "x", "02": None}, indent=2)
    assert text == '{\n  "2": "x",\n  "10": [\n    1.5,\n    {}\n  ],\n  "b": 1,\n  "02": null\n}'


@pytest.mark.parametrize(
    ("x", "text"),
    [(1.5e-7, "1.5e-7"), (1e-6, "0.000001"), (123456789.125, "123456789.125"), (1.2e21, "1.2e+21"), (-2.5, "-2.5")],
)
def test_js_number_formatting(x: float, text: str) -> None:
    assert js_number(x) == text


# Text that includes surrogates (lone, or pairs split into two code points) and astral characters.
any_text = st.text(
    alphabet=st.characters(exclude_categories=[]) | st.sampled_from("\ud800\udc00\udfff😀中é\n\x00\x7f"), max_size=12
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | any_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(any_text, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=examples(300), deadline=None)
@given(json_values)
def test_fast_length_equals_the_faithful_serialiser(value: Any) -> None:
    assert js_json_length(value) == utf16_len(js_json_dumps(value))


@settings(max_examples=examples(200), deadline=None)
@given(json_values)
def test_faithful_serialiser_reparses_to_the_same_json(value: Any) -> None:
    text = js_json_dumps(value)
    again = json.loads(text)
    assert js_json_dumps(again) == text


@given(any_text)
def test_ascii_and_units_counts(s: str) -> None:
    units = s.encode("utf-16-le", "surrogatepass")
    codes = [int.from_bytes(units[i : i + 2], "little") for i in range(0, len(units), 2)]
    assert ascii_and_units(s) == (sum(c <= 127 for c in codes), len(codes))


# ---------------------------------------------------------------- the estimate (tokenCalculation tests, §9 item 69)


def test_ascii_text_is_a_quarter_token_per_char() -> None:
    assert estimate_tokens([{"text": "Hello world!"}]) == 3


def test_cjk_and_other_non_ascii_count_one_and_a_half_per_unit() -> None:
    assert estimate_tokens([{"text": "你好"}]) == 3
    assert estimate_tokens([{"text": "Hi你好"}]) == 3  # 0.5 + 3.0
    assert estimate_tokens([{"text": "é"}]) == 1
    assert estimate_tokens([{"text": "😀"}]) == 3  # two UTF-16 units
    assert estimate_tokens([{"text": "\ud800"}]) == 1  # a lone surrogate is one unit


def test_empty_and_nullish_inputs_estimate_zero() -> None:
    assert estimate_tokens([]) == 0
    assert estimate_tokens([{"text": ""}]) == 0
    assert estimate_tokens([{}]) == 0  # JSON "{}" is 2 chars: 0.5 floors to 0


def test_strings_over_100k_units_use_length_over_four() -> None:
    assert estimate_tokens([{"text": "a" * 200_000}]) == 50_000
    assert estimate_tokens([{"text": "中" * 100_000}]) == 150_000  # at the limit: full heuristic
    assert estimate_tokens([{"text": "中" * 100_001}]) == 25_000  # above it: length / 4, CJK ignored
    assert estimate_tokens([{"text": "😀" * 50_001}]) == 25_000  # 100,002 UTF-16 units


def test_chars_per_token_argument_is_respected() -> None:
    parts = [{"text": "abcdefghijkl"}]
    assert [estimate_tokens(parts), estimate_tokens(parts, 3), estimate_tokens(parts, 2)] == [3, 4, 6]
    massive = [{"text": "a" * 120_000}]
    assert (estimate_tokens(massive, 4), estimate_tokens(massive, 3)) == (30_000, 40_000)
    with pytest.raises(ValueError, match="chars_per_token"):
        estimate_tokens(parts, 0)


def test_non_dyadic_chars_per_token_sums_doubles_in_reference_order() -> None:
    text = "ab" * 30 + "中"
    total = 0.0
    for ch in text:
        total += 1 / 3 if ord(ch) <= 127 else 1.5
    assert estimate_tokens([{"text": text}], 3) == math.floor(total)


def test_function_response_counts_name_and_json_payload_without_the_wrapper() -> None:
    part = {"functionResponse": {"name": "my_tool", "id": "123", "response": {"output": "result" * 1000}}}
    assert estimate_tokens([part]) == 1505  # (7 + 6013) / 4
    as_string = {"functionResponse": {"name": "t", "response": "中" * 7}}
    assert estimate_tokens([as_string]) == 2  # a string response counts its length, not 1.5 per CJK char


def test_nested_function_response_parts_are_counted_and_floored() -> None:
    part = {
        "functionResponse": {
            "name": "multimodal_tool",
            "id": "456",
            "response": {"status": "success"},
            "parts": [{"inlineData": {"mimeType": "image/png", "data": "base64..."}}, {"text": "Look at this image"}],
        }
    }
    assert estimate_tokens([part]) == 3012  # (15 + 20) / 4 + floor(3000 + 4.5)


def _nest(depth: int) -> dict[str, Any]:
    fr: dict[str, Any] = {"name": f"d{depth}", "response": {"val": "a"}}
    if depth < 5:
        fr["parts"] = [_nest(depth + 1)]
    return {"functionResponse": fr}


def test_nested_function_responses_stop_below_depth_three() -> None:
    # d0..d3 count 13/4 each, floored at every level: floor(3.25 + floor(3.25 + floor(3.25 + floor(3.25)))).
    assert estimate_tokens([_nest(0)]) == 12
    assert estimate_tokens([_nest(0)], depth=3) == 3
    assert estimate_tokens([_nest(0)], depth=4) == 0


def test_media_uses_fixed_estimates_by_mime_type() -> None:
    assert estimate_tokens([{"text": "Hello"}, {"inlineData": {"mimeType": "image/png", "data": "d"}}]) == 3001
    assert estimate_tokens([{"inlineData": {"mimeType": "application/pdf", "data": "x" * 10**6}}]) == 25_800
    assert estimate_tokens([{"fileData": {"mimeType": "image/jpeg", "fileUri": "gs://x"}}]) == 3000
    # An empty inline mime type falls through to fileData's (JavaScript `||`).
    both = {"inlineData": {"mimeType": "", "data": ""}, "fileData": {"mimeType": "application/pdf"}}
    assert estimate_tokens([both]) == 25_800
    other = {"inlineData": {"mimeType": "text/plain", "data": "abcd"}}
    assert estimate_tokens([other]) == js_json_length(other) // 4


def test_other_parts_count_their_json_length() -> None:
    call = {"functionCall": {"name": "foo", "args": {"bar": "baz", "n": 1.0}}}
    assert estimate_tokens([call]) == len('{"functionCall":{"name":"foo","args":{"bar":"baz","n":1}}}') // 4


def test_text_wins_over_other_fields_and_non_string_text_does_not_count_as_text() -> None:
    assert estimate_tokens([{"text": "abcd", "functionResponse": {"name": "x" * 400}}]) == 1
    assert estimate_tokens([{"text": None, "thought": True}]) == len('{"text":null,"thought":true}') // 4


def test_struct_parts_estimate_like_their_wire_dicts() -> None:
    parts = [
        Part(text="中文 text"),
        Part(function_call=FunctionCall(name="f", args={"x": [1.5, 2]})),
        Part(function_response=FunctionResponse(name="g", response={"output": "ok"}, parts=[{"text": "n"}])),
        Part(inline_data=Blob(mime_type="image/png", data="AA")),
        Part(file_data=FileData(mime_type="application/pdf", file_uri="gs://f")),
    ]
    wire = [json.loads(js_json_dumps(p)) for p in parts]
    assert estimate_tokens(parts) == estimate_tokens(wire)
    for cpt in (1, 3, 4.5):
        assert estimate_tokens(parts, cpt) == estimate_tokens(wire, cpt)


def test_running_total_of_content_quarters_equals_the_flat_estimate() -> None:
    history = parse_contents(
        [{"role": "user", "parts": [{"text": "abc"}]}, {"role": "model", "parts": [{"text": "d"}, {"text": "e"}]}]
    )
    # Per content: 0.75 and 0.5 tokens, both floor to 0; together 1.25 -> 1.
    assert [estimate_content_tokens(c) for c in history] == [0, 0]
    total = sum(content_quarters(c) for c in history)
    assert quarters_to_tokens(total) == estimate_history_tokens(history) == 1
    assert estimate_tokens([p for c in history for p in c.parts]) == 1


def _naive_estimate(parts: list[Any], depth: int = 0) -> int:
    """A literal transcription of estimateTokenCountSync for dict parts (slow, obviously faithful)."""
    if depth > 3:
        return 0
    total = 0.0
    for part in parts:
        if isinstance(part.get("text"), str):
            units = part["text"].encode("utf-16-le", "surrogatepass")
            codes = [int.from_bytes(units[i : i + 2], "little") for i in range(0, len(units), 2)]
            if len(codes) > 100_000:
                total += len(codes) / 4
            else:
                total += sum(0.25 if c <= 127 else 1.5 for c in codes)
        elif part.get("functionResponse"):
            fr = part["functionResponse"]
            tokens = utf16_len(fr.get("name", "")) / 4
            response = fr.get("response")
            if isinstance(response, str):
                tokens += utf16_len(response) / 4
            elif response is not None:
                tokens += js_json_length(response) / 4
            if fr.get("parts"):
                tokens += _naive_estimate(fr["parts"], depth + 1)
            total += tokens
        else:
            mime = (part.get("inlineData") or {}).get("mimeType") or (part.get("fileData") or {}).get("mimeType")
            if mime and mime.startswith("image/"):
                total += 3000
            elif mime and mime.startswith("application/pdf"):
                total += 25800
            else:
                total += js_json_length(part) / 4
    return math.floor(total)


texts = any_text
parts_strategy = st.recursive(
    st.one_of(
        st.builds(lambda t: {"text": t}, texts),
        st.builds(lambda n, a: {"functionCall": {"name": n, "args": a}}, texts, st.dictionaries(texts, json_values)),
        st.builds(
            lambda m, d: {"inlineData": {"mimeType": m, "data": d}},
            st.sampled_from(["image/png", "application/pdf", "text/plain", ""]),
            texts,
        ),
    ),
    lambda children: st.builds(
        lambda n, r, p: {"functionResponse": {"name": n, "response": r, "parts": p}},
        texts,
        st.one_of(texts, st.dictionaries(texts, json_values)),
        st.lists(children, max_size=3),
    ),
    max_leaves=8,
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(parts_strategy, max_size=5))
def test_quarter_arithmetic_equals_a_literal_port(parts: list[Any]) -> None:
    assert estimate_tokens(parts) == _naive_estimate(parts)


text_contents = st.builds(
    lambda role, texts: Content(
        role=role, parts=[Part(text=t, thought=th, thought_signature=sig) for t, th, sig in texts]
    ),
    st.sampled_from(["user", "model", "ユーザー", None]),
    st.lists(
        st.tuples(
            any_text | st.sampled_from(["a" * 100_001, "中" * 100_000, "😀" * 50_000, "😀" * 49_999 + "ab"]),
            st.sampled_from([None, True, False]),
            st.sampled_from([None, "c2ln", "sïg"]),
        ),
        max_size=3,
    ),
)


@settings(max_examples=examples(200), deadline=None)
@given(text_contents)
def test_single_pass_measure_of_text_contents_equals_the_separate_measures(content: Content) -> None:
    measure = measure_content(content)
    assert measure.json_length == js_json_length(content) == utf16_len(js_json_dumps(content))
    assert measure.quarters == content_quarters(content)
