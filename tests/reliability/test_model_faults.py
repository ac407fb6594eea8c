"""Model faults scripted in the fake Gemini, during a turn and during a compaction (manual and automatic).

Every fault must give the documented status or a -32001 error naming the cause, leave the model-facing history
and the recording as they were (apart from what docs/protocol.md says stays: the user's message of a failed
turn, the text the user already saw, display-only notes and the record of a failed compaction attempt), and the
next turn must work. One sidecar process serves the whole module; each test starts a new session on it.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from sidecar.protocol import errors
from tests.reliability.checks import (
    FAILED_STATUSES,
    chat_requests,
    last_chat_contents,
    new_records,
    recorded_history,
    text,
)
from tests.reliability.conftest import make_dirs
from tests.reliability.proc import CANARY_KEY, Sidecar, records

pytestmark = pytest.mark.asyncio(loop_scope="module")

RETRIES = 2
TIMEOUT_MS = 500  # only while a scripted hang is pending: a loaded machine must not time out normal calls
BASE = {"retryAttempts": RETRIES, "retryInitialDelayMs": 10, "tokenLimit": 20_000, "compressionThreshold": 1.0}
ERROR, WARNING = 1, 2


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(_fake_server: Any) -> AsyncIterator[Sidecar]:
    home, workspace = make_dirs()
    side = Sidecar(home, workspace, _fake_server.url)
    try:
        await side.start(**BASE)
        yield side
    finally:
        await side.stop()
        shutil.rmtree(home.parent, ignore_errors=True)


class Session:
    """One fresh session on the module's server, with helpers to build history and check it."""

    def __init__(self, side: Sidecar, fake: Any) -> None:
        self.side = side
        self.fake = fake
        self.id = ""

    async def begin(self) -> Session:
        self.configure()
        self.id = (await self.side.request("sidecar/newSession", {}))["sessionId"]
        return self

    def configure(self, **settings: Any) -> None:
        """Layer these settings over the initialization options (a didChangeConfiguration replaces the last)."""
        self.side.notify("workspace/didChangeConfiguration", {"settings": {"sidecar": settings}})

    @property
    def path(self) -> Path:
        return self.side.session_path(self.id)

    async def build(self, turns: int = 4) -> list[dict[str, Any]]:
        """A few padded turns; returns the model-facing history after them (as recorded)."""
        reply: dict[str, Any] = {}
        for i in range(turns):
            reply = await self.side.say(f"step {i}: change lib/unit_{i}.py " + "context " * 80)
        history = recorded_history(self.path)
        assert history == [*last_chat_contents(self.fake), text("model", reply["text"])], "recording == live history"
        return history

    def errors_shown(self, start: int) -> list[str]:
        return self.side.messages(ERROR)[start:]


@pytest_asyncio.fixture(loop_scope="module")
async def session(server: Sidecar, fake: Any) -> AsyncIterator[Session]:
    yield Session(server, fake)
    server.notify("workspace/didChangeConfiguration", {"settings": {"sidecar": {}}})


def assert_key_free(*values: Any) -> None:
    for value in values:
        assert CANARY_KEY not in str(value)


def fault_settings(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """A short requestTimeoutMs while a scripted hang is pending (and only then)."""
    return {"requestTimeoutMs": TIMEOUT_MS} if any(s["kind"] == "delay" for s in steps) else {}


async def assert_next_turn_works(session: Session, history: list[dict[str, Any]]) -> None:
    """The next turn answers, and the model sees exactly `history` (= what the recording replays to) first."""
    session.fake.reset_script()
    session.configure()  # back to the initialization options
    reply = await session.side.say("and the next turn?")
    assert "and the next turn?" in reply["text"]
    assert last_chat_contents(session.fake) == [*history, text("user", "and the next turn?")]
    turn = [text("user", "and the next turn?"), text("model", reply["text"])]
    assert recorded_history(session.path) == [*history, *turn]


# ---------------------------------------------------------------------------------------------- turns

TURN_FAULTS = [
    pytest.param(
        {"kind": "status", "status": 429, "retryDelay": "0.3s", "times": RETRIES + 1},
        "rateLimit",
        429,
        "Gemini API rate limit (429)",
        RETRIES + 1,
        id="429-with-retry-delay",
    ),
    pytest.param(
        {"kind": "status", "status": 429, "times": RETRIES + 1},
        "rateLimit",
        429,
        "Gemini API rate limit (429)",
        RETRIES + 1,
        id="429",
    ),
    pytest.param(
        {"kind": "status", "status": 500, "times": RETRIES + 1},
        "server",
        500,
        "Gemini API server error (500)",
        RETRIES + 1,
        id="500",
    ),
    pytest.param(
        {"kind": "status", "status": 503, "times": RETRIES + 1},
        "server",
        503,
        "Gemini API server error (503)",
        RETRIES + 1,
        id="503",
    ),
    pytest.param(
        {"kind": "delay", "seconds": 3, "times": RETRIES + 1},
        "timeout",
        None,
        f"did not answer within {TIMEOUT_MS} ms (requestTimeoutMs)",
        RETRIES + 1,
        id="hang",
    ),
    # A stream that fails after output started is retried like Gemini CLI does (4 attempts in all, the editor told
    # to discard each failed attempt's text), independently of retryAttempts.
    pytest.param(
        {"kind": "cut", "times": 4}, "stream", None, "The Gemini stream ended unexpectedly", 4, id="stream-cut"
    ),
    pytest.param(
        {"kind": "midstream_error", "status": 500, "times": 4},
        "server",
        500,
        "(500)",
        4,
        id="midstream-error",
    ),
]


@pytest.mark.parametrize(("step", "kind", "status", "cause", "attempts"), TURN_FAULTS)
async def test_turn_fault_is_named_and_leaves_history_and_recording_intact(
    session: Session, fake: Any, step: dict[str, Any], kind: str, status: int | None, cause: str, attempts: int
) -> None:
    await session.begin()
    before = await session.build(2)
    session.configure(**fault_settings([step]))
    record_count = len(records(session.path))
    shown, usage_seq = len(session.side.messages(ERROR)), (await session.side.ping())["seq"]
    deltas_mark = len(session.side.notes("sidecar/messageDelta"))
    requests_mark = len(chat_requests(fake))
    fake.script([{**step, "match": "chat"}])

    started = time.monotonic()
    err = await session.side.error("sidecar/sendMessage", {"text": "the faulty turn"})
    elapsed = time.monotonic() - started

    assert err.code == errors.MODEL_ERROR
    assert cause in err.message
    assert err.data["kind"] == kind and err.data["status"] == status and err.data["turnId"].startswith("turn-")
    assert len(chat_requests(fake)) - requests_mark == attempts, "retried exactly as often as documented"
    if step["kind"] in ("cut", "midstream_error"):
        assert err.message.endswith("(after 4 attempts)")
        retries = [n for n in session.side.notes("sidecar/retry") if n["turnId"] == err.data["turnId"]]
        assert [n["attempt"] for n in retries] == [2, 3, 4] and all(n["text"] == "" for n in retries)
    if "retryDelay" in step:
        assert elapsed >= RETRIES * 0.3 - 0.05, "the 429's RetryInfo.retryDelay is honoured"
    assert session.errors_shown(shown) == [f"Sidecar: {err.message}"]
    # Usage is pushed after a failed turn too: the history now holds the user's message, so the state changed.
    await session.side.wait_note("sidecar/tokenUsage", lambda u: u["seq"] > usage_seq and u["source"] == "estimate")
    assert_key_free(err.message, err.data)

    # What stays: the user's message. Text a failed attempt streamed is never recorded as a reply.
    seen = "".join(
        d["text"] for d in session.side.notes("sidecar/messageDelta")[deltas_mark:] if d["turnId"] == err.data["turnId"]
    )
    assert bool(seen) == (step["kind"] in ("cut", "midstream_error")), "the failed attempts did stream text"
    expected = [*before, text("user", "the faulty turn")]
    assert recorded_history(session.path) == expected
    added = new_records(session.path, record_count)
    assert [r["kind"] for r in added if r["type"] == "message"] == ["user", "error"]
    assert next(r for r in added if r.get("kind") == "error")["text"] == err.message
    await assert_next_turn_works(session, expected)


async def test_empty_reply_adds_no_empty_model_turn(session: Session, fake: Any) -> None:
    await session.begin()
    before = await session.build(2)
    for variant in ("empty_text", "no_candidates"):
        fake.script([{"kind": "empty", "variant": variant, "match": "chat", "times": 4}])
        err = await session.side.error("sidecar/sendMessage", {"text": f"answer me with nothing ({variant})"})
        assert err.code == errors.MODEL_ERROR and err.data["kind"] == "invalidReply"
        assert "after 4 attempts" in err.message
        before = [*before, text("user", f"answer me with nothing ({variant})")]
        assert recorded_history(session.path) == before, "no model content without parts is recorded"
    await assert_next_turn_works(session, before)


# -------------------------------------------------------------------------------------- compactions

SUMMARY_FAULTS = [
    pytest.param(
        [{"kind": "status", "status": 429, "retryDelay": "0.1s", "match": "summary", "times": RETRIES + 1}],
        ("error", "rateLimit", "Gemini API rate limit (429)"),
        id="429",
    ),
    pytest.param(
        [{"kind": "status", "status": 500, "match": "summary", "times": RETRIES + 1}],
        ("error", "server", "Gemini API server error (500)"),
        id="500",
    ),
    pytest.param(
        [{"kind": "status", "status": 503, "match": "summary", "times": RETRIES + 1}],
        ("error", "server", "Gemini API server error (503)"),
        id="503",
    ),
    pytest.param(
        [{"kind": "delay", "seconds": 3, "match": "summary", "times": RETRIES + 1}],
        ("error", "timeout", f"did not answer within {TIMEOUT_MS} ms"),
        id="hang",
    ),
    pytest.param(  # a summary streams on the chat's path: a cut stream is retried as a chat turn's is (4 attempts)
        [{"kind": "cut", "match": "summary", "times": 4}],
        ("error", "stream", "The Gemini stream ended unexpectedly"),
        id="cut",
    ),
    pytest.param(  # an empty summary is retried like a chat reply (4 attempts), then fails naming why
        [{"kind": "empty", "match": "summary", "times": 4}],
        ("error", "invalidReply", "could not be used after 4 attempts: the reply was empty"),
        id="empty",
    ),
    pytest.param(
        [{"kind": "blocked", "blockReason": "PROHIBITED_CONTENT", "match": "summary"}],
        ("error", "blocked", "Gemini blocked the prompt: it was stopped by the prohibited-content policy"),
        id="blocked",
    ),
    pytest.param(
        [{"kind": "malformed_snapshot", "match": "summary", "times": 2}],
        ("status", "COMPRESSION_FAILED_EMPTY_SUMMARY", "empty summary"),
        id="no-state-snapshot",
    ),
    # A summarizer calling a tool is no fault any more: nothing runs and the request is asked again with function
    # calling off (tests/e2e/test_summary_request.py); tests/reliability/test_security.py checks no tool runs.
    pytest.param(
        [{"kind": "status", "status": 500, "match": "count", "times": 2 * (RETRIES + 1)}],
        ("status", "COMPRESSION_FAILED_TOKEN_COUNT_ERROR", "token counting error"),
        id="count-tokens-fails",
    ),
]


def _with_marker(steps: list[dict[str, Any]], marker: Path) -> list[dict[str, Any]]:
    out = []
    for step in steps:
        step = dict(step)
        if "args" in step:
            step["args"] = {"command": step["args"]["command"].replace("{marker}", str(marker))}
        out.append(step)
    return out


@pytest.mark.parametrize(("steps", "outcome"), SUMMARY_FAULTS)
async def test_manual_compaction_fault_leaves_everything_as_it_was(
    session: Session, fake: Any, steps: list[dict[str, Any]], outcome: tuple[str, str, str], tmp_path: Path
) -> None:
    await session.begin()
    before = await session.build()
    session.configure(**fault_settings(steps))
    record_count = len(records(session.path))
    marker = tmp_path / "executed"
    fake.script(_with_marker(steps, marker))
    compressed_mark = len(session.side.notes("sidecar/compressed"))
    how, what, cause = outcome

    if how == "error":
        err = await session.side.error("sidecar/compress", {})
        assert err.code == errors.MODEL_ERROR
        assert err.message.startswith("Compaction failed, the conversation is unchanged: ")
        assert cause in err.message and err.data["kind"] == what
        assert_key_free(err.message, err.data)
        assert session.side.notes("sidecar/compressed")[compressed_mark:] == []
    else:
        result = await session.side.request("sidecar/compress", {})
        assert result["status"] == what and cause in result["message"]
        assert result["newTokenCount"] == result["originalTokenCount"]
        notice = await session.side.wait_note(
            "sidecar/compressed", lambda n: n["trigger"] == "manual", start=compressed_mark
        )
        assert notice["status"] == what

    assert recorded_history(session.path) == before
    added = new_records(session.path, record_count)
    assert {r["type"] for r in added} <= {"compaction", "stats"}
    assert all(r["status"] in FAILED_STATUSES for r in added if r["type"] == "compaction")
    assert not marker.exists(), "a functionCall in a summary is never executed"
    assert session.side.notes("sidecar/toolCall") == [] and session.side.client.server_requests == []
    await assert_next_turn_works(session, before)


@pytest.mark.parametrize(("steps", "outcome"), SUMMARY_FAULTS)
async def test_auto_compaction_fault_during_a_turn_leaves_the_history_and_the_turn_works(
    session: Session, fake: Any, steps: list[dict[str, Any]], outcome: tuple[str, str, str], tmp_path: Path
) -> None:
    await session.begin()
    before = await session.build()
    prompt = session.side.notes("sidecar/tokenUsage")[-1]["promptTokenCount"]
    # Lower the threshold under the last prompt: the next turn starts with an automatic compaction.
    session.configure(**fault_settings(steps), compressionThreshold=round(prompt / 2 / 20_000, 4))
    record_count = len(records(session.path))
    marker = tmp_path / "executed"
    fake.script(_with_marker(steps, marker))
    compressed_mark, warned = len(session.side.notes("sidecar/compressed")), len(session.side.messages(WARNING))
    how, what, cause = outcome

    reply = await session.side.say("a turn that starts with a compaction")
    assert "a turn that starts with a compaction" in reply["text"]
    assert [r for r in fake.requests() if r.summary], "the automatic compaction was attempted"
    if how == "error":
        warnings = session.side.messages(WARNING)[warned:]
        assert len(warnings) == 1 and cause in warnings[0]
        assert warnings[0].startswith("Sidecar: Compaction failed, the conversation is unchanged: ")
        assert_key_free(warnings)
    else:
        notice = await session.side.wait_note(
            "sidecar/compressed", lambda n: n["trigger"] == "auto", start=compressed_mark
        )
        assert notice["status"] == what

    turn = [text("user", "a turn that starts with a compaction"), text("model", reply["text"])]
    assert last_chat_contents(fake) == [*before, turn[0]], "the turn was sent with the untouched history"
    assert recorded_history(session.path) == [*before, *turn]
    added = new_records(session.path, record_count)
    assert all(r["status"] in FAILED_STATUSES for r in added if r["type"] == "compaction")
    assert not marker.exists(), "a functionCall in a summary is never executed"
    assert session.side.notes("sidecar/toolCall") == [] and session.side.client.server_requests == []
    await assert_next_turn_works(session, [*before, *turn])


async def test_compaction_after_a_fault_succeeds_and_is_recorded(session: Session, fake: Any) -> None:
    """The failure leaves nothing behind that blocks a later compaction (no latch, no lock held)."""
    await session.begin()
    await session.build(6)
    fake.script([{"kind": "status", "status": 500, "match": "summary", "times": RETRIES + 1}])
    await session.side.error("sidecar/compress", {})
    result = await session.side.request("sidecar/compress", {})
    assert result["status"] == "COMPRESSED"
    statuses = [r["status"] for r in records(session.path) if r["type"] == "compaction"]
    assert statuses == ["COMPRESSED"]
