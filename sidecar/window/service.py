"""The context service: the next request's tokens by category, the backend's models, the model switch, postponing."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from sidecar.chat.service import ChatService
from sidecar.compaction.service import compression_model
from sidecar.core.context_breakdown import Piece, RequestView, masked_output_pieces, measure_request, rows_of
from sidecar.core.masking import MASK_TAG
from sidecar.core.memory_text import LoadedFile, wrap_file
from sidecar.core.models import KNOWN_CHAT_MODELS, chat_model_id, offers_chat, token_limit
from sidecar.core.pins import pinned_block
from sidecar.core.recording import MODEL_SWITCH
from sidecar.core.request_size import overhead_upper_tokens
from sidecar.core.todos import todo_block
from sidecar.gemini.client import ModelClient, ModelError
from sidecar.mcp.manager import McpManager
from sidecar.memory.service import MemoryService
from sidecar.protocol import errors
from sidecar.protocol.context import (
    ContextBreakdown,
    ContextRow,
    ListModelsResult,
    ModelInfo,
    PostponeCompactionResult,
    SetModelResult,
)
from sidecar.protocol.types import UsageSource

log = logging.getLogger(__name__)


#: A piece provider: the texts known to sit inside the request (memory files, pinned facts…), for rows of their own.
PieceProvider = Callable[["ContextService"], Sequence[Piece]]

_WITHIN = {"global": "systemPrompt", "project": "sessionContext", "subdirectory": "toolOutputs"}


def memory_file_pieces(service: ContextService) -> list[Piece]:
    """Each context file, where the model gets it: global in the system instruction, project in the session context,
    a subfolder's in the tool result that delivered it."""
    return [_memory_piece(f) for f in service.memory.files() if f.text.strip()]


def _memory_piece(file: LoadedFile) -> Piece:
    name = file.path.rsplit("/", 1)[-1]
    within = _WITHIN.get(file.scope, "systemPrompt")
    return Piece("memoryFile", f"{name} ({file.scope})", wrap_file(file.path, file.text), within, file.path)  # type: ignore[arg-type]


def pinned_pieces(service: ContextService) -> list[Piece]:
    """The pinned facts block of the system instruction."""
    block = pinned_block(service.chat.live.conversation.pins)
    return [] if block is None else [Piece("pinnedFacts", "Pinned facts", block, "systemPrompt")]


def masked_pieces(service: ContextService) -> list[Piece]:
    """Tool outputs the history keeps masked (a preview and where the full output is, in place of the output)."""
    return masked_output_pieces(service.chat.live.conversation.history, MASK_TAG)


def todo_pieces(service: ContextService) -> list[Piece]:
    """The model's todo list block of the system instruction (write_todos)."""
    block = todo_block(service.chat.live.conversation.todos)
    return [] if block is None else [Piece("todoList", "Todo list", block, "systemPrompt")]


#: The carved categories, one provider each.
PIECE_PROVIDERS: list[PieceProvider] = [memory_file_pieces, pinned_pieces, todo_pieces, masked_pieces]


class ContextService:
    """Answers what fills the window, lists and switches models, postpones the next automatic compaction."""

    def __init__(
        self,
        chat: ChatService,
        memory: MemoryService,
        mcp: McpManager | None,
        model: Callable[[], Awaitable[ModelClient]],
    ) -> None:
        self.chat = chat
        self.live = chat.live
        self.memory = memory
        self._mcp = mcp
        self._client = model
        self._listed: list[tuple[str, str, int | None, list[str]]] | None = None

    # -- the breakdown ------------------------------------------------------------------------------------
    def view(self) -> RequestView:
        """The next request as it would be sent now (without the next message)."""
        tools = self.chat.tools.declarations() if self.chat.tools is not None else None
        servers = {t: s.name for s in self._mcp.servers() for t in s.tools} if self._mcp is not None else {}
        conv = self.live.conversation
        return RequestView(conv.wire(), conv.ids, self.live.system_instruction(bool(tools)), tools, servers)

    def breakdown(self) -> ContextBreakdown:
        """The rows of sidecar/getContextBreakdown (and /context, :SidecarContext)."""
        view = self.view()
        pieces = [piece for provider in PIECE_PROVIDERS for piece in provider(self)]
        rows = rows_of(measure_request(view, pieces))
        measured = sum(r.tokens for r in rows)
        settings = self.live.session.settings
        conv = self.live.conversation
        usage = self.live.usage()
        overhead = overhead_upper_tokens(view.system_instruction, view.tools)
        api = conv.usage_source == "api"
        prompt = self.chat.budget.history_tokens(conv, overhead) if api else usage.prompt_token_count
        limit = settings.effective_token_limit()
        threshold = int(settings.compression_threshold * limit)
        out = [
            ContextRow(category=r.category, label=r.label, tokens=r.tokens, source="estimate", target=r.target)
            for r in rows
        ]
        free_source: UsageSource = "api" if api else "estimate"
        out.append(
            ContextRow(
                category="freeToThreshold",
                label="Free until compaction",
                tokens=max(0, threshold - prompt),
                source=free_source,
            )
        )
        out.append(
            ContextRow(
                category="freeToWindow", label="Free in the window", tokens=max(0, limit - prompt), source=free_source
            )
        )
        return ContextBreakdown(
            session_id=conv.session_id,
            model=settings.model,
            compression_model=compression_model(settings),
            token_limit=limit,
            compression_threshold=settings.compression_threshold,
            threshold_tokens=threshold,
            prompt_tokens=prompt,
            source=conv.usage_source,
            measured_tokens=measured,
            api_prompt_tokens=conv.last_prompt_tokens if api else None,
            rows=out,
            compacts_at_next_message=usage.compacts_at_next_message,
            compaction_postponed=conv.compaction_postponed,
        )

    # -- postponing ---------------------------------------------------------------------------------------
    def postpone(self) -> PostponeCompactionResult:
        """The next message skips its automatic compaction (once; it still compacts when it would not fit)."""
        conv = self.live.conversation
        if not self.live.usage().compacts_at_next_message:
            return PostponeCompactionResult(postponed=False, message="No automatic compaction is due.")
        conv.compaction_postponed = True
        message = "Automatic compaction postponed: the next message is sent without compacting first."
        self.live.recorder.note("info", message)
        self.live.push_usage()
        return PostponeCompactionResult(postponed=True, message=message)

    # -- models -------------------------------------------------------------------------------------------
    async def list_models(self) -> ListModelsResult:
        """The backend's models that support generateContent; the known table when the list cannot be had."""
        current = self.live.session.settings.model
        try:
            if self._listed is None:
                client = await self._client()
                self._listed = await client.list_models()  # kept: a backend's list does not change in a session
            listed = self._listed
        except ModelError as exc:
            return _table(current, f"the backend's model list could not be had: {exc.message}")
        except Exception as exc:  # a backend that cannot list (an odd proxy): the table still answers
            log.warning("listing models failed: %r", exc)
            return _table(current, f"the backend's model list could not be had: {exc!r}")
        models: list[ModelInfo] = []
        for name, display, limit, methods in listed:
            model_id = chat_model_id(name)
            if not offers_chat(model_id, methods):
                continue
            models.append(
                ModelInfo(
                    id=model_id,
                    name=display or model_id,
                    token_limit=limit or token_limit(model_id),
                    current=model_id == current,
                )
            )
        if not models:
            return _table(current, "the backend listed no model that supports generateContent")
        return ListModelsResult(models=models, current=current, source="api")

    def known_models(self) -> ListModelsResult:
        """The known table with the current model, without asking the backend (an ACP session opens without a
        round trip)."""
        return _table(self.live.session.settings.model, None)

    async def set_model(self, model: str) -> SetModelResult:
        """Use `model` from the next request on: the window, the threshold and the token limit follow now; a
        conversation over the new threshold compacts before the next request (and is told so). Recorded."""
        model = model.strip()
        if not model or any(c.isspace() for c in model) or ".." in model or any(c in model for c in "?&#"):
            raise errors.SidecarError(errors.INVALID_PARAMS, f"{model!r} is not a model name (e.g. gemini-2.5-pro).")
        session = self.live.session
        async with self.live.lock:  # not in the middle of a turn: the next request is the first with the new model
            before = session.settings.effective_token_limit()
            session.sources.overrides["model"] = model
            for problem in session.reload_settings():
                self.live.warn(problem)
            self.live.settings_changed()
            settings = session.settings
            limit = settings.effective_token_limit()
            due = self.live.usage().compacts_at_next_message
            message = f"Model switched to {settings.model} ({limit:,}-token window)."
            if settings.token_limit is not None:
                message += " The tokenLimit setting keeps the window at that size."
            if due:
                smaller = " for the smaller window" if limit < before else ""
                message += (
                    f" The conversation is over the compaction threshold{smaller}: it compacts before the next request."
                )
            self.live.recorder.note_meta("info", message, {MODEL_SWITCH: settings.model})
        self.live.push_usage()
        return SetModelResult(model=settings.model, token_limit=limit, compacts_at_next_message=due, message=message)


def _table(current: str, problem: str | None) -> ListModelsResult:
    known = [m for m, _ in KNOWN_CHAT_MODELS]
    rows = [(m, n) for m, n in KNOWN_CHAT_MODELS] + ([] if current in known else [(current, current)])
    models = [ModelInfo(id=m, name=n, token_limit=token_limit(m), current=m == current) for m, n in rows]
    return ListModelsResult(models=models, current=current, source="table", problem=problem)
