"""Property-based fuzzing (hypothesis) of the params of every sidecar/* request and notification.

Wrong types, huge strings, deep nesting and lone surrogates must answer InvalidParams (-32602, naming the
method) — or, for the sidecar/ideContext notification, be dropped with a log line — and never an internal
error. One sidecar process (module scope) takes every example of every property; at the end it must still
answer promptly and its memory must not have grown with what it was sent.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from sidecar.protocol import errors
from tests.reliability.checks import chat_requests
from tests.reliability.conftest import make_dirs
from tests.reliability.proc import RpcError, Sidecar

pytestmark = pytest.mark.asyncio(loop_scope="module")

EXAMPLES = 150
TOKEN_LIMIT = 100_000  # a huge message is refused by the overflow guard before any model call
fuzz = settings(
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large],
)


class Fuzzed:
    """The module's server and its memory right after warm-up."""

    def __init__(self, side: Sidecar, fake: Any) -> None:
        self.side = side
        self.fake = fake
        self.rss_start = 0


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def target(_fake_server: Any) -> AsyncIterator[Fuzzed]:
    home, workspace = make_dirs()
    side = Sidecar(home, workspace, _fake_server.url, log_level="INFO")
    try:
        await side.start(tokenLimit=TOKEN_LIMIT)
        await side.say("warm up")
        fuzzed = Fuzzed(side, _fake_server)
        fuzzed.rss_start = side.rss_kb()
        yield fuzzed
    finally:
        await side.stop()
        shutil.rmtree(home.parent, ignore_errors=True)


# -- strategies ------------------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def nest(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


#: Nested as deep as a JSON encoder will go (the raw parser limit is fuzzed in test_bad_input.py).
deep = st.integers(min_value=20, max_value=400).map(nest)
lone_surrogate = st.characters(categories=["Cs"])
surrogate_text = st.tuples(st.text(max_size=12), lone_surrogate, st.text(max_size=12)).map("".join)
huge_text = st.tuples(st.integers(min_value=500_000, max_value=3_000_000), st.sampled_from(["x", "é", "word ", "日"]))
huge_text = huge_text.map(lambda spec: (spec[1] * spec[0])[: spec[0]])
not_a_string = values.filter(lambda v: not isinstance(v, str)) | deep
not_an_object = st.lists(values, max_size=4) | scalars.filter(lambda v: v is not None) | deep.map(lambda v: [v])
junk_fields = st.dictionaries(st.text(max_size=10), values | deep, max_size=4)


def with_field(name: str, value: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A params object holding `name: value`, plus junk fields."""
    return st.tuples(junk_fields, value).map(lambda pair: {**pair[0], name: pair[1]})


def without(name: str) -> st.SearchStrategy[dict[str, Any]]:
    return junk_fields.map(lambda d: {k: v for k, v in d.items() if k != name})


async def call(side: Sidecar, method: str, params: Any) -> Any:
    try:
        return await side.request(method, params, timeout=20)
    except RpcError as exc:
        return exc


def assert_invalid_params(method: str, answer: Any) -> None:
    assert isinstance(answer, RpcError), f"{method} accepted bad params: {str(answer)[:200]}"
    assert answer.code == errors.INVALID_PARAMS, f"{method}: {answer.code} {answer.message[:300]}"
    assert answer.message.startswith(f"Invalid params for {method}"), answer.message[:300]


# -- requests ------------------------------------------------------------------------------------------------


@fuzz
@given(params=not_an_object | with_field("text", not_a_string) | without("text"))
async def test_send_message_wrong_types(target: Fuzzed, params: Any) -> None:
    assert_invalid_params("sidecar/sendMessage", await call(target.side, "sidecar/sendMessage", params))


@fuzz
@given(params=with_field("text", huge_text))
async def test_send_message_huge_text_is_refused_before_the_model(target: Fuzzed, params: Any) -> None:
    before = len(chat_requests(target.fake))
    answer = await call(target.side, "sidecar/sendMessage", params)
    assert isinstance(answer, RpcError) and answer.code == errors.CONTEXT_OVERFLOW, str(answer)[:300]
    assert len(chat_requests(target.fake)) == before, "the model is not called"


STRING_FIELDS = [
    ("sidecar/sendMessage", "text"),
    ("sidecar/compress", "instructions"),
    ("sidecar/resumeSession", "sessionId"),
    ("sidecar/getTranscript", "sessionId"),
]


@pytest.mark.parametrize(("method", "field"), STRING_FIELDS)
@settings(fuzz, max_examples=40)
@given(value=surrogate_text)
@example(value="\ud800")
async def test_lone_surrogates_are_invalid_params(target: Fuzzed, method: str, field: str, value: str) -> None:
    """A string that is not Unicode text cannot be sent to Gemini nor recorded: refuse it at the door."""
    assert_invalid_params(method, await call(target.side, method, {field: value}))


@fuzz
@given(params=not_an_object | with_field("instructions", not_a_string.filter(lambda v: v is not None)))
async def test_compress_wrong_types(target: Fuzzed, params: Any) -> None:
    assert_invalid_params("sidecar/compress", await call(target.side, "sidecar/compress", params))


@pytest.mark.parametrize("method", ["sidecar/resumeSession", "sidecar/getTranscript"])
@fuzz
@given(data=st.data())
async def test_session_id_wrong_types(target: Fuzzed, method: str, data: st.DataObject) -> None:
    field = not_a_string if method == "sidecar/resumeSession" else not_a_string.filter(lambda v: v is not None)
    params = data.draw(not_an_object | with_field("sessionId", field))
    assert_invalid_params(method, await call(target.side, method, params))


@pytest.mark.parametrize("method", ["sidecar/resumeSession", "sidecar/getTranscript"])
@settings(fuzz, max_examples=60)
@given(session_id=st.text(min_size=1, max_size=300) | huge_text | st.sampled_from(["../../etc/passwd", "/etc/x", "."]))
async def test_unknown_session_ids_are_a_session_error(target: Fuzzed, method: str, session_id: str) -> None:
    answer = await call(target.side, method, {"sessionId": session_id})
    assert isinstance(answer, RpcError) and answer.code == errors.SESSION_ERROR, str(answer)[:300]


@pytest.mark.parametrize(
    "method", ["sidecar/getTokenUsage", "sidecar/newSession", "sidecar/listSessions", "sidecar/undoCompaction"]
)
@fuzz
@given(params=not_an_object | junk_fields)
async def test_methods_without_params(target: Fuzzed, method: str, params: Any) -> None:
    """Non-objects are InvalidParams; unknown fields in an object are ignored (later versions may add some)."""
    answer = await call(target.side, method, params)
    if isinstance(params, dict):
        assert not isinstance(answer, RpcError), f"{method}: {answer}"
    else:
        assert_invalid_params(method, answer)


@fuzz
@given(arguments=st.lists(values | deep | surrogate_text, max_size=3) | st.none())
async def test_compress_command_arguments(target: Fuzzed, arguments: Any) -> None:
    await target.side.request("sidecar/newSession", {})  # an empty history: a compaction is a NOOP
    answer = await call(
        target.side, "workspace/executeCommand", {"command": "sidecar.compressConversation", "arguments": arguments}
    )
    if isinstance(answer, RpcError):
        assert answer.code == errors.INVALID_PARAMS, f"{answer.code} {answer.message[:300]}"
    else:
        assert answer["status"] == "NOOP"


# -- the sidecar/ideContext notification -----------------------------------------------------------------------

paths = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=30)
valid_entry = st.fixed_dictionaries(
    {"path": paths.map(lambda p: "/ws/" + p), "timestamp": st.integers(0, 2**40)},
    optional={
        "isActive": st.booleans(),
        "cursor": st.fixed_dictionaries({"line": st.integers(1, 10**6), "character": st.integers(1, 10**4)}),
        "selectedText": st.text(max_size=50),
    },
)
bad_entry = (
    not_an_object
    | with_field("path", not_a_string)
    | valid_entry.map(lambda e: {**e, "path": "relative/" + e["path"][4:]})
    | st.tuples(valid_entry, not_a_string.filter(lambda v: not isinstance(v, int | float))).map(
        lambda p: {**p[0], "timestamp": p[1]}
    )
)
surrogate_entry = valid_entry.flatmap(
    lambda e: st.sampled_from(["path", "selectedText"]).flatmap(
        lambda f: surrogate_text.map(lambda s: {**e, f: ("/ws/" + s) if f == "path" else s})
    )
)
entries = st.lists(
    st.tuples(st.sampled_from(["valid", "bad", "surrogate"]), st.none()).flatmap(
        lambda kind: {"valid": valid_entry, "bad": bad_entry, "surrogate": surrogate_entry}[kind[0]].map(
            lambda e, k=kind[0]: (k, e)
        )
    ),
    max_size=6,
)
bad_notification = (
    not_an_object
    | without("openFiles")
    | with_field("openFiles", values.filter(lambda v: not isinstance(v, list)) | deep.map(lambda v: {"k": v}))
    | st.tuples(entries, values.filter(lambda v: v is not None and not isinstance(v, bool))).map(
        lambda p: {"openFiles": [e for _, e in p[0]], "isTrusted": p[1]}
    )
)


def context_paths(contents: list[dict[str, Any]]) -> set[str]:
    """Every file path the IDE-context turns of a request mention."""
    found: set[str] = set()
    for content in contents:
        value = content["parts"][0].get("text", "")
        if value.startswith("Here is") and "```json\n" in value:
            payload = json.loads(value.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
            found |= set(_strings(payload, "path")) | set(_strings(payload, "otherOpenFiles"))
    return found


def _strings(payload: Any, key: str) -> list[str]:
    if isinstance(payload, dict):
        out = []
        for k, v in payload.items():
            if k == key and isinstance(v, str):
                out.append(v)
            elif k == key and isinstance(v, list):
                out.extend(x for x in v if isinstance(x, str))
            else:
                out.extend(_strings(v, key))
        return out
    return []


@fuzz
@given(notification=bad_notification)
async def test_bad_ide_context_notifications_are_dropped_with_a_log_line(target: Fuzzed, notification: Any) -> None:
    side = target.side
    side.notify("sidecar/ideContext", {"openFiles": []})
    mark = len(side.stderr)
    side.notify("sidecar/ideContext", notification)
    assert any("dropping sidecar/ideContext" in line for line in await side.logged_since(mark))
    await side.ping()


@fuzz
@given(files=entries)
@example(files=[("surrogate", {"path": "/ws/\ud800.py", "timestamp": 1})])
@example(files=[("surrogate", {"path": "/ws/a.py", "timestamp": 1, "isActive": True, "selectedText": "\udc80"})])
async def test_ide_context_entries_are_checked_one_by_one(target: Fuzzed, files: list[tuple[str, Any]]) -> None:
    """Bad entries (wrong types, relative paths, lone surrogates) are dropped with a log line; the turn works
    and the model only ever sees the valid entries."""
    side = target.side
    await side.request("sidecar/newSession", {})
    side.notify("sidecar/ideContext", {"openFiles": []})
    mark = len(side.stderr)
    side.notify("sidecar/ideContext", {"openFiles": [entry for _, entry in files], "isTrusted": True})
    answer = await call(side, "sidecar/sendMessage", {"text": "probe"})
    assert not isinstance(answer, RpcError), f"the turn after the notification failed: {answer}"
    valid = {entry["path"] for kind, entry in files if kind == "valid"}
    assert context_paths(chat_requests(target.fake)[-1].body["contents"]) <= valid
    logged = await side.logged_since(mark)
    for index, (kind, _) in enumerate(files):
        if kind != "valid":
            assert any(f"dropping openFiles[{index}]" in line for line in logged), f"entry {index} is not logged"


@settings(fuzz, max_examples=20)
@given(selected=huge_text, instructions=huge_text)
async def test_huge_strings_elsewhere_are_bounded(target: Fuzzed, selected: str, instructions: str) -> None:
    """A huge selection is cut before it reaches the model; huge compress instructions on an empty session are
    a NOOP (or refused)."""
    side = target.side
    await side.request("sidecar/newSession", {})
    side.notify(
        "sidecar/ideContext",
        {"openFiles": [{"path": "/ws/a.py", "timestamp": 1, "isActive": True, "selectedText": selected}]},
    )
    answer = await call(side, "sidecar/compress", {"instructions": instructions})
    assert (isinstance(answer, dict) and answer["status"] == "NOOP") or (
        isinstance(answer, RpcError) and answer.code == errors.INVALID_PARAMS
    ), str(answer)[:300]
    await side.say("probe")
    contents = chat_requests(target.fake)[-1].body["contents"]
    assert contents[0]["parts"][0]["text"].startswith("<session_context>")
    sent = contents[1]["parts"][0]["text"]  # the editor context, after the session context
    assert 16_384 <= len(sent) < 20_000, "the selection is cut to 16 KiB"


# -- after all of it ---------------------------------------------------------------------------------------


async def repeated_workload(side: Sidecar) -> None:
    """A fixed mix of what the properties send: huge refused messages, bad params, notifications, turns."""
    for size in range(1_000_000, 3_000_001, 250_000):
        await call(side, "sidecar/sendMessage", {"text": "日" * size})
        await call(side, "sidecar/resumeSession", {"sessionId": "x" * size})
    for i in range(100):
        await call(side, "sidecar/sendMessage", {"text": nest(300, i)})
        side.notify("sidecar/ideContext", {"openFiles": [{"path": f"relative/{i}"}] * 5})
        await call(side, "sidecar/getTranscript", {"sessionId": f"no-such-session-{i}"})
    await side.request("sidecar/newSession", {})
    for i in range(5):
        await side.say(f"a normal turn {i}")


async def test_the_fuzzed_server_is_responsive_and_its_memory_bounded(target: Fuzzed) -> None:
    """Runs last in this module: every example above went to this one process. The same work done again must not
    make its RSS grow: that would be a leak, or freed multi-megabyte buffers kept in glibc's arenas (before
    sidecar.allocator fixed the mmap threshold, identical rounds swung it by 20-50 MB)."""
    side = target.side
    assert side.returncode is None, "the server is still running"
    await side.request("sidecar/newSession", {})
    reply = await side.say("are you still there?")
    assert "are you still there?" in reply["text"]
    assert (side.rss_kb() - target.rss_start) / 1024 < 400, "bounded while fuzzed (a leaked huge string adds GBs)"
    await repeated_workload(side)  # reach this workload's high-water mark
    settled = side.rss_kb()
    for _ in range(2):
        await repeated_workload(side)
    grown_mb = (side.rss_kb() - settled) / 1024
    assert grown_mb < 8, f"the same work done twice more grew the server's RSS by {grown_mb:.0f} MB"
