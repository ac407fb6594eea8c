"""The sidecar's services for one ACP session, wired as sidecar/rpc/server.py wires them, without pygls."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sidecar.chat.service import ChatService, Notifier
from sidecar.chat.sessions import SessionService
from sidecar.chat.tool_runner import ToolHost, ToolRunner
from sidecar.compaction.hooks import PreCompressHooks
from sidecar.compaction.service import Compactor
from sidecar.compaction.tool_outputs import SessionToolOutputs
from sidecar.gemini.endpoint import Backend
from sidecar.mcp.gate import McpTools
from sidecar.mcp.manager import McpManager
from sidecar.recording.recorder import Recorder
from sidecar.recording.store import SessionStore
from sidecar.session import Session
from sidecar.tools import ToolRegistry
from sidecar.tools.edits import EditorText


@dataclass
class WorkspaceServices:
    """Everything one conversation in `root` needs: one Session, and the services that read it."""

    root: str
    inform: Callable[[str], None]
    session: Session = field(init=False)
    backend: Backend = field(init=False)
    chat: ChatService = field(init=False)
    sessions: SessionService = field(init=False)
    registry: ToolRegistry = field(init=False)
    mcp: McpManager = field(init=False)

    def build(
        self,
        notifier: Notifier,
        host: ToolHost,
        *,
        registry_cls: type[ToolRegistry] = ToolRegistry,
        runner_cls: type[ToolRunner] = ToolRunner,
        editor_text: EditorText | None = None,
    ) -> WorkspaceServices:
        self.session = session = Session(workspace_folders=[self.root])
        self.backend = Backend(session, self.inform)
        recorder = Recorder(session, self.inform)
        tool_outputs = SessionToolOutputs(recorder)
        compactor = Compactor(session, self.backend.client, tool_outputs, PreCompressHooks(session, recorder))
        self.registry = registry_cls(
            session.folders,
            save_output=tool_outputs,
            output_threshold=session.tool_output_threshold,
            saved_outputs=tool_outputs.root,
            editor_text=editor_text,
        )
        self.mcp = McpManager(inform=self.inform)  # started by the ACP session (sidecar/acp/session.py)
        self.registry.extra = McpTools(self.mcp)
        tools = runner_cls(self.registry, host, session)
        self.chat = ChatService(session, self.backend.client, notifier, compactor, recorder, tools)
        self.sessions = SessionService(self.chat)
        return self

    @property
    def store(self) -> SessionStore:
        return self.chat.recorder.store

    async def aclose(self) -> None:
        await self.chat.background.aclose()  # before the client closes: no orphan request to Gemini
        await self.mcp.aclose()
        self.chat.recorder.close()
        await self.backend.aclose()
