"""Context window handlers: sidecar/getContextBreakdown, postponeCompaction, listModels and setModel."""

from __future__ import annotations

from collections.abc import Callable

from pygls.lsp.server import LanguageServer

from sidecar.protocol import methods
from sidecar.protocol.context import (
    ContextBreakdown,
    ListModelsResult,
    PostponeCompactionResult,
    SetModelParams,
    SetModelResult,
)
from sidecar.protocol.types import Empty
from sidecar.rpc.dispatch import request
from sidecar.window.service import ContextService


def register(server: LanguageServer, window: ContextService, settings_changed: Callable[[], None]) -> None:
    """Register the context window methods on `server`, answered by `window`; `settings_changed` runs after a
    model switch (the server re-applies what depends on the settings)."""

    @request(server, methods.GET_CONTEXT_BREAKDOWN)
    async def get_context_breakdown(_params: Empty) -> ContextBreakdown:
        return window.breakdown()

    @request(server, methods.POSTPONE_COMPACTION)
    async def postpone_compaction(_params: Empty) -> PostponeCompactionResult:
        return window.postpone()

    @request(server, methods.LIST_MODELS)
    async def list_models(_params: Empty) -> ListModelsResult:
        return await window.list_models()

    @request(server, methods.SET_MODEL)
    async def set_model(params: SetModelParams) -> SetModelResult:
        result = await window.set_model(params.model)
        settings_changed()
        return result
