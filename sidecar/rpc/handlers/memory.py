"""Memory handlers: sidecar/getMemory, sidecar/refreshMemory and sidecar/addMemory."""

from __future__ import annotations

from pygls.lsp.server import LanguageServer

from sidecar.memory.service import MemoryService
from sidecar.protocol import methods
from sidecar.protocol.memory import AddMemoryParams, MemoryInfo
from sidecar.protocol.types import Empty
from sidecar.rpc.dispatch import request


def register(server: LanguageServer, memory: MemoryService) -> None:
    """Register the memory methods on `server`, answered by `memory`."""

    @request(server, methods.GET_MEMORY)
    async def get_memory(_params: Empty) -> MemoryInfo:
        await memory.ensure_loaded()
        return memory.info()

    @request(server, methods.REFRESH_MEMORY)
    async def refresh_memory(_params: Empty) -> MemoryInfo:
        return await memory.refresh()

    @request(server, methods.ADD_MEMORY)
    async def add_memory(params: AddMemoryParams) -> MemoryInfo:
        return await memory.add(params.text, params.scope)
