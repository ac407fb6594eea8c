"""The fake Gemini driven over real HTTP by the real google-genai client, plus its snapshot builder."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import msgspec
import pytest
from google import genai
from google.genai import errors, types

from sidecar.core.history import parse_contents
from sidecar.fakegemini import SECTIONS, FakeGemini, build_summary, parse_snapshot, prompt_tokens

ROOT = Path(__file__).resolve().parents[3]
SUMMARIZER = "You distill chat history into a <state_snapshot> XML object with seven sections."
TOOLS: list[Any] = [
    types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="read_file",
                parameters_json_schema={"type": "object", "properties": {"path": {"type": "string"}}},
            ),
            types.FunctionDeclaration(
                name="write_file",
                parameters=types.Schema(
                    type=types.Type.OBJECT, properties={"path": types.Schema(type=types.Type.STRING)}
                ),
            ),
        ]
    )
]


_clients: list[genai.Client] = []


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini() as f:
        yield f
    while _clients:
        _clients.pop().close()


def client(fake: FakeGemini, key: str = "test-key", **http: Any) -> genai.Client:
    """A real google-genai client for the fake (keep it referenced: collecting it closes its transport)."""
    opts = types.HttpOptions(base_url=fake.url, api_version="v1beta", **http)
    _clients.append(genai.Client(api_key=key, http_options=opts))
    return _clients[-1]


def raw(fake: FakeGemini, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(fake.url + path, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def model(text: str) -> dict[str, Any]:
    return {"role": "model", "parts": [{"text": text}]}


def call(name: str, args: dict[str, Any], **extra: str) -> dict[str, Any]:
    return {"role": "model", "parts": [{"functionCall": {"name": name, "args": args, **extra}}]}


def result(name: str, response: dict[str, Any], **extra: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"functionResponse": {"name": name, "response": response, **extra}}]}


async def collect(fake: FakeGemini, contents: Any = "hello stream", **cfg: Any) -> list[types.GenerateContentResponse]:
    c = client(fake)
    config = types.GenerateContentConfig(**cfg) if cfg else None
    out = []
    try:
        stream = await c.aio.models.generate_content_stream(model="gemini-2.5-flash", contents=contents, config=config)
        try:
            async for chunk in stream:
                out.append(chunk)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
    finally:
        await c.aio.aclose()
    return out


# ---- normal replies, tokens ----------------------------------------------------------------


@pytest.mark.process
def test_generate_reply_usage_and_token_rule(fake: FakeGemini) -> None:
    c = client(fake)
    r1 = c.models.generate_content(model="gemini-2.5-flash", contents="Hello there, fake!")
    r2 = c.models.generate_content(model="gemini-2.5-flash", contents=[user("a"), model("b"), user("again")])
    assert r1.text == 'Fake Gemini reply #1: you said "Hello there, fake!" (history: 1 turn)'
    assert r2.text == 'Fake Gemini reply #2: you said "again" (history: 3 turns)'
    body = fake.requests()[0].body
    expected = -(-len(msgspec.json.encode(body["contents"])) // 4)
    assert r1.usage_metadata is not None
    assert r1.usage_metadata.prompt_token_count == expected == prompt_tokens(body)
    cand = -(-len(msgspec.json.encode([{"text": r1.text}])) // 4)
    assert r1.usage_metadata.candidates_token_count == cand
    assert r1.usage_metadata.total_token_count == expected + cand


@pytest.mark.process
async def test_async_stream_chunks_and_final_usage(fake: FakeGemini) -> None:
    chunks = await collect(fake, "please stream a longer reply for me", system_instruction="be nice", tools=TOOLS)
    assert 3 <= len(chunks) <= 6
    text = "".join(ch.text or "" for ch in chunks)
    assert text == 'Fake Gemini reply #1: you said "please stream a longer reply for me" (history: 1 turn)'
    assert all(ch.usage_metadata is None for ch in chunks[:-1])
    last = chunks[-1]
    assert last.usage_metadata is not None and last.candidates
    assert last.candidates[0].finish_reason == types.FinishReason.STOP
    body = fake.requests()[0].body
    assert "systemInstruction" in body and "tools" in body  # both schema forms were accepted
    assert last.usage_metadata.prompt_token_count == prompt_tokens(body)


@pytest.mark.process
def test_count_tokens_and_multiplier(fake: FakeGemini) -> None:
    c = client(fake)
    contents = [user("x" * 400)]
    base = c.models.count_tokens(model="m", contents=contents).total_tokens
    assert base == -(-len(msgspec.json.encode(contents)) // 4)
    fake.set_token_multiplier(1000)
    assert c.models.count_tokens(model="m", contents=contents).total_tokens == base * 1000
    usage = c.models.generate_content(model="m", contents=contents).usage_metadata
    assert usage is not None and usage.prompt_token_count == base * 1000
    fake.reset()
    assert c.models.count_tokens(model="m", contents=contents).total_tokens == base


@pytest.mark.process
def test_function_response_is_acknowledged(fake: FakeGemini) -> None:
    history = [
        user("read a.py"),
        call("read_file", {"path": "a.py"}),
        result("read_file", {"output": "x=1"}),
    ]
    c = client(fake)  # keep the Client referenced: collecting it closes its HTTP client
    r = c.models.generate_content(model="gemini-2.5-flash", contents=history)
    assert r.text is not None and "received the tool result: read_file returned" in r.text
    assert "(history: 3 turns)" in r.text


@pytest.mark.process
def test_string_system_instruction_and_auth(fake: FakeGemini) -> None:
    body = {"contents": [user("hi")], "systemInstruction": "plain string"}
    path = "/v1beta/models/m:generateContent"
    assert raw(fake, path + "?key=k", body)[0] == 200
    code, err = raw(fake, path, body)
    assert code == 403 and err["error"]["status"] == "PERMISSION_DENIED"
    code, err = raw(fake, "/v1/models/m:generateContent", body, {"x-goog-api-key": "k"})
    assert code == 404 and "v1beta" in err["error"]["message"]
    assert [r.has_key for r in fake.requests()] == [True, False, True]


@pytest.mark.process
def test_api_keys_allowlist_and_wait_for_requests() -> None:
    with FakeGemini(api_keys={"good"}) as f:
        bad, good = client(f, key="bad"), client(f, key="good")
        with pytest.raises(errors.ClientError, match="API key not valid"):
            bad.models.generate_content(model="m", contents="hi")
        assert good.models.generate_content(model="m", contents="hi").text
        assert [r.status for r in f.wait_for_requests(2, timeout=1)] == [400, 200]
        with pytest.raises(TimeoutError):
            f.wait_for_requests(3, timeout=0.05)
    while _clients:
        _clients.pop().close()


@pytest.mark.process
def test_strict_validation_and_token_limit(fake: FakeGemini) -> None:
    c = client(fake)
    orphan = [
        user("go"),
        call("t", {}),
        user("x"),
    ]
    with pytest.raises(errors.ClientError) as exc:
        c.models.generate_content(model="m", contents=orphan)
    assert exc.value.code == 400 and "function response parts" in (exc.value.message or "")
    fake.set_token_limit(5)
    with pytest.raises(errors.ClientError, match="exceeds the maximum number of tokens"):
        c.models.generate_content(model="m", contents="a long enough prompt to pass five tokens")


# ---- faults ---------------------------------------------------------------------------------


@pytest.mark.process
def test_status_faults_map_to_sdk_errors(fake: FakeGemini) -> None:
    c = client(fake)
    fake.script([{"kind": "status", "status": 429, "retryDelay": "1s"}, {"kind": "status", "status": 500}])
    with pytest.raises(errors.ClientError) as e429:
        c.models.generate_content(model="m", contents="hi")
    assert e429.value.code == 429 and e429.value.status == "RESOURCE_EXHAUSTED"
    assert e429.value.details["error"]["details"][0]["retryDelay"] == "1s"
    with pytest.raises(errors.ServerError) as e500:
        c.models.generate_content(model="m", contents="hi")
    assert e500.value.code == 500
    assert c.models.generate_content(model="m", contents="hi").text is not None  # script used up
    assert [r.status for r in fake.requests()] == [429, 500, 200]


@pytest.mark.process
async def test_status_fault_on_stream_and_times(fake: FakeGemini) -> None:
    fake.script({"kind": "status", "status": 503, "match": "stream", "times": 2})
    for _ in range(2):
        with pytest.raises(errors.ServerError, match="UNAVAILABLE"):
            await collect(fake)
    assert fake.pending() == []
    assert len(await collect(fake)) >= 3


@pytest.mark.process
def test_delay_beyond_timeout_then_recovers(fake: FakeGemini) -> None:
    fake.script({"kind": "delay", "seconds": 0.6})
    c, impatient = client(fake), client(fake, timeout=150)
    with pytest.raises(httpx2.TimeoutException):
        impatient.models.generate_content(model="m", contents="hi")
    assert c.models.generate_content(model="m", contents="hi").text is not None


@pytest.mark.process
async def test_cut_stream_and_cut_generate(fake: FakeGemini) -> None:
    fake.script([{"kind": "cut", "match": "stream"}, {"kind": "cut", "match": "generate"}])
    with pytest.raises(httpx2.RemoteProtocolError):
        await collect(fake)
    c = client(fake)
    with pytest.raises(httpx2.RemoteProtocolError):
        c.models.generate_content(model="m", contents="hi")
    assert [r.outcome for r in fake.requests()] == ["cut", "cut"]


@pytest.mark.process
async def test_midstream_error_raises_from_iterator(fake: FakeGemini) -> None:
    fake.script({"kind": "midstream_error", "status": 500, "message": "boom"})
    c = client(fake)
    stream = await c.aio.models.generate_content_stream(model="m", contents="hi")
    first = await anext(stream)
    assert first.text
    with pytest.raises(errors.ServerError, match="boom"):
        await anext(stream)
    await stream.aclose()  # type: ignore[attr-defined]
    await c.aio.aclose()


@pytest.mark.process
async def test_empty_text_and_custom_replies(fake: FakeGemini) -> None:
    c = client(fake)
    fake.script(
        [
            {"kind": "empty"},
            {"kind": "empty", "variant": "no_candidates"},
            {"kind": "text", "text": "custom words here"},
            {"kind": "malformed_snapshot", "match": "summary"},
            {"kind": "usage", "promptTokenCount": 900000},
        ]
    )
    assert c.models.generate_content(model="m", contents="hi").text == ""
    assert c.models.generate_content(model="m", contents="hi").text is None
    assert c.models.generate_content(model="m", contents="hi").text == "custom words here"
    cfg = types.GenerateContentConfig(system_instruction=SUMMARIZER)
    summary = c.models.generate_content(model="m", contents=[user("x"), user("make a snapshot")], config=cfg)
    assert summary.text and "<state_snapshot>" not in summary.text
    chunks = await collect(fake)
    assert chunks[-1].usage_metadata and chunks[-1].usage_metadata.prompt_token_count == 900000


@pytest.mark.process
async def test_function_call_replies(fake: FakeGemini) -> None:
    c = client(fake)
    fake.script(
        [
            {"kind": "function_call", "name": "read_file", "args": {"path": "a.py"}, "id": "c1"},
            {
                "kind": "function_call",
                "calls": [{"name": "a", "args": {"x": 1}}, {"name": "b"}],
                "text": "Two.",
            },
        ]
    )
    calls = c.models.generate_content(
        model="m", contents="read", config=types.GenerateContentConfig(tools=TOOLS)
    ).function_calls
    assert calls and [(x.name, x.args, x.id) for x in calls] == [("read_file", {"path": "a.py"}, "c1")]
    chunks = await collect(fake)
    streamed = [fc.name for ch in chunks for fc in ch.function_calls or []]
    assert streamed == ["a", "b"] and chunks[0].text == "Two."


@pytest.mark.process
def test_match_routing_and_count_exclusion(fake: FakeGemini) -> None:
    c = client(fake)
    fake.script(
        [
            {"kind": "status", "status": 500, "match": "summary"},
            {"kind": "text", "text": "chat step"},
            {"kind": "status", "status": 429, "match": "count"},
        ]
    )
    with pytest.raises(errors.ClientError):  # the text step never applies to countTokens
        c.models.count_tokens(model="m", contents="x")
    assert c.models.count_tokens(model="m", contents="x").total_tokens
    assert c.models.generate_content(model="m", contents="hi").text == "chat step"
    cfg = types.GenerateContentConfig(system_instruction=SUMMARIZER)
    with pytest.raises(errors.ServerError):
        c.models.generate_content(model="m", contents="hi", config=cfg)
    assert [(r.kind, r.summary, r.status) for r in fake.requests()] == [
        ("count", False, 429),
        ("count", False, 200),
        ("generate", False, 200),
        ("generate", True, 500),
    ]


@pytest.mark.process
def test_request_log_never_holds_the_key(fake: FakeGemini) -> None:
    secret = "AIza-very-secret-key-123"
    c = client(fake, key=secret)
    c.models.generate_content(model="m", contents="hi")
    raw(fake, f"/v1beta/models/m:countTokens?key={secret}", {"contents": [user("x")]})
    log = fake.requests()
    assert [r.has_key for r in log] == [True, True] and log[1].query == {}
    assert secret not in msgspec.json.encode(log).decode()
    code, served = raw(fake, "/_control/requests")
    assert code == 200 and len(served) == 2 and secret not in json.dumps(served)


@pytest.mark.process
def test_control_endpoints(fake: FakeGemini) -> None:
    code, body = raw(fake, "/_control/script", [{"kind": "status", "status": 503}, {"kind": "text", "text": "t"}])
    assert (code, body["queued"]) == (200, 2)
    assert raw(fake, "/_control/script", {"steps": [{"kind": "bogus"}]})[0] == 400
    assert raw(fake, "/_control/script", {"steps": [{"kind": "text", "text": "only"}], "replace": True})[0] == 200
    c = client(fake)
    assert c.models.generate_content(model="m", contents="hi").text == "only"
    assert raw(fake, "/_control/config", {"tokenMultiplier": 3})[1]["tokenMultiplier"] == 3
    assert raw(fake, "/_control/reset", {})[0] == 200
    assert fake.requests() == [] and fake.token_multiplier == 1


@pytest.mark.process
def test_context_manager_start_and_stop_idempotent() -> None:
    """How fast it starts is a benchmark row (bench/startup.py, 1c), not a test: tests never time."""
    f = FakeGemini().start()
    assert f.url.startswith("http://127.0.0.1:")
    f.stop()
    f.stop()
    with pytest.raises(RuntimeError):
        _ = f.url


@pytest.mark.process
def test_cli_serves_script_and_exits_on_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"kind": "text", "text": "from file"}]))
    cmd = [sys.executable, "-m", "sidecar.fakegemini", "--port", "0", "--script", str(script)]
    with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("fake-gemini listening on http://127.0.0.1:")
        url = line.rsplit(" ", 1)[1]
        c = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=url, api_version="v1beta"))
        assert c.models.generate_content(model="m", contents="hi").text == "from file"
        c.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0


# ---- the snapshot builder (pure) ---------------------------------------------------------------

HISTORY = [
    user("Here is the user's editor context as a JSON object.\n" + '{"activeFile": {"path": "/w/src/app.py"}}'),
    user("Add retry logic to src/client.py. You must keep the public API stable. Don't add dependencies."),
    call("read_file", {"path": "src/client.py"}, id="1"),
    result("read_file", {"output": "ok"}, id="1"),
    model("Done reading; tests live in tests/test_client.py."),
    user("Now document it in docs/retry.md. Never touch setup.py."),
    user("Generate a new <state_snapshot> based on the provided history."),
]


def test_snapshot_has_all_sections_and_facts() -> None:
    text = build_summary(parse_contents(HISTORY))
    assert text.startswith("<scratchpad>") and "</scratchpad>" in text
    sections = parse_snapshot(text)
    assert sections is not None and list(sections) == list(SECTIONS)
    assert sections["overall_goal"].startswith("Add retry logic to src/client.py")
    assert "You must keep the public API stable." in sections["active_constraints"]
    assert "Don't add dependencies." in sections["active_constraints"]
    assert "Never touch setup.py." in sections["active_constraints"]
    for path in ("/w/src/app.py", "src/client.py", "tests/test_client.py", "docs/retry.md", "setup.py"):
        assert path in sections["file_system_state"]
    assert "src/client.py: read_file" in sections["artifact_trail"]
    assert 'read_file({"path":"src/client.py"}) -> {"output":"ok"}' in sections["recent_actions"]
    assert "[IN PROGRESS] Now document it in docs/retry.md" in sections["task_state"]
    assert "Generate a new" not in text.split("</scratchpad>")[1]


def test_verify_pass_repeats_or_improves_the_draft() -> None:
    critique = user("Critically evaluate the <state_snapshot> you just generated.")
    first = build_summary(parse_contents(HISTORY))
    again = build_summary(parse_contents([*HISTORY, model(first), critique]))
    assert "draft is complete" in again and parse_snapshot(again) == parse_snapshot(first)
    improved = build_summary(parse_contents([*HISTORY, model("no snapshot, sorry"), critique]))
    assert parse_snapshot(improved) == parse_snapshot(first)
    hint = user("Missing from the snapshot:\n- the dev server listens on port 8080\n- you must not break run.sh\n")
    fixed = parse_snapshot(build_summary(parse_contents([*HISTORY, model(first), hint])))
    assert fixed is not None and "port 8080" in fixed["key_knowledge"]
    assert "you must not break run.sh" in fixed["active_constraints"] and "run.sh" in fixed["file_system_state"]
    labelled = user(
        "Critically review the <state_snapshot> you just wrote.\n\nMissing from the snapshot (found by an "
        "exact check; include each one that still matters):\n- file path: lib/extra.lua\n"
        "- user constraint: Make sure the CLI stays quiet.\n\nRemember the user's focus:\nspeed"
    )
    fixed = parse_snapshot(build_summary(parse_contents([*HISTORY, model(first), labelled])))
    assert fixed is not None and "- lib/extra.lua" in fixed["file_system_state"]
    assert "- Make sure the CLI stays quiet." in fixed["active_constraints"]
    assert "speed" not in fixed["key_knowledge"]


def test_previous_snapshot_is_carried_forward() -> None:
    first = build_summary(parse_contents(HISTORY))
    later = [
        user(first),
        model("Got it. Thanks for the additional context!"),
        user("Next, rename lib/util.ts. Always run make check."),
        user("A previous <state_snapshot> exists. Carry its facts forward."),
    ]
    sections = parse_snapshot(build_summary(parse_contents(later)))
    assert sections is not None
    assert sections["overall_goal"].startswith("Add retry logic to src/client.py")
    assert "Never touch setup.py." in sections["active_constraints"]
    assert "Always run make check." in sections["active_constraints"]
    assert "src/client.py" in sections["file_system_state"] and "lib/util.ts" in sections["file_system_state"]
    assert "read_file" in sections["recent_actions"]
    assert (
        sections["task_state"].splitlines()[-1].endswith("rename lib/util.ts. Always run make check. (current focus)")
    )


@pytest.mark.process
def test_summary_request_over_http(fake: FakeGemini) -> None:
    cfg = types.GenerateContentConfig(system_instruction=SUMMARIZER)
    c = client(fake)
    r = c.models.generate_content(model="m", contents=HISTORY, config=cfg)
    assert r.text == build_summary(parse_contents(HISTORY))
    assert fake.requests()[0].summary
