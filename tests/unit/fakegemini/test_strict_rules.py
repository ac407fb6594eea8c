"""The fake refuses every request shape the real Gemini API is known to refuse, with the API's own message."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from sidecar.core.history import parse_contents
from sidecar.fakegemini import FakeGemini
from sidecar.fakegemini import validate as v

SIG = "c2ln"


def u(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def m(text: str) -> dict[str, Any]:
    return {"role": "model", "parts": [{"text": text}]}


def call(name: str = "read_file", sig: str | None = SIG, text: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": name, "args": {}}}
    if sig:
        part["thoughtSignature"] = sig
    return {"role": "model", "parts": ([{"text": text}] if text is not None else []) + [part]}


def resp(name: str = "read_file", n: int = 1) -> dict[str, Any]:
    return {"role": "user", "parts": [{"functionResponse": {"name": name, "response": {"output": "x"}}}] * n}


def check(raw: list[dict[str, Any]], model: str = "gemini-3.5-flash") -> None:
    v.check_contents(parse_contents(raw), model)


REFUSED = [
    ("empty text next to a call", [u("hi"), call(text=""), resp(), u("go")], "required oneof field 'data'"),
    ("empty text alone", [u("hi"), m(""), u("go")], "required oneof field 'data'"),
    ("a part with nothing", [u("hi"), {"role": "model", "parts": [{}]}, u("go")], "required oneof field 'data'"),
    (
        "two data fields in a part",
        [{"role": "user", "parts": [{"text": "a", "inlineData": {"mimeType": "image/png", "data": "AA=="}}]}],
        "oneof field 'data' is already set",
    ),
    ("call turn after a model turn", [u("hi"), m("let me look"), call(), resp()], "function call turn comes"),
    ("history starting with a call", [call(), resp()], "function call turn comes"),
    ("response without call", [u("hi"), resp()], "function response turn comes immediately"),
    ("fewer responses than calls", [u("hi"), call(), u("x")], "number of function response parts"),
    ("a model turn after a call", [u("hi"), call(), m("done"), u("x")], "number of function response parts"),
    ("a model turn last", [u("hi"), m("half an answ")], "Requests ending with a model turn"),
    ("unknown role", [{"role": "assistant", "parts": [{"text": "x"}]}], "valid role"),
    ("no parts", [{"role": "user", "parts": []}], "contents.parts must not be empty"),
    ("current turn's call without signature", [u("hi"), call(sig=None), resp()], "missing a thought_signature"),
]


@pytest.mark.parametrize(("what", "raw", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_strict_rules_refuse(what: str, raw: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(v.InvalidRequest, match=message.replace("(", r"\(")):
        check(raw)


ACCEPTED = [
    ("text then calls", [u("hi"), call(text="Let me look."), resp(), u("thanks")]),
    (
        "thought with empty text",
        [u("hi"), {"role": "model", "parts": [{"text": "", "thought": True}, {"text": "a"}]}, u("go")],
    ),
    ("consecutive user turns", [u("context"), u("hi")]),
    ("older turn's call without signature", [u("hi"), call(sig=None), resp(), m("done"), u("next")]),
    (
        "parallel calls: only the first signed",
        [
            u("hi"),
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "a"}, "thoughtSignature": SIG}, {"functionCall": {"name": "b"}}],
            },
            resp("a", 2),
        ],
    ),
]


@pytest.mark.parametrize(("what", "raw"), ACCEPTED, ids=[r[0] for r in ACCEPTED])
def test_strict_rules_accept(what: str, raw: list[dict[str, Any]]) -> None:
    check(raw)


def test_rules_follow_the_model_name() -> None:
    unsigned = [u("hi"), call(sig=None), resp()]
    check(unsigned, "gemini-2.5-flash")  # 2.5 does not check signatures
    with pytest.raises(v.InvalidRequest, match="thought_signature"):
        check(unsigned, "gemini-3-flash-preview")
    check([u("hi"), m("prefill")], "gemini-2.5-pro")  # older models continue a trailing model turn
    check([u("hi"), m("prefill")], "gemini-3.1-pro-preview")
    with pytest.raises(v.InvalidRequest, match="ending with a model turn"):
        check([u("hi"), m("prefill")], "some-unknown-model")  # unknown names get the strictest set
    v.check_contents(parse_contents([u("hi"), m("x")]), "gemini-3.5-flash", generate=False)  # countTokens


def _post(fake: FakeGemini, model: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(
        f"{fake.url}/v1beta/models/{model}:generateContent",
        data=json.dumps(body).encode(),
        headers={"x-goog-api-key": "k", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.process  # a real fake Gemini on a loopback socket
def test_over_the_wire_and_gemini3_replies_carry_signatures() -> None:
    with FakeGemini() as fake:
        status, body = _post(fake, "gemini-3.5-flash", {"contents": [u("hi"), call(text=""), resp(), u("go")]})
        assert status == 400 and body["error"]["status"] == "INVALID_ARGUMENT"
        assert "required oneof field 'data'" in body["error"]["message"]
        fake.script({"kind": "function_call", "calls": [{"name": "a"}, {"name": "b"}]})
        status, body = _post(fake, "gemini-3.5-flash", {"contents": [u("hi")]})
        parts = body["candidates"][0]["content"]["parts"]
        assert status == 200 and parts[0]["thoughtSignature"] and "thoughtSignature" not in parts[1]
        big = {
            "contents": [
                {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "A" * (21 * 1024 * 1024)}}]}
            ]
        }
        status, body = _post(fake, "gemini-2.5-flash", big)
        assert status == 400 and "payload size exceeds the limit" in body["error"]["message"]
