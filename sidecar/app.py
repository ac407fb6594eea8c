"""The composition root: the one place that builds a Session's services, for every front-end, test and benchmark."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from sidecar import checkpoints, hooks, mcp, memory, window
from sidecar.chat.actions import SessionActions
from sidecar.chat.compaction_control import CompactionControl
from sidecar.chat.live import LiveConversation
from sidecar.chat.model_state import ModelState
from sidecar.chat.service import ChatService, Notifier
from sidecar.chat.sessions import SessionService
from sidecar.chat.tool_runner import ToolHost, ToolRunner
from sidecar.compaction.service import Compactor, PreCompressHook
from sidecar.compaction.tool_outputs import SessionToolOutputs
from sidecar.core.history import Content
from sidecar.core.todos import TodoItem
from sidecar.gemini.backend import Backend
from sidecar.gemini.client import ModelClient
from sidecar.hooks.approval import Ask
from sidecar.hooks.service import HookService
from sidecar.mcp.gate import McpTools
from sidecar.mcp.manager import McpManager
from sidecar.memory.service import MemoryService
from sidecar.memory.session_context import SessionContext, SessionStartHook
from sidecar.protocol.memory import MemoryInfo
from sidecar.recording.recorder import Recorder
from sidecar.recording.store import SessionStore
from sidecar.session import Session
from sidecar.tools import ToolRegistry, protected
from sidecar.tools.edits import EditorBuffers, EditorText
from sidecar.tools.paths import Workspace
from sidecar.window.service import ContextService

#: Where model requests go: an awaitable that gives the (possibly rebuilt) client for the current settings.
ModelSource = Callable[[], Awaitable[ModelClient]]


@dataclass(frozen=True)
class FrontEnd:
    """What a front-end (the editor server, ACP) gives the services: where messages go and how the user is asked."""

    #: Streamed text, usage, compactions, errors and progress.
    notifier: Notifier
    #: A message in words (e.g. "using the embedded fake").
    inform: Callable[[str], None]
    #: A recording problem or a server's failure in words (default: `inform`).
    warn: Callable[[str], None] | None = None
    #: The editor side of tool calls (None: no tools are offered, as the service tests and benchmarks run).
    tools: ToolHost | None = None
    #: An open buffer's text, unsaved changes included (None: the files on disk).
    editor_text: EditorText | None = None
    #: Asks the user to approve a workspace file's hooks (None: they never count, as in ACP).
    ask_hooks: Ask | None = None
    #: After an MCP server's status or tool list changed (the front-end tells its client).
    on_mcp_change: Callable[[], None] | None = None
    #: After the context files loaded changed (sidecar/memoryChanged).
    on_memory_change: Callable[[MemoryInfo], None] | None = None
    #: After the live session's todo list changed (sidecar/todosChanged; ACP `plan` updates): its id and items.
    on_todos_change: Callable[[str, list[TodoItem]], None] | None = None
    #: Also warn in words about project files an untrusted workspace kept out (False where the editor says it).
    tell_skipped_memory: bool = True
    #: Load the context files when the services start (False: on first use, as ACP does).
    load_memory_on_start: bool = True

    def warning(self, text: str) -> None:
        """A warning in words: `warn`, else `inform`."""
        (self.warn or self.inform)(text)


@dataclass(frozen=True)
class Ports:
    """What the service tests and benchmarks replace; every default is the shipped behaviour."""

    #: The model client (default: the settings-driven Backend, which the services then own and close).
    model: ModelSource | None = None
    #: The user's PreCompress hooks (default: the hook service's).
    pre_compress: PreCompressHook | None = None
    #: Where a long tool output is saved (default: the session's tool-output folder).
    save_tool_output: Callable[[str, str], str | os.PathLike[str]] | None = None
    #: The data home (default: ~/.gemini).
    home: Path | None = None
    #: The extra context of the session context turn (default: the SessionStart hooks').
    session_start: SessionStartHook | None = None
    #: False leaves out the context files and the <session_context> turn (service tests of the turn loop that
    #: compare exact histories; the memory has tests of its own).
    memory: bool = True


@dataclass(frozen=True)
class Services:
    """Everything one Session's conversation needs, built once by build_services; start() begins the work after
    `initialize`, aclose() shuts it down in order."""

    session: Session
    front_end: FrontEnd
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
    #: The MCP servers whose tools the registry offers (None without tools); started by start().
    mcp: McpManager | None
    #: The context files (GEMINI.md, AGENTS.md) and the <session_context> turn built with them.
    memory: MemoryService
    context: SessionContext
    #: Summarise up to a message, preview and edit a summary, rate a compaction (docs/compaction.md).
    compaction: CompactionControl
    #: What fills the window, the model list and switch, postponing a compaction (sidecar/window/).
    window: ContextService

    @property
    def store(self) -> SessionStore:
        """The recorded sessions of this workspace."""
        return self.recorder.store

    async def start(self) -> None:
        """Start what construction only prepared, once, after `initialize` (the workspace folders are known): the
        recording of the live conversation, the MCP servers of the settings (in the background: no turn waits for
        a server it does not use), then the context files (the editor hears which the model gets)."""
        self.live.start()
        if self.mcp is not None:
            self.mcp.apply_settings(self.session.settings.mcp_servers, workspace=self.session.sources.workspace_servers)
        if self.front_end.load_memory_on_start and self.live.context is not None:
            self.live.push_usage()
            await self.memory.load()
            self.live.push_usage()

    async def aclose(self) -> None:
        """The shutdown order: background compaction first (no orphan request to Gemini while the client closes),
        then the MCP servers, then the recording (flushed and unlocked), then the model client."""
        await self.live.background.aclose()
        if self.mcp is not None:
            await self.mcp.aclose()
        self.recorder.close()
        if self.backend is not None:
            await self.backend.aclose()


def build_services(session: Session, front_end: FrontEnd, ports: Ports | None = None) -> Services:
    """Wire the services of `session` for `front_end`; `ports` replaces parts for tests and benchmarks. Each
    feature package wires itself (its `wire`), in the order below: a later one may use an earlier one."""
    ports = ports or Ports()
    backend = Backend(session, front_end.inform) if ports.model is None else None
    source: ModelSource = backend.client if backend is not None else ports.model  # type: ignore[assignment]
    recorder = Recorder(session, front_end.warning, home=ports.home)
    outputs = ports.save_tool_output if ports.save_tool_output is not None else SessionToolOutputs(recorder)
    workspace = Workspace(session.folders, outputs.root if isinstance(outputs, SessionToolOutputs) else None)
    buffers = EditorBuffers(front_end.editor_text)
    host = front_end.tools

    # The features, in order.
    hook_service = hooks.wire(
        session, recorder, front_end.inform, front_end.ask_hooks, lambda: recorder.store, front_end.warn
    )
    # the files the configured hooks and MCP servers run are protected paths (an edit asks every time)
    protected.set_command_source(lambda: protected.settings_commands(session.settings, session.project_root))
    memory_service, context = memory.wire(
        session,
        front_end.on_memory_change,
        front_end.notifier.warning if front_end.tell_skipped_memory else None,
        ports.session_start if ports.session_start is not None else hook_service.session_start_context,
    )
    # Checkpoints belong to the live conversation's running turn. The live conversation is built last (it offers the
    # tools' declarations, and the tools take checkpoints), so they ask it through this function, which only runs
    # when a tool does: after build_services returned.
    checkpoint_service = checkpoints.wire(session, recorder, lambda: live.turn_message_id, workspace, buffers, host)
    mcp_manager = (
        mcp.wire(
            front_end.on_mcp_change,
            front_end.warning,
            front_end.ask_hooks,
            lambda: recorder.store,
            lambda: session.project_root,
            session.folders,
        )
        if host is not None
        else None
    )

    async def compacted_context() -> Content:
        return await context.turn("compact")

    async def read_back(raw: str) -> tuple[str, str | None, str]:
        assert runner is not None
        return await runner.read_back(raw)

    compactor = Compactor(
        session,
        source,
        outputs,
        ports.pre_compress if ports.pre_compress is not None else hook_service,
        session_context=compacted_context if ports.memory else None,
        # the summary is asked in the chat's own request (its cached prefix); the files worked on come back after it
        chat_frame=lambda: live.chat_frame(),
        read_back=read_back if host is not None else None,
    )
    registry: ToolRegistry | None = None
    runner: ToolRunner | None = None
    if host is not None:
        registry = ToolRegistry(
            workspace,
            buffers,
            save_output=outputs,
            output_threshold=session.tool_output_threshold,
            extra=McpTools(mcp_manager) if mcp_manager is not None else None,
            watch=checkpoint_service.checkpointer,  # every edit and shell command, whichever front-end runs it
            results_in_view=lambda tool: live.results_in_view(tool),  # what the model still sees (read_file's note)
            agent=ModelState(memory_service, lambda: live),  # save_memory, write_todos (they run after this returns)
        )
        # A subfolder's GEMINI.md arrives with the first tool result under it.
        runner = ToolRunner(registry, host, session, memory_service.just_in_time if ports.memory else None)
    live = LiveConversation(
        session,
        recorder,
        compactor,
        front_end.notifier,
        declarations=runner.declarations if runner is not None else None,
        backend_label=backend.describe if backend is not None else None,
        context=context if ports.memory else None,
        on_todos=front_end.on_todos_change,
    )
    chat = ChatService(
        live,
        source,
        front_end.notifier,
        compactor,
        runner,
        hooks=hook_service,
        tools_starting=mcp_manager.wait_for_starting if mcp_manager is not None else None,
    )
    return Services(
        session=session,
        front_end=front_end,
        recorder=recorder,
        compactor=compactor,
        live=live,
        chat=chat,
        sessions=SessionService(live),
        actions=SessionActions(live, checkpoint_service),
        hooks=hook_service,
        backend=backend,
        registry=registry,
        mcp=mcp_manager,
        memory=memory_service,
        context=context,
        compaction=CompactionControl(chat),
        window=window.wire(chat, memory_service, mcp_manager, source),
    )
