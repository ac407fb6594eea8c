"""What fills the window and the model choice, through the real sidecar: the breakdown against the fake's count,
memory files and MCP servers as rows, postponing a compaction, listing and switching models."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.fakegemini.replies import prompt_tokens
from tests.e2e.harness import EditorClient, notes, request, request_error, wait_for
from tests.waiting import until

MCP_SERVER = str(Path(__file__).parents[1] / "mcp_client" / "server.py")
FREE = {"freeToThreshold", "freeToWindow"}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def base() -> Any:
    where = Path(os.path.realpath(tempfile.mkdtemp(prefix="sidecar-window-")))
    yield where
    shutil.rmtree(where, ignore_errors=True)


async def _editor(base: Path, fake: Any, **settings: Any) -> EditorClient:
    folder = base / "repo"
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    client = EditorClient("visual-studio-code", str(folder), HOME=str(base / "home"))
    await client.start()
    await client.initialize(fake.url, **settings)
    return client


@pytest.fixture
async def editor(base: Path, fake: Any) -> AsyncIterator[EditorClient]:
    _write(base / "home" / ".gemini" / "GEMINI.md", "GLOBAL-RULE: answer in English. " * 20)
    _write(base / "repo" / "GEMINI.md", "PROJECT-RULE: run make test. " * 40)
    _write(base / "repo" / "src" / "code.py", "x = 1\n" * 200)
    marks = base / "marks"
    marks.mkdir()
    servers = {
        name: {"command": sys.executable, "args": [MCP_SERVER, "basic", str(marks)], "trust": True}
        for name in ("calc", "other")
    }
    client = await _editor(base, fake, mcpServers=servers)
    try:
        yield client
    finally:
        await client.stop()


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


def used(breakdown: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for row in breakdown["rows"] if row["category"] not in FREE]


async def _servers_ready(client: EditorClient) -> bool:
    rows = await request(client, "sidecar/listMcpServers", {})
    return len(rows) == 2 and all(r["status"] == "ready" for r in rows)


async def test_the_categories_add_up_to_the_fakes_prompt_count_with_a_row_per_memory_file_and_mcp_server(
    editor: EditorClient, fake: Any, base: Path
) -> None:
    await until(lambda: _servers_ready(editor), "both MCP servers ready")
    fake.script([{"kind": "function_call", "name": "read_file", "args": {"path": "src/code.py"}, "match": "chat"}])
    await request(editor, "sidecar/sendMessage", {"text": "read the code"})
    last = chats(fake)[-1]
    breakdown = await request(editor, "sidecar/getContextBreakdown", {})
    assert breakdown["source"] == "api" and breakdown["apiPromptTokens"] == prompt_tokens(last.body)
    rows = used(breakdown)
    by = {row["category"]: row for row in rows}
    assert {"systemPrompt", "builtinTools", "sessionContext", "messages", "toolOutputs"} <= set(by)
    memory = [row for row in rows if row["category"] == "memoryFile"]
    assert {row["target"] for row in memory} == {
        str(base / "home" / ".gemini" / "GEMINI.md"),
        str(base / "repo" / "GEMINI.md"),
    }
    assert all(row["tokens"] > 100 for row in memory)
    mcp = {row["target"]: row for row in rows if row["category"] == "mcpTools"}
    assert set(mcp) == {"calc", "other"} and all(row["tokens"] > 100 for row in mcp.values())
    assert all(row["source"] == "estimate" for row in rows)
    assert sum(row["tokens"] for row in rows) == breakdown["measuredTokens"]
    # The next request: what the breakdown showed plus one short message. The fake counts it exactly.
    await request(editor, "sidecar/sendMessage", {"text": "ok"})
    counted = prompt_tokens(chats(fake)[-1].body)
    assert abs(breakdown["measuredTokens"] - counted) <= 0.02 * counted, (breakdown["measuredTokens"], counted)
    free = {row["category"]: row["tokens"] for row in breakdown["rows"] if row["category"] in FREE}
    assert free["freeToWindow"] == breakdown["tokenLimit"] - breakdown["promptTokens"]
    assert free["freeToThreshold"] == breakdown["thresholdTokens"] - breakdown["promptTokens"]
    assert breakdown["compressionModel"]


async def test_over_the_threshold_the_usage_says_it_compacts_at_the_next_message_and_a_postponement_holds_once(
    base: Path, fake: Any
) -> None:
    client = await _editor(base, fake, tokenLimit=20_000, compressionThreshold=0.5)
    try:
        await request(client, "sidecar/sendMessage", {"text": "word " * 9_000})
        usage = await request(client, "sidecar/getTokenUsage", {})
        assert usage["compactsAtNextMessage"] is True and usage["compactionPostponed"] is False
        answer = await request(client, "sidecar/postponeCompaction", {})
        assert answer["postponed"] is True
        await wait_for(client, "sidecar/tokenUsage", lambda u: u["compactionPostponed"] is True)
        await request(client, "sidecar/sendMessage", {"text": "go on"})
        assert notes(client, "sidecar/compressed") == [], "the postponed message did not compact"
        usage = await request(client, "sidecar/getTokenUsage", {})
        assert usage["compactionPostponed"] is False and usage["compactsAtNextMessage"] is True
        await request(client, "sidecar/sendMessage", {"text": "and now"})
        assert [n["trigger"] for n in notes(client, "sidecar/compressed")] == ["auto"], "once only: this one compacts"
        transcript = await request(client, "sidecar/getTranscript", {})
        assert any("postponed" in (m.get("text") or "") for m in transcript["entries"])
    finally:
        await client.stop()


async def test_no_compaction_due_means_nothing_to_postpone(base: Path, fake: Any) -> None:
    client = await _editor(base, fake)
    try:
        answer = await request(client, "sidecar/postponeCompaction", {})
        assert answer == {"postponed": False, "message": "No automatic compaction is due."}
    finally:
        await client.stop()


async def test_list_models_online_offers_the_chat_models_of_the_backends_list(base: Path, fake: Any) -> None:
    client = await _editor(base, fake, model="gemini-2.5-pro")
    try:
        listed = await request(client, "sidecar/listModels", {})
    finally:
        await client.stop()
    assert listed["source"] == "api" and listed["current"] == "gemini-2.5-pro" and listed["problem"] is None
    ids = [m["id"] for m in listed["models"]]
    assert "gemini-2.5-flash" in ids and "gemma-4-31b-it" in ids
    assert "gemini-embedding-001" not in ids, "a model without generateContent is not offered"
    assert [m["id"] for m in listed["models"] if m["current"]] == ["gemini-2.5-pro"]
    assert next(m for m in listed["models"] if m["id"] == "gemma-4-31b-it")["tokenLimit"] == 256_000
    assert any(r.kind == "list" and r.method == "GET" and r.path == "/v1beta/models" for r in fake.requests())


async def test_list_models_offline_answers_the_known_table_and_says_why(base: Path, fake: Any) -> None:
    client = await _editor(base, fake, retryAttempts=0)
    fake.script([{"kind": "status", "status": 403, "message": "no listing for you", "match": "list"}])
    try:
        listed = await request(client, "sidecar/listModels", {})
    finally:
        await client.stop()
    assert listed["source"] == "table" and "no listing for you" in listed["problem"]
    assert {"gemini-2.5-pro", "gemini-2.5-flash"} <= {m["id"] for m in listed["models"]}


async def test_a_switch_to_a_smaller_window_compacts_before_the_next_request_is_recorded_and_resumed(
    base: Path, fake: Any
) -> None:
    client = await _editor(base, fake, compressionThreshold=0.05)  # 52,428 tokens on flash, 12,800 on gemma
    try:
        await request(client, "sidecar/sendMessage", {"text": "word " * 16_000})
        before = await request(client, "sidecar/getTokenUsage", {})
        assert before["compactsAtNextMessage"] is False and 12_800 < before["promptTokenCount"] < 52_428
        switched = await request(client, "sidecar/setModel", {"model": "gemma-4-31b-it"})
        assert switched["tokenLimit"] == 256_000 and switched["compactsAtNextMessage"] is True
        assert "compacts before the next request" in switched["message"]
        usage = await wait_for(client, "sidecar/tokenUsage", lambda u: u["model"] == "gemma-4-31b-it")
        assert usage["tokenLimit"] == 256_000 and usage["compactsAtNextMessage"] is True
        await request(client, "sidecar/sendMessage", {"text": "go on"})
        assert [n["trigger"] for n in notes(client, "sidecar/compressed")] == ["auto"]
        assert chats(fake)[-1].model == "gemma-4-31b-it"
        transcript = await request(client, "sidecar/getTranscript", {})
        assert any("Model switched to gemma-4-31b-it" in (e.get("text") or "") for e in transcript["entries"])
        session_id = usage["sessionId"]
    finally:
        await client.stop()
    again = await _editor(base, fake)
    try:
        assert (await request(again, "sidecar/getTokenUsage", {}))["model"] == "gemini-2.5-flash"
        await request(again, "sidecar/resumeSession", {"sessionId": session_id})
        usage = await request(again, "sidecar/getTokenUsage", {})
        assert usage["model"] == "gemma-4-31b-it" and usage["tokenLimit"] == 256_000
    finally:
        await again.stop()


async def test_a_model_name_that_cannot_be_one_is_refused_in_words(base: Path, fake: Any) -> None:
    client = await _editor(base, fake)
    try:
        error = await request_error(client, "sidecar/setModel", {"model": "../etc"})
        assert "is not a model name" in error.message
        assert (await request(client, "sidecar/getTokenUsage", {}))["model"] == "gemini-2.5-flash"
    finally:
        await client.stop()


async def test_a_switch_holds_through_settings_changes_until_the_user_sets_the_model(base: Path, fake: Any) -> None:
    client = await _editor(base, fake)
    try:
        await request(client, "sidecar/setModel", {"model": "gemini-2.5-pro"})
        options = {"baseUrl": fake.url, "apiKey": "k", "compressionThreshold": 0.6}
        client.notify("workspace/didChangeConfiguration", {"settings": {"sidecar": options}})
        await wait_for(client, "sidecar/tokenUsage", lambda u: u["compressionThreshold"] == 0.6)
        assert (await request(client, "sidecar/getTokenUsage", {}))["model"] == "gemini-2.5-pro", "another change"
        client.notify(
            "workspace/didChangeConfiguration", {"settings": {"sidecar": {**options, "model": "gemma-4-31b-it"}}}
        )
        usage = await wait_for(client, "sidecar/tokenUsage", lambda u: u["model"] == "gemma-4-31b-it")
        assert usage["tokenLimit"] == 256_000, "the model the user set wins over the earlier switch"
    finally:
        await client.stop()
