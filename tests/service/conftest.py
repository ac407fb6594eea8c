"""A ChatService wired to the fake Gemini over real HTTP, with a notifier that records what the editor would see."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sidecar.app import FrontEnd, Ports, Services, build_services
from sidecar.chat.live import LiveConversation
from sidecar.chat.service import ChatService
from sidecar.compaction.tool_outputs import ToolOutputSaver
from sidecar.config.settings import Settings
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.outcome import Trigger
from sidecar.core.tokens import estimate_history_tokens
from sidecar.gemini.client import ClientConfig, ModelClient
from sidecar.protocol.methods import PROGRESS_TITLES, ProgressKind
from sidecar.protocol.types import CompressedParams, RetryParams, TokenUsage, ToolOutputsMaskedParams
from sidecar.session import Session


@dataclass
class RecordingProgress:
    log: list[str]

    def report(self, message: str) -> None:
        self.log.append(f"report:{message}")

    def end(self, message: str | None = None) -> None:
        self.log.append(f"end:{message}")


@dataclass
class EditorSpy:
    deltas: list[str] = field(default_factory=list)
    usages: list[TokenUsage] = field(default_factory=list)
    notices: list[CompressedParams] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    progress_log: list[str] = field(default_factory=list)
    hooks: list[Trigger] = field(default_factory=list)
    retries: list[RetryParams] = field(default_factory=list)
    masked_notices: list[ToolOutputsMaskedParams] = field(default_factory=list)

    def masked(self, notice: ToolOutputsMaskedParams) -> None:
        self.masked_notices.append(notice)

    def retry(self, notice: RetryParams) -> None:
        self.retries.append(notice)

    def message_delta(self, turn_id: str, text: str) -> None:
        self.deltas.append(text)

    def thought_delta(self, turn_id: str, text: str) -> None:
        pass

    def token_usage(self, usage: TokenUsage) -> None:
        self.usages.append(usage)

    def compressed(self, notice: CompressedParams) -> None:
        self.notices.append(notice)

    def error(self, message: str) -> None:
        self.errors.append(message)

    def warning(self, message: str) -> None:
        self.warnings.append(message)

    async def progress(self, kind: ProgressKind) -> RecordingProgress:
        self.progress_log.append(f"begin:{PROGRESS_TITLES[kind]}")
        return RecordingProgress(self.progress_log)


@dataclass
class Rig:
    chat: ChatService
    rec: EditorSpy
    fake: Any
    tmp: Path
    services: Services

    @property
    def live(self) -> LiveConversation:
        return self.services.live

    @property
    def settings(self) -> Settings:
        return self.live.session.settings

    def set(self, **changes: Any) -> None:
        import msgspec

        self.live.session.settings = msgspec.structs.replace(self.settings, **changes)

    def load(self, history: Sequence[Content], prompt_tokens: int, source: str = "api") -> None:
        conv = self.live.conversation
        conv.replace(list(history))
        conv.set_prompt_tokens(prompt_tokens, source)  # type: ignore[arg-type]
        conv.force_full_ide_context = False

    def load_just_over_threshold(self, history: Sequence[Content]) -> None:
        """A history whose own size (not a made-up prompt count) puts it just over the 50% threshold."""
        estimate = estimate_history_tokens(history)
        self.set(token_limit=2 * estimate, compression_threshold=0.5)
        self.load(history, prompt_tokens=estimate + 50)

    def summary_requests(self) -> list[Any]:
        return [r for r in self.fake.requests() if r.summary]


@pytest.fixture
async def rig(fake: Any, tmp_path: Path) -> AsyncIterator[Rig]:
    rec = EditorSpy()
    client = ModelClient(
        ClientConfig(
            # A call the fake holds while a test goes on must still be pending when the test releases it, however
            # slow the machine: so the shipped requestTimeoutMs, not a short one.
            api_key="test-key",
            base_url=fake.url,
            timeout_ms=120_000,
            retry_attempts=0,
            retry_initial_delay_ms=1,
        )
    )

    async def get_client() -> ModelClient:
        return client

    async def hook(trigger: Trigger) -> None:
        rec.hooks.append(trigger)

    settings = Settings(token_limit=100_000, retry_initial_delay_ms=1)  # retries of bad replies wait 1, 2, 4 ms
    session = Session(settings=settings, workspace_folders=[str(tmp_path / "project")])
    services = build_services(
        session,
        FrontEnd(notifier=rec, inform=rec.warning),
        Ports(
            model=get_client,
            pre_compress=hook,
            save_tool_output=ToolOutputSaver(tmp_path),
            home=tmp_path / "home",
            # These tests compare exact histories; the session context has its own (tests/e2e/test_memory*).
            memory=False,
        ),
    )
    await services.start()
    yield Rig(services.chat, rec, fake, tmp_path, services)
    await services.aclose()
    await client.aclose()


def exchange(i: int, size: int = 2_000) -> list[Content]:
    """One user message and one model reply, each about `size` characters."""
    filler = f" detail-{i}" * (size // 10)
    return [
        text_content("user", f"Step {i}: please work on src/mod_{i}.py.{filler}"),
        text_content("model", f"Done with step {i}.{filler}"),
    ]


def conversation(n: int, size: int = 2_000) -> list[Content]:
    return [c for i in range(n) for c in exchange(i, size)]


def tool_exchange(name: str, output: str, call_id: str = "c1") -> list[Content]:
    return [
        text_content("user", f"run {name}"),
        Content(role="model", parts=[Part(function_call=FunctionCall(name=name, args={"q": "x"}, id=call_id))]),
        Content(
            role="user",
            parts=[Part(function_response=FunctionResponse(name=name, id=call_id, response={"output": output}))],
        ),
        text_content("model", f"{name} finished"),
    ]


def snapshot_text(goal: str = "the goal", extra: str = "") -> str:
    sections = {
        "overall_goal": goal,
        "active_constraints": "none",
        "key_knowledge": extra or "none",
        "artifact_trail": "none",
        "file_system_state": "none",
        "recent_actions": "none",
        "task_state": "1. [TODO] continue",
    }
    body = "".join(f"<{k}>{v}</{k}>" for k, v in sections.items())
    return f"<state_snapshot>{body}</state_snapshot>"
