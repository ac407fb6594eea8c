"""Drives the real pipeline (the server's own services, build_services) through rounds of compaction and probes."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from eval.facts import Fact, Planted, plant
from eval.probes import SURVIVED, Verdict, answer_lines, probe_all, request_text, score_answer
from eval.sessions import FIRST_PROMPT, PROBE_PROMPT, segment
from eval.strategies import Strategy
from sidecar.app import FrontEnd, Ports, build_services
from sidecar.compaction.tool_outputs import ToolOutputSaver
from sidecar.config.settings import Settings
from sidecar.core.history import Content, content_text, text_content
from sidecar.core.prompts import VERIFY_INSTRUCTION
from sidecar.core.recording import MessageKind
from sidecar.core.todos import check_todos
from sidecar.gemini.client import ModelClient, ModelError
from sidecar.recording.stats import read_session
from sidecar.session import Session

log = logging.getLogger(__name__)

#: A model source: the client every request of a run goes through (the fake's, or the user's real one).
Source = Callable[[], Awaitable[ModelClient]]


class EvalClient:
    """The run's model client as the pipeline sees it: every call goes to `inner`, except that a strategy without
    the verify pass has that request refused as a blocked reply (the pipeline then keeps pass 1's snapshot, as it
    does for any unusable verify reply). Chat requests are kept (`sent`) for the real model, where no fake logs them."""

    def __init__(self, inner: ModelClient, *, verify: bool) -> None:
        self.inner = inner
        self.verify = verify
        self.sent: list[tuple[list[bytes], str | None]] = []
        self.summary_calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def generate(self, model: str, contents: Sequence[Content], **kwargs: Any) -> Any:
        last = content_text(contents[-1]) if contents else ""
        if last.startswith(VERIFY_INSTRUCTION) and not self.verify:
            raise ModelError("blocked", "the verify pass is off in this strategy")
        self.summary_calls += 1
        return await self.inner.generate(model, contents, **kwargs)

    async def stream(self, model: str, contents: Sequence[bytes], **kwargs: Any) -> AsyncIterator[Any]:
        self.sent.append((list(contents), kwargs.get("system_instruction")))
        async for chunk in self.inner.stream(model, contents, **kwargs):
            yield chunk


class _Quiet:
    """The editor side of the services: nothing to show, warnings kept for the report."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def message_delta(self, turn_id: str, text: str) -> None:
        pass

    def thought_delta(self, turn_id: str, text: str) -> None:
        pass

    def token_usage(self, usage: Any) -> None:
        pass

    def compressed(self, notice: Any) -> None:
        pass

    def masked(self, notice: Any) -> None:
        pass

    def error(self, message: str) -> None:
        self.warnings.append(message)

    def warning(self, message: str) -> None:
        self.warnings.append(message)

    def retry(self, notice: Any) -> None:
        pass

    async def progress(self, kind: Any) -> Any:
        return _NoProgress()


class _NoProgress:
    def report(self, message: str) -> None:
        pass

    def end(self, message: str | None = None) -> None:
        pass


@dataclass
class RoundResult:
    """After compaction round `round`: its status and sizes, each live fact's verdict, and (real model) answers."""

    round: int
    status: str
    tokens_before: int
    tokens_after: int
    request_chars: int
    verdicts: dict[str, Verdict]
    answers: dict[str, bool] | None = None


@dataclass
class SessionResult:
    """One session under one strategy."""

    seed: int
    strategy: str
    facts: list[Fact]
    rounds: list[RoundResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    summary_calls: int = 0
    #: (API count, the sidecar's estimate) of every chat request, read back from the session's recording.
    estimates: list[tuple[int, int]] = field(default_factory=list)


#: The last request the model got: its body as the API saw it (system instruction + contents).
LastRequest = Callable[[EvalClient], dict[str, Any]]


def client_request(client: EvalClient) -> dict[str, Any]:
    """The last chat request, as the client sent it (for the real model: no fake logs it)."""
    wire, system = client.sent[-1]
    body: dict[str, Any] = {"contents": [msgspec.json.decode(w) for w in wire]}
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    return body


QUESTION_HEADER = (
    "Answer these questions from this conversation and your instructions only. Write exactly one line per "
    "question, as 'N: answer', with the exact value (file path, number, name, command) and nothing else. "
    "If you do not know, write 'N: unknown'."
)


async def ask(client: ModelClient, model: str, body: dict[str, Any], facts: Sequence[Fact]) -> dict[str, bool]:
    """The real model answers one question per fact from the request it was sent; scored by exact match."""
    questions = "\n".join(f"{n}: {f.question}" for n, f in enumerate(facts, 1))
    contents = msgspec.convert(body["contents"], list[Content])
    if contents and contents[-1].role == "user":
        contents.append(text_content("model", "(noted)"))
    contents.append(text_content("user", f"{QUESTION_HEADER}\n\n{questions}"))
    system = (body.get("systemInstruction") or {}).get("parts", [{}])[0].get("text")
    reply = await client.generate(model, contents, system_instruction=system)
    lines = answer_lines(reply.text)
    return {f.id: score_answer(f, lines.get(n)) for n, f in enumerate(facts, 1)}


async def run_session(
    seed: int,
    strategy: Strategy,
    rounds: int,
    source: Source,
    last_request: LastRequest,
    *,
    questions: bool = False,
    settings: Settings | None = None,
    workdir: Path | None = None,
) -> SessionResult:
    """One session: a memory file, pins and a first turn; then per round a new segment of turns (with its planted
    facts), a compaction (forced, with the strategy's focus), a turn whose request is probed for every fact planted
    so far and, with `questions`, the model asked about them."""
    planted = plant(seed, tuple(range(rounds)))
    with tempfile.TemporaryDirectory(prefix="sidecar-eval-", dir=workdir) as tmp:
        return await _run(seed, strategy, rounds, source, last_request, planted, Path(tmp), questions, settings)


async def _run(
    seed: int,
    strategy: Strategy,
    rounds: int,
    source: Source,
    last_request: LastRequest,
    planted: Planted,
    tmp: Path,
    questions: bool,
    settings: Settings | None,
) -> SessionResult:
    project = tmp / "project"
    project.mkdir()
    if planted.memory_lines:
        (project / "GEMINI.md").write_text("# Project rules\n\n" + "\n".join(f"- {m}" for m in planted.memory_lines))
    base = settings or Settings()
    base = msgspec.structs.replace(base, background_compaction=False, retry_initial_delay_ms=1, **strategy.settings)
    session = Session(settings=base, workspace_folders=[str(project)])
    editor = _Quiet()
    inner = await source()
    client = EvalClient(inner, verify=strategy.verify)

    async def model() -> ModelClient:
        return client  # type: ignore[return-value]  # the wrapper answers every call the pipeline makes

    async def no_hook(trigger: Any) -> None:
        pass

    services = build_services(
        session,
        FrontEnd(notifier=editor, inform=editor.warning),
        Ports(model=model, pre_compress=no_hook, save_tool_output=ToolOutputSaver(tmp), home=tmp / "home"),
    )
    await services.start()
    result = SessionResult(seed, strategy.name, planted.facts)
    try:
        for pin in planted.pins:
            services.actions.pin(pin)
        if planted.todos:  # as write_todos sets it: the list checked, then the live conversation's (recorded)
            items, problem = check_todos(planted.todos)
            assert problem is None, problem
            services.live.set_todos(items)
        await services.chat.send_message(FIRST_PROMPT)
        live = services.live
        for number in range(rounds):
            for content in segment(seed, number, planted):
                kind = _kind(content)
                live.conversation.append(content, live.recorder.message(content, kind, None))
            compressed = await services.chat.compress(strategy.focus)
            await services.chat.send_message(PROBE_PROMPT)
            body = last_request(client)
            facts = [f for f in planted.facts if f.segment <= number]
            text = request_text(body)
            verdicts = probe_all(facts, text)
            answers = await ask(inner, base.model, body, facts) if questions else None
            result.rounds.append(
                RoundResult(
                    number + 1,
                    compressed.status,
                    compressed.original_token_count,
                    compressed.new_token_count,
                    len(text),
                    verdicts,
                    answers,
                )
            )
    finally:
        await services.aclose()
        path = services.recorder.path
        if path is not None and path.exists():
            result.estimates = [(p.api, p.estimated) for p in read_session(path).pairs]
        result.warnings = editor.warnings
        result.summary_calls = client.summary_calls
    return result


def _kind(content: Content) -> MessageKind:
    part = content.parts[-1] if content.parts else None
    if part is not None and part.function_call is not None:
        return "toolCall"
    if part is not None and part.function_response is not None:
        return "toolResult"
    return "user" if content.role == "user" else "model"


def survived(verdicts: dict[str, Verdict]) -> dict[str, bool]:
    """Fact id -> sent to the model (verbatim or restated)."""
    return {k: v in SURVIVED for k, v in verdicts.items()}


__all__ = [
    "EvalClient",
    "RoundResult",
    "SessionResult",
    "ask",
    "client_request",
    "run_session",
    "survived",
]
