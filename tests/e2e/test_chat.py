"""A streamed chat turn through the real sidecar process, against the fake Gemini over real HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sidecar import __version__, fakegemini
from sidecar.protocol import errors
from sidecar.rpc.client import RpcError
from tests.e2e import harness
from tests.e2e.harness import EditorClient, notes, request, request_error, wait_for
from tests.waiting import until


async def test_initialize_reports_server_info(client: EditorClient) -> None:
    info = client.init_result["serverInfo"]
    assert (info["name"], info["version"]) == ("sidecar", __version__)


async def test_streamed_turn_delivers_deltas_in_order(client: EditorClient, fake: Any) -> None:
    result = await request(client, "sidecar/sendMessage", {"text": "hello sidecar, please say something long"})
    deltas = [d for d in notes(client, "sidecar/messageDelta") if d["turnId"] == result["turnId"]]
    assert len(deltas) >= 2, "the fake streams several chunks"
    assert "".join(d["text"] for d in deltas) == result["text"]
    assert "hello sidecar" in result["text"]
    assert result["finishReason"] == "STOP"
    sent = [r for r in fake.requests() if r.kind == "stream"]
    assert sent[-1].body["contents"][-1]["parts"][0]["text"] == "hello sidecar, please say something long"


async def test_token_usage_after_a_turn(client: EditorClient, fake: Any) -> None:
    result = await request(client, "sidecar/sendMessage", {"text": "count my tokens"})
    usage = await wait_for(client, "sidecar/tokenUsage", lambda u: u["source"] == "api")
    prompt_tokens = fakegemini.prompt_tokens(fake.requests()[-1].body)
    assert usage["promptTokenCount"] == prompt_tokens == result["usage"]["promptTokenCount"]
    assert usage["tokenLimit"] == 1_048_576
    assert usage["percentUsed"] == round(100 * prompt_tokens / 1_048_576, 1)
    assert usage["compressionThreshold"] == 0.5
    assert usage["model"] == "gemini-2.5-flash"
    assert await request(client, "sidecar/getTokenUsage", {}) == usage


async def test_a_new_session_reports_an_estimate_of_the_empty_conversation(client: EditorClient, fake: Any) -> None:
    """No reply yet: the usage is an estimate of what the first request sends besides the message (system
    instruction and tool declarations), labelled as the empty conversation's, not as "the history changed"."""
    await request(client, "sidecar/newSession", {})
    usage = await request(client, "sidecar/getTokenUsage", {})
    assert usage["source"] == "estimate" and usage["estimateReason"] == "newSession", usage
    reply = await request(client, "sidecar/sendMessage", {"text": "hi"})
    first = reply["usage"]["promptTokenCount"]
    assert 0 < usage["promptTokenCount"] <= first <= 1.2 * usage["promptTokenCount"] + 20, (usage, reply["usage"])


async def test_history_carries_previous_turns(client: EditorClient, fake: Any) -> None:
    await request(client, "sidecar/sendMessage", {"text": "first"})
    await request(client, "sidecar/sendMessage", {"text": "second"})
    contents = fake.requests()[-1].body["contents"]
    assert [c["role"] for c in contents] == ["user", "user", "model", "user"]  # the session context opens it
    assert contents[0]["parts"][0]["text"].startswith("<session_context>")
    assert contents[1]["parts"][0]["text"] == "first"


async def test_work_done_progress_runs_for_the_turn(client: EditorClient) -> None:
    await request_turn(client, "progress please")
    kinds = [[r["kind"] for r in reports] for reports in client.progress().values()]
    if client.supports_progress():
        assert kinds and kinds[-1][0] == "begin" and kinds[-1][-1] == "end"
    else:
        assert kinds == [], "no progress for clients that did not announce support"


async def request_turn(client: EditorClient, text: str) -> dict[str, Any]:
    return await request(client, "sidecar/sendMessage", {"text": text})  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({}, "`text`"),
        ({"text": 5}, "$.text"),
        ([1, 2], "params must be an object"),
    ],
)
async def test_invalid_params_answer_32602_naming_the_field(client: EditorClient, params: Any, needle: str) -> None:
    err = await request_error(client, "sidecar/sendMessage", params)
    assert err.code == errors.INVALID_PARAMS
    assert needle in err.message


async def test_unknown_method_answers_32601(client: EditorClient) -> None:
    err = await request_error(client, "sidecar/noSuchMethod", {})
    assert err.code == errors.METHOD_NOT_FOUND


async def test_server_survives_200_malformed_messages(client: EditorClient) -> None:
    bad_params: list[Any] = [{}, {"text": None}, {"text": ["x"]}, "text", 7, [None]]
    for i in range(100):
        err = await request_error(client, "sidecar/sendMessage", bad_params[i % len(bad_params)])
        assert err.code == errors.INVALID_PARAMS
    garbage = [
        b"Content-Length: 5\r\n\r\nnot j",
        b"Content-Length: 2\r\n\r\n[]",
        b'Content-Length: 27\r\n\r\n{"jsonrpc":"1.0","id":"x1"}',
        b"X-Nonsense: 1\r\n\r\n",
        b'Content-Length: 35\r\n\r\n{"jsonrpc":"2.0","method":"sidecar',
        b'/nope"}',
    ]
    for i in range(100):
        harness.write_raw(client, garbage[i % len(garbage)])
        if i % len(garbage) == 0:
            client.notify("sidecar/unknownNotification", {"x": i})
    result = await request(client, "sidecar/getTokenUsage", {})
    assert result["sessionId"]
    reply = await request(client, "sidecar/sendMessage", {"text": "still there?"})
    assert "still there?" in reply["text"]


async def test_rate_limit_is_retried_then_succeeds(client: EditorClient, fake: Any) -> None:
    fake.script([{"kind": "status", "status": 429, "match": "chat"}])
    result = await request(client, "sidecar/sendMessage", {"text": "after a 429"})
    assert "after a 429" in result["text"]
    statuses = [r.status for r in fake.requests() if r.kind == "stream"]
    assert statuses == [429, 200]


async def test_persistent_server_error_is_named_and_next_turn_works(client: EditorClient, fake: Any) -> None:
    fake.script([{"kind": "status", "status": 500, "match": "chat", "times": 10}])
    err = await request_error(client, "sidecar/sendMessage", {"text": "doomed message"})
    assert err.code == errors.MODEL_ERROR
    assert "500" in err.message and "server error" in err.message
    assert harness.CANARY_KEY not in err.message
    assert any("500" in m for m in client.messages(1))  # MessageType.Error
    assert len([r for r in fake.requests() if r.kind == "stream"]) == 4  # 1 + retryAttempts (3)
    fake.reset()
    reply = await request(client, "sidecar/sendMessage", {"text": "and now?"})
    assert "and now?" in reply["text"]
    texts = [c["parts"][0].get("text") for c in fake.requests()[-1].body["contents"]]
    assert "doomed message" in texts, "the failed turn's user message stays in the history"


@pytest.mark.settings(requestTimeoutMs=120_000)  # the held call must not time out (and be retried) first
async def test_cancel_stops_the_stream_and_history_stays_valid(client: EditorClient, fake: Any) -> None:
    fake.script([{"kind": "hold", "match": "chat"}])  # never answered: only the cancel can end this turn
    future = client.request_now("sidecar/sendMessage", {"text": "slow one"}, msg_id="slow-1")
    await until(lambda: not fake.pending(), "the fake to take the held request (its step is consumed)")
    client.cancel("slow-1")
    with pytest.raises(RpcError) as caught:
        await asyncio.wait_for(future, 30)
    assert caught.value.code == errors.REQUEST_CANCELLED
    reply = await request(client, "sidecar/sendMessage", {"text": "after cancel"})
    assert "after cancel" in reply["text"]
    roles = [c["role"] for c in fake.requests()[-1].body["contents"]]
    assert roles == ["user", "user", "user"], (
        "the session context, the cancelled turn's user message (no dangling model turn), the new message"
    )


async def test_usage_after_a_cancel_still_counts_system_prompt_and_tools(client: EditorClient, fake: Any) -> None:
    """The status after a cancel is an estimate of the next request, not of the bare history (1.7K, not 105)."""
    first = await request(client, "sidecar/sendMessage", {"text": "first"})
    fake.script([{"kind": "delay", "seconds": 5, "match": "chat"}])
    future = client.request_now("sidecar/sendMessage", {"text": "slow one"}, msg_id="slow-2")
    await until(lambda: not fake.pending(), "the fake to take the delayed request (its step is consumed)")
    client.cancel("slow-2")
    with pytest.raises(RpcError):
        await asyncio.wait_for(future, 4)
    usage = await request(client, "sidecar/getTokenUsage", {})
    assert usage["source"] == "estimate", usage
    # the history grew by two short messages: an estimate of the whole request is near the last API count
    assert usage["promptTokenCount"] >= 0.8 * first["usage"]["promptTokenCount"], (usage, first["usage"])


async def test_bad_setting_is_reported_and_default_used(client: EditorClient) -> None:
    client.notify(
        "workspace/didChangeConfiguration",
        {"settings": {"sidecar": {"compressionThreshold": "lots", "tokenLimit": 1000}}},
    )
    usage = await wait_for(client, "sidecar/tokenUsage", lambda u: u["tokenLimit"] == 1000)
    assert usage["compressionThreshold"] == 0.5
    warning = next(m for m in client.messages() if "compressionThreshold" in m)
    assert "0.5" in warning


async def test_the_model_client_is_ready_before_the_first_message(fake: Any) -> None:
    """After `initialized` the model client is built in the background, not in the first turn."""
    import tempfile

    from tests.e2e.test_sessions import Sidecar

    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as proj:
        side = Sidecar(home, fake.url, proj)
        await side.start()
        await side.client.wait_log("built for the warm-up after initialize", timeout=60)
        mark = len(side.client.stderr_lines)
        await side.say("the first message")
        assert [line for line in side.client.stderr_lines[mark:] if "model client for" in line] == []
        await side.client.close()


@pytest.mark.parametrize(
    ("client_name", "hint"),
    [
        ("Visual Studio Code", 'run "Sidecar: Set API Key"'),
        ("code-server", 'run "Sidecar: Set API Key"'),
        ("Neovim", "set GEMINI_API_KEY in the environment Neovim starts from"),
        (None, "set the apiKey setting or GEMINI_API_KEY"),
    ],
)
async def test_the_fake_gemini_notice_names_this_editors_way_to_set_a_key(client_name: str | None, hint: str) -> None:
    """VS Code ignores "sidecar.apiKey"; each editor is told its own way (from initialize's clientInfo),
    and the backend in use is in the usage pushed at start-up, before any reply."""
    import os
    import sys
    import tempfile

    from sidecar.rpc.client import RpcClient

    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as root:
        client = RpcClient(
            [sys.executable, "-m", "sidecar", "--log-level", "DEBUG"], env=harness.server_env(SIDECAR_HOME=home)
        )
        client.on("window/showMessage", lambda _p: None)
        await client.start()
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "capabilities": {},
            "rootUri": f"file://{root}",
            "workspaceFolders": [{"uri": f"file://{root}", "name": "ws"}],
            "initializationOptions": {},
        }
        if client_name is not None:
            params["clientInfo"] = {"name": client_name, "version": "1"}
        await client.request("initialize", params, timeout=30)
        client.notify("initialized", {})
        first = await client.wait_note("sidecar/tokenUsage", timeout=30)
        assert first["backend"] == "embedded fake Gemini", "the backend is shown before the first reply"
        await client.request("sidecar/sendMessage", {"text": "hello"}, timeout=30)
        shown = await client.wait_note("window/showMessage", lambda p: "embedded offline fake" in p["message"])
        assert hint in shown["message"], shown["message"]
        if client_name is not None:
            assert "sidecar.apiKey" not in shown["message"]
        await client.close()
