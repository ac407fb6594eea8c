"""Every path that changes the history (tool calls, resume, rewind, fork, undo, pins, compaction, cancels, model
switches, imports) leaves requests the strict fake Gemini accepts: a property test over random edit sequences, and
one test per path that needs the repair before sending."""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.app import FrontEnd, Ports, Services, build_services
from sidecar.compaction.tool_outputs import ToolOutputSaver
from sidecar.config.settings import Settings
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.recording import MessageRecord
from sidecar.fakegemini import FakeGemini
from sidecar.gemini.client import ClientConfig, ModelClient
from sidecar.protocol import errors
from sidecar.session import Session
from tests.service.conftest import EditorSpy

#: Examples per run of the property test: a few in `make test`, more with SIDECAR_PROPERTY_EXAMPLES (make test-stress).
EXAMPLES = int(os.environ.get("SIDECAR_PROPERTY_EXAMPLES", "12"))


class AllowingHost:
    """The editor side of the tool runner: every call allowed, edits written by the registry."""

    def __init__(self) -> None:
        self.on_call: Any = None

    async def before_plan(self, paths: Any) -> None:
        pass

    def after_call(self) -> None:
        pass

    def tool_call(self, notice: Any, plan: Any = None, result: Any = None) -> None:
        if self.on_call is not None:
            self.on_call(notice)

    async def confirm(self, request: Any, plan: Any = None) -> str:
        return "allow"

    def apply_edit(self, plan: Any) -> None:
        return None


@asynccontextmanager
async def tool_services(
    fake: FakeGemini, root: Path, model: str = "gemini-2.5-flash", *, memory: bool = False
) -> AsyncIterator[tuple[Services, AllowingHost]]:
    """The chat services with the built-in tools over a small workspace, against the fake."""
    project = root / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "notes.txt").write_text("the build needs Python 3.12\n")
    client = ModelClient(
        ClientConfig(
            api_key="test-key", base_url=fake.url, timeout_ms=120_000, retry_attempts=0, retry_initial_delay_ms=1
        )
    )
    host = AllowingHost()

    async def get_client() -> ModelClient:
        return client

    session = Session(
        settings=Settings(token_limit=100_000, retry_initial_delay_ms=1, model=model), workspace_folders=[str(project)]
    )
    rec = EditorSpy()
    services = build_services(
        session,
        FrontEnd(notifier=rec, inform=rec.warning, tools=host),
        Ports(model=get_client, save_tool_output=ToolOutputSaver(root), home=root / "home", memory=memory),
    )
    await services.start()
    try:
        yield services, host
    finally:
        await services.aclose()
        await client.aclose()


def refused(fake: FakeGemini) -> list[str]:
    """The requests the strict fake refused, with its message."""
    return [f"#{r.index} {r.model}: {r.step or ''} {r.status}" for r in fake.requests() if r.status == 400]


READ = {"kind": "function_call", "match": "chat", "name": "read_file", "args": {"path": "notes.txt"}}
OPS = st.sampled_from(
    [
        "send",
        "tool",
        "parallel",
        "text_and_tool",
        "compress",
        "undo",
        "rewind",
        "fork",
        "resume",
        "cancel",
        "cancel_in_tool_loop",
        "pin",
        "gemini3",
        "gemini25",
        "empty_reply",
        "looping_calls",
        "rewind_restoring_files",
    ]
)


async def _op(services: Services, fake: FakeGemini, op: str, pick: int) -> None:
    chat, conv = services.chat, services.live.conversation
    if op == "tool":
        fake.script(READ)
    elif op == "parallel":
        fake.script(
            {
                "kind": "function_call",
                "match": "chat",
                "calls": [{"name": "read_file", "args": {"path": "notes.txt"}}, {"name": "list_directory", "args": {}}],
            }
        )
    elif op == "text_and_tool":
        fake.script({**READ, "text": "Let me read the notes first."})
    elif op == "empty_reply":
        fake.script({"kind": "empty", "match": "chat"})
    elif op == "looping_calls":  # the same call over and over: loop detection nudges, then stops the turn
        fake.script({**READ, "times": 12})
    if op in ("send", "tool", "parallel", "text_and_tool", "empty_reply", "looping_calls"):
        await chat.send_message(f"{op} {pick}")
    elif op == "compress":
        await chat.compress(None)
    elif op == "undo":
        await services.sessions.undo_compaction()
    elif op in ("rewind", "rewind_restoring_files"):
        ids = [
            conv.ids[i]
            for i, c in enumerate(conv.history)
            if c.role == "user" and conv.ids[i] and not any(p.function_response is not None for p in c.parts)
        ]
        if ids:
            await services.actions.rewind(ids[pick % len(ids)], restore_files=op == "rewind_restoring_files")
    elif op == "fork":
        await services.actions.fork(None, None)
    elif op == "resume":
        await services.sessions.resume(conv.session_id)
    elif op in ("cancel", "cancel_in_tool_loop"):
        seen = len(fake.requests())
        if op == "cancel_in_tool_loop":
            fake.script([READ, {"kind": "hold", "match": "chat"}])
            seen += 1
        else:
            fake.script({"kind": "hold", "match": "chat"})
        turn = asyncio.create_task(chat.send_message(f"{op} {pick}"))
        await asyncio.to_thread(fake.wait_for_requests, seen + 1, 60)
        turn.cancel()
        with suppress(asyncio.CancelledError):
            await turn
        fake.release()
    elif op == "pin":
        services.actions.pin(f"fact {pick}")
    elif op in ("gemini3", "gemini25"):
        import msgspec

        model = "gemini-3.5-flash" if op == "gemini3" else "gemini-2.5-flash"
        services.live.session.settings = msgspec.structs.replace(services.live.session.settings, model=model)


async def _scenario(fake: FakeGemini, ops: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "project").mkdir()
        (root / "project" / "GEMINI.md").write_text("Answer briefly.\n")  # the session context turn carries it
        async with tool_services(fake, root, memory=True) as (services, _host):
            for op, pick in ops:
                try:
                    await _op(services, fake, op, pick)
                except errors.SidecarError as exc:
                    # refusals in words (nothing to undo, nothing to compress) are fine; a refused request is not
                    assert "rejected the request" not in exc.message, exc.message
                assert refused(fake) == [], (ops, refused(fake))
            await services.chat.send_message("and finally")
            assert refused(fake) == [], (ops, refused(fake))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=EXAMPLES <= 12)
@given(st.lists(st.tuples(OPS, st.integers(0, 50)), min_size=1, max_size=8))
def test_random_edit_sequences_only_send_requests_the_api_accepts(_fake_server: FakeGemini, ops: list[Any]) -> None:
    _fake_server.reset()
    asyncio.run(_scenario(_fake_server, ops))


# ---- the paths that need the repair (a history the sidecar did not make) ---------------------------------------


@pytest.fixture
def repair_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDECAR_REQUEST_REPAIR", "on")


async def test_model_switch_from_25_to_3x_keeps_requests_valid(fake: FakeGemini, tmp_path: Path) -> None:
    """Tool turns on 2.5 (unsigned calls), then the model is switched to a Gemini 3 model: the old turns' calls need
    no signature, and the new turn's calls keep the signature Gemini 3 sent (unrepaired: the sidecar's own shape).
    A turn keeps the model it started with, so a current turn never holds another model's calls."""
    import msgspec

    async with tool_services(fake, tmp_path) as (services, _host):
        fake.script(READ)
        await services.chat.send_message("an earlier turn with a call")
        settings_now = services.live.session.settings
        services.live.session.settings = msgspec.structs.replace(settings_now, model="gemini-3.5-flash")
        fake.script(READ)
        await services.chat.send_message("read the notes again")
    assert refused(fake) == []
    last = fake.requests()[-1]
    assert last.model == "gemini-3.5-flash"
    signatures = [p.thought_signature for c in last.contents() for p in c.parts if p.function_call is not None]
    assert signatures[0] is None and signatures[1]  # 2.5's call as it was; 3.x's with the signature it sent


def _broken_history() -> list[Content]:
    call = Part(function_call=FunctionCall(name="read_file", args={"path": "notes.txt"}, id="r1"))
    return [
        text_content("user", "why does the build fail?"),
        Content(role="model", parts=[Part(text="Let me look.")]),
        Content(role="model", parts=[Part(text=""), call]),  # a call turn right after a model turn, empty text
        Content(
            role="user",
            parts=[Part(function_response=FunctionResponse(name="read_file", id="r1", response={"output": "3.12"}))],
        ),
        Content(role="model", parts=[Part(function_call=FunctionCall(name="glob", args={}, id="g1"))]),  # no result
    ]


async def test_resumed_history_that_breaks_rules_is_repaired_and_logged_once(
    fake: FakeGemini, tmp_path: Path, repair_on: None, caplog: pytest.LogCaptureFixture
) -> None:
    async with tool_services(fake, tmp_path, model="gemini-3.5-flash") as (services, _host):
        store = services.store
        writer = store.create("broken-session", model="gemini-3.5-flash", title=None, start_time="2026-01-01T00:00:00Z")
        for n, content in enumerate(_broken_history()):
            kind = (
                ("toolCall" if any(p.function_call for p in content.parts) else "model")
                if content.role == "model"
                else ("toolResult" if any(p.function_response for p in content.parts) else "user")
            )
            writer.append(MessageRecord(time="2026-01-01T00:00:00Z", id=f"m{n + 1}", kind=kind, content=content))
        writer.close()
        await services.sessions.resume("broken-session")
        with caplog.at_level(logging.WARNING, logger="sidecar.gemini.client"):
            await services.chat.send_message("go on")
            await services.chat.send_message("and again")
    assert refused(fake) == []
    repairs = [r for r in caplog.records if "repaired before sending" in r.getMessage()]
    assert len(repairs) == 1, [r.getMessage() for r in repairs]
    assert "merged consecutive model turns" in repairs[0].getMessage()


async def test_a_400_naming_a_request_shape_problem_says_the_fix(fake: FakeGemini, tmp_path: Path) -> None:
    async with tool_services(fake, tmp_path) as (services, _host):
        fake.script(
            {
                "kind": "status",
                "status": 400,
                "message": (
                    "Please ensure that function call turn comes immediately after a user turn or after a function "
                    "response turn."
                ),
            }
        )
        with pytest.raises(errors.SidecarError) as exc:
            await services.chat.send_message("hello")
    assert "Rewind to before the last tool call" in exc.value.message


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
IMPORTS = [
    FIXTURES / "gemini-cli" / "split-model-turns.jsonl",
    FIXTURES / "gemini-cli" / "legacy-session.json",
    FIXTURES / "claude-code" / "5b1f0c3e-8d2a-4c6e-b7f1-0e9a2d4c6b81.jsonl",
    FIXTURES / "codex" / "rollout-2026-03-02T09-00-00-0199a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl",
]


@pytest.mark.parametrize("path", IMPORTS, ids=[p.parent.name + "/" + p.suffix for p in IMPORTS])
@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3.5-flash"])
async def test_imported_sessions_resume_and_continue_with_accepted_requests(
    fake: FakeGemini, tmp_path: Path, path: Path, model: str
) -> None:
    """Each import format, resumed and continued (with a tool call) unrepaired: the strict fake accepts it all."""
    from sidecar.recording.cli import _import_file

    async with tool_services(fake, tmp_path, model=model) as (services, _host):
        result = _import_file(path, services.store, model)
        await services.sessions.resume(result.session_id)
        await services.chat.send_message("Go on from where we stopped.")
        fake.script(READ)
        await services.chat.send_message("Read the notes, then go on.")
    assert refused(fake) == []
    assert len(fake.requests()) == 3
