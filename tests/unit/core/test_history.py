"""The content model: Gemini REST JSON in and out, losslessly."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sidecar.core.history import dump_contents, parse_contents

REST = [
    {
        "role": "user",
        "parts": [{"text": "héllo 😀"}, {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}],
    },
    {
        "role": "model",
        "parts": [
            {"text": "thinking…", "thought": True, "thoughtSignature": "c2ln"},
            {
                "functionCall": {
                    "name": "read_file",
                    "args": {"path": "a.py", "n": 1.5, "deep": {"x": [1, None]}},
                    "id": "c1",
                }
            },
        ],
    },
    {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "read_file",
                    "id": "c1",
                    "response": {"output": "x"},
                    "parts": [{"inlineData": {"mimeType": "application/pdf", "data": "JVBE"}}],
                    "willContinue": False,
                }
            },
            {"fileData": {"mimeType": "text/plain", "fileUri": "gs://b/f.txt", "displayName": "f"}},
        ],
    },
    {
        "role": "model",
        "parts": [
            {"executableCode": {"language": "PYTHON", "code": "1+1"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "2"}},
        ],
    },
]


def test_rest_json_round_trips_exactly() -> None:
    assert dump_contents(parse_contents(REST)) == REST


def test_bad_items_name_the_field() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"\$\[0\]\.parts\[0\]\.text"):
        parse_contents([{"role": "user", "parts": [{"text": 5}]}])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@given(args=st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=4), text=st.text(max_size=50))
def test_any_text_and_arguments_round_trip(args: dict[str, object], text: str) -> None:
    rest = [
        {"role": "user", "parts": [{"text": text}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": args}}]},
    ]
    assert dump_contents(parse_contents(rest)) == rest
