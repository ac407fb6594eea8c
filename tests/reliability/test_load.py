"""Load: 1,000 interleaved sidecar/sendMessage, sidecar/compress and sidecar/ideContext messages, all written
before the first answer is read. They must be processed in the order they were sent, with no notification
lost and the history (live and recorded) intact. One process takes the whole run; the tests check its results.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from sidecar.chat.service import ALREADY_COMPRESSING
from sidecar.protocol import errors
from tests.reliability.checks import chat_requests, normal, recorded_history, text
from tests.reliability.conftest import make_dirs
from tests.reliability.proc import RpcError, Sidecar, records

pytestmark = pytest.mark.asyncio(loop_scope="module")

MESSAGES = 1_000
#: One period of the interleaving: editor context, turns, and a compaction every tenth message.
PATTERN = ["ctx", "send", "ctx", "send", "send", "ctx", "send", "compress", "ctx", "send"]
ACTIVE = "/ws/main.py"
TOKEN_LIMIT = 16_000


@dataclass
class Run:
    side: Sidecar
    fake: Any
    stream: list[tuple[str, Any]]  # (kind, payload) in the order written
    answers: dict[int, Any] = field(default_factory=dict)  # stream index -> result or RpcError
    answer_order: list[int] = field(default_factory=list)  # stream indexes of requests, in the order answered
    requests: list[Any] = field(default_factory=list)  # the fake's log after the run
    session_id: str = ""
    path: Path = Path()

    def indexes(self, kind: str) -> list[int]:
        return [i for i, (k, _) in enumerate(self.stream) if k == kind]


def context(index: int) -> dict[str, Any]:
    """The editor context sent at stream position `index`: the cursor's (1-based) line is the position + 1."""
    return {
        "openFiles": [
            {"path": ACTIVE, "timestamp": index, "isActive": True, "cursor": {"line": index + 1, "character": 1}}
        ],
        "isTrusted": True,
    }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def run(_fake_server: Any) -> AsyncIterator[Run]:
    fake = _fake_server
    fake.reset()
    home, workspace = make_dirs()
    side = Sidecar(home, workspace, fake.url, log_level="INFO")
    try:
        await side.start(tokenLimit=TOKEN_LIMIT)  # automatic compactions keep the history (and the run) short
        await side.request("sidecar/newSession", {})
        stream = (PATTERN * (MESSAGES // len(PATTERN) + 1))[:MESSAGES]
        result = Run(side, fake, [])
        futures: dict[int, asyncio.Future[Any]] = {}
        for index, kind in enumerate(stream):  # written back to back: nothing awaits an answer here
            if kind == "ctx":
                payload: Any = context(index)
                side.notify("sidecar/ideContext", payload)
            elif kind == "send":
                payload = {"text": f"load message {index}"}
                futures[index] = side.request_now("sidecar/sendMessage", payload)
            else:
                payload = {}
                futures[index] = side.request_now("sidecar/compress", payload)
            result.stream.append((kind, payload))
            if index in futures:
                futures[index].add_done_callback(lambda _f, i=index: result.answer_order.append(i))
        outcomes = await asyncio.wait_for(asyncio.gather(*futures.values(), return_exceptions=True), 300)
        result.answers = dict(zip(futures, outcomes, strict=True))
        result.session_id = side.session_id()
        result.path = side.session_path(result.session_id)
        result.requests = fake.requests()
        yield result
    finally:
        await side.stop()
        shutil.rmtree(home.parent, ignore_errors=True)
        fake.reset()


def turn_results(run: Run) -> list[tuple[int, dict[str, Any]]]:
    return [(i, run.answers[i]) for i in run.indexes("send")]


async def test_every_turn_is_answered_in_the_order_it_was_sent(run: Run) -> None:
    turns = turn_results(run)
    failed = [(i, a) for i, a in turns if not isinstance(a, dict)]
    assert not failed, f"{len(failed)} turns failed, first: {failed[0]}"
    for number, (index, answer) in enumerate(turns, start=1):
        assert answer["text"].startswith(f'Fake Gemini reply #{number}: you said "load message {index}"')
    answered = [i for i in run.answer_order if run.stream[i][0] == "send"]
    assert answered == run.indexes("send"), "turns are answered in the order they were sent"
    sent_texts = [normal(r.body["contents"])[-1]["parts"][0]["text"] for r in chat_requests_of(run)]
    assert sent_texts == [f"load message {i}" for i in run.indexes("send")]


def chat_requests_of(run: Run) -> list[Any]:
    return [r for r in run.requests if r.kind == "stream" and not r.summary]


async def test_no_notification_is_lost(run: Run) -> None:
    deltas: dict[str, str] = {}
    for delta in run.side.notes("sidecar/messageDelta"):
        deltas[delta["turnId"]] = deltas.get(delta["turnId"], "") + delta["text"]
    turns = [a for _, a in turn_results(run)]
    assert len(deltas) == len(turns), "every turn streamed"
    for answer in turns:
        assert deltas[answer["turnId"]] == answer["text"], "the deltas of a turn add up to its reply, in order"
    usage = [u for u in run.side.notes("sidecar/tokenUsage") if u["sessionId"] == run.session_id]
    assert len(usage) >= len(turns), "a sidecar/tokenUsage after every turn"
    notices = [(n["trigger"], n["status"]) for n in run.side.notes("sidecar/compressed")]
    attempts = [(r["trigger"], r["status"]) for r in records(run.path) if r["type"] == "compaction"]
    assert notices == attempts, "a sidecar/compressed for every recorded compaction attempt (manual and automatic)"
    manual = [a for i, a in sorted(run.answers.items()) if run.stream[i][0] == "compress" and isinstance(a, dict)]
    assert [s for t, s in notices if t == "manual"] == [a["status"] for a in manual if a["status"] != "NOOP"]


async def test_compress_requests_run_in_their_place_or_are_refused_as_busy(run: Run) -> None:
    """A compress that arrives while another one is still waiting is refused with -32003; the ones that run, run
    between the turns sent before and after them."""
    ran = 0
    order = run.answer_order
    for index in run.indexes("compress"):
        answer = run.answers[index]
        if isinstance(answer, RpcError):
            assert (answer.code, answer.message) == (errors.BUSY, ALREADY_COMPRESSING), answer
            earlier = [i for i in run.indexes("compress") if i < index and not isinstance(run.answers[i], RpcError)]
            assert any(order.index(e) > order.index(index) for e in earlier), "busy only while another one waits"
            continue
        ran += 1
        assert answer["status"] in ("COMPRESSED", "NOOP") or answer["status"].startswith("COMPRESSION_FAILED")
        before = [i for i in run.indexes("send") if i < index]
        after = [i for i in run.indexes("send") if i > index]
        position = order.index(index)
        assert all(order.index(i) < position for i in before) and all(order.index(i) > position for i in after)
    assert ran >= 1


async def test_the_history_is_intact_live_and_recorded(run: Run) -> None:
    recorded = records(run.path)
    user_texts = [r["content"]["parts"][0]["text"] for r in recorded if r["type"] == "message" and r["kind"] == "user"]
    assert user_texts == [f"load message {i}" for i in run.indexes("send")], "each turn recorded once, in order"
    ids = [r["id"] for r in recorded if r["type"] == "message"]
    assert len(ids) == len(set(ids))
    recorded_history(run.path)  # replays strictly: a damaged record would raise
    # The recording is what the model sees. Checked once the load is over, with one more message: the last item the
    # load answered may be a compress (recorded, not yet sent to the model), and the message may compact first.
    reply = await run.side.say("one more after the load")
    history = recorded_history(run.path)
    last = normal(chat_requests(run.fake)[-1].body["contents"])
    assert history == [*last, text("model", reply["text"])], "recording == what the model saw"


def shown_line(contents: list[dict[str, Any]], before: int | None) -> int | None:
    """The cursor line the model was told about by the IDE-context turn right before the user's message."""
    value = contents[-2]["parts"][0].get("text", "") if len(contents) > 1 else ""
    if not value.startswith("Here is") or "```json\n" not in value:
        return before
    payload = json.loads(value.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    changes = payload.get("changes", payload)
    for key in ("activeFile", "cursorMoved", "activeFileChanged"):
        entry = changes.get(key)
        if entry and entry.get("cursor"):
            return int(entry["cursor"]["line"])
    return before


async def test_each_turn_sees_the_editor_context_sent_before_it(run: Run) -> None:
    """sidecar/ideContext is ordered with the requests around it: a context sent after a message does not leak
    into that message's turn, and the one sent before it is the one the model sees."""
    line: int | None = None
    wrong = []
    for request, index in zip(chat_requests_of(run), run.indexes("send"), strict=True):
        line = shown_line(normal(request.body["contents"]), line)
        expected = max(i for i in run.indexes("ctx") if i < index) + 1
        if line != expected:
            wrong.append((index, expected, line))
    assert not wrong, (
        f"{len(wrong)} of {len(run.indexes('send'))} turns saw another editor context than the one sent before "
        f"them; first (message, expected line, shown line): {wrong[:3]}"
    )
