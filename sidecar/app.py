"""The composition root: the one place that builds a Session's services, for every front-end, test and benchmark."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from sidecar.chat.actions import SessionActions
from sidecar.chat.live import LiveConversation
from sidecar.chat.service import ChatService, Notifier
from sidecar.chat.sessions import SessionService
from sidecar.chat.tool_runner import ToolRunner
from sidecar.checkpoints.service import CheckpointService
from sidecar.compaction.service import Compactor, PreCompressHook
from sidecar.compaction.tool_outputs import SessionToolOutputs
from sidecar.core.history import Content
from sidecar.gemini.client import ModelClient
from sidecar.gemini.endpoint import Backend
from sidecar.hooks.approval import Ask, HookApproval
from sidecar.hooks.service import HookService
from sidecar.mcp.approval import McpApproval
from sidecar.mcp.gate import McpTools
from sidecar.mcp.manager import McpManager
from sidecar.memory.service import MemoryService
from sidecar.memory.session_context import SessionContext, SessionStartHook
from sidecar.protocol.memory import MemoryInfo
from sidecar.recording.recorder import Recorder
from sidecar.recording.store import SessionStore
from sidecar.session import Session
from sidecar.tools import ToolRegistry, protected
from sidecar.tools.edits import EditorText

#: Where model requests go: an awaitable that gives the (possibly rebuilt) client for the current settings.
ModelSource = Callable[[], Awaitable[ModelClient]]
#: Builds the tool runner once the registry exists (the front-end's ToolHost is wired in here, not patched later).
RunnerFactory = Callable[[ToolRegistry, Session], ToolRunner]


@dataclass(frozen=True)
class Services:
    """Everything one Session's conversation needs, built once by build_services; aclose() shuts it down in order."""

    session: Session
    recorder: Recorder
    compactor: Compactor
    live: LiveConversation
    chat: ChatService
    sessions: SessionService
    actions: SessionActions
    #: The user's hooks (BeforeAgent, SessionStart, PreCompress), one service for both front-ends (docs/hooks.md).
    hooks: HookService
    #: The settings-driven client (None when the caller supplied its own model source and owns its closing).
    backend: Backend | None
    #: The tool registry (None when the services run without tools, as the service tests and benchmarks do).
    registry: ToolRegistry | None
    #: The MCP servers whose tools the registry offers (None without tools); started by the front-end.
    mcp: McpManager | None
    #: The context files (GEMINI.md, AGENTS.md) and the <session_context> turn built with them.
    memory: MemoryService
    context: SessionContext

    @property
    def store(self) -> SessionStore:
        """The recorded sessions of this workspace."""
        return self.recorder.store

    async def aclose(self) -> None:
        """The shutdown order: background compaction first (no orphan request to Gemini while the client closes),
        then the MCP servers, then the recording (flushed and unlocked), then the model client."""
        await self.live.background.aclose()
        if self.mcp is not None:
            await self.mcp.aclose()
        self.recorder.close()
        if self.backend is not None:
            await self.backend.aclose()


def build_services(
    session: Session,
    *,
    notifier: Notifier,
    inform: Callable[[str], None],
    warn: Callable[[str], None] | None = None,
    tools: RunnerFactory | None = None,
    registry_cls: type[ToolRegistry] = ToolRegistry,
    editor_text: EditorText | None = None,
    model: ModelSource | None = None,
    pre_compress: PreCompressHook | None = None,
    save_tool_output: Callable[[str, str], str | os.PathLike[str]] | None = None,
    home: Path | None = None,
    ask_hooks: Ask | None = None,
    on_mcp_change: Callable[[], None] | None = None,
    on_memory_change: Callable[[MemoryInfo], None] | None = None,
    tell_skipped_memory: bool = True,
    session_start: SessionStartHook | None = None,
    memory: bool = True,
) -> Services:
    """Wire the services of `session`.

    `inform` shows a message in words (e.g. "using the embedded fake"), `warn` a recording problem (default:
    `inform`). `tools` builds the runner over the registry (None: no tools are offered). `model`,
    `pre_compress`, `save_tool_output` and `home` replace the settings-driven client, the user's PreCompress hooks,
    the session's tool-output folder and the data home (the service tests and benchmarks use them). `ask_hooks`
    asks the user to approve a workspace's hooks and MCP servers (None: they never count, as in ACP).
    `on_mcp_change` runs after an MCP server's status or tool list changes (the front-end tells its client);
    `on_memory_change` after the context files loaded changed (sidecar/memoryChanged); `tell_skipped_memory`
    also warns in words about project files an untrusted workspace kept out (False where the editor says it).
    `session_start` gives the extra context of the session context turn (default: the SessionStart hooks').
    `memory=False` leaves out the
    context files and the <session_context> turn (service tests of the turn loop that compare exact histories;
    the memory has tests of its own).
    """
    backend: Backend | None = None
    if model is None:
        backend = Backend(session, inform)
        source: ModelSource = backend.client
    else:
        source = model
    recorder = Recorder(session, warn or inform, home=home)
    outputs = save_tool_output if save_tool_output is not None else SessionToolOutputs(recorder)
    approval = HookApproval(session, ask_hooks, lambda: recorder.store) if ask_hooks is not None else None
    hooks = HookService(session, recorder, inform, approval, warn=warn)
    # the files the configured hooks and MCP servers run are protected paths (an edit asks every time)
    protected.set_command_source(lambda: protected.settings_commands(session.settings, session.project_root))
    # Skipped project files: an editor that gets memoryChanged says so itself (VS Code with a Trust button); a
    # front-end without it (ACP) is told in words here. Never both: the user saw two near-identical notices.
    memory_service = MemoryService(session, on_memory_change, notifier.warning if tell_skipped_memory else None)
    context = SessionContext(
        session, memory_service, session_start if session_start is not None else hooks.session_start_context
    )

    async def compacted_context() -> Content:
        return await context.turn("compact")

    compactor = Compactor(
        session, source, outputs, pre_compress if pre_compress is not None else hooks,
        session_context=compacted_context if memory else None,
    )
    registry: ToolRegistry | None = None
    runner: ToolRunner | None = None
    mcp: McpManager | None = None
    checkpoints = CheckpointService(session, recorder)
    if tools is not None:
        servers = (
            McpApproval(ask_hooks, lambda: recorder.store, lambda: session.project_root, session.folders)
            if ask_hooks
            else None
        )
        mcp = McpManager(on_change=on_mcp_change, inform=warn or inform, approve=servers.approved if servers else None)
        registry = registry_cls(
            session.folders,
            save_output=outputs,
            output_threshold=session.tool_output_threshold,
            editor_text=editor_text,
            saved_outputs=outputs.root if isinstance(outputs, SessionToolOutputs) else None,
            extra=McpTools(mcp),
            watch=checkpoints.checkpointer,  # every edit and shell command, whichever front-end runs it
        )
        runner = tools(registry, session)
        checkpoints.use_tools(registry, runner.host.apply_edit)
        if memory:  # a subfolder's GEMINI.md arrives with the first tool result under it
            runner.context_files = memory_service.just_in_time
    live = LiveConversation(
        session, recorder, compactor, notifier,
        declarations=runner.declarations if runner is not None else None,
        backend_label=backend.describe if backend is not None else None,
        context=context if memory else None,
    )
    return Services(
        session=session,
        recorder=recorder,
        compactor=compactor,
        live=live,
        chat=ChatService(live, source, notifier, compactor, runner, hooks=hooks),
        sessions=SessionService(live),
        actions=SessionActions(live, checkpoints),
        hooks=hooks,
        backend=backend,
        registry=registry,
        mcp=mcp,
        memory=memory_service,
        context=context,
    )
