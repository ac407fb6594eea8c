"""The sidecar's services for one workspace and session, wired without pygls: chat, compaction, recording, tools."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sidecar import hooks
from sidecar.backend import Backend
from sidecar.chat import ChatService, Notifier
from sidecar.compaction_service import Compactor, Trigger
from sidecar.core.compaction import tool_output_threshold
from sidecar.paths import data_home, project_id
from sidecar.recording import SessionStore
from sidecar.session_recorder import Recorder
from sidecar.sessions import SessionService
from sidecar.settings import Settings
from sidecar.tool_outputs import ToolOutputSaver
from sidecar.tool_runner import ToolHost, ToolRunner
from sidecar.tools import ToolRegistry
from sidecar.tools.edits import EditorText


@dataclass
class WorkspaceServices:
    """Everything one conversation in `root` needs, as the editor protocol's server wires it (sidecar/server.py)."""

    root: str
    settings: Callable[[], Settings]
    inform: Callable[[str], None]
    backend: Backend = field(init=False)
    store: SessionStore = field(init=False)
    chat: ChatService = field(init=False)
    sessions: SessionService = field(init=False)
    registry: ToolRegistry = field(init=False)
    _outputs: ToolOutputSaver | None = field(default=None, init=False)

    def build(
        self,
        notifier: Notifier,
        host: ToolHost,
        *,
        approval_mode: Callable[[], str],
        registry_cls: type[ToolRegistry] = ToolRegistry,
        runner_cls: type[ToolRunner] = ToolRunner,
        editor_text: EditorText | None = None,
    ) -> WorkspaceServices:
        self.backend = Backend(self.settings, self.inform)
        self.store = SessionStore(self.root, home=data_home())
        compactor = Compactor(self.settings, self.backend.client, self.save_tool_output, self._pre_compress,
                              lambda: [self.root])
        recorder = Recorder(lambda: self.store, lambda: self.settings().model, self.inform)
        self.registry = registry_cls(
            [self.root],
            save_output=self.save_tool_output,
            output_threshold=self._output_threshold,
            editor_text=editor_text,
        )
        tools = runner_cls(
            self.registry,
            host,
            approval_mode=approval_mode,
            trusted=lambda: True,  # the user started the agent in this folder; shell calls still ask (default mode)
            track=lambda path: self.chat.track_file(path),
        )
        self.chat = ChatService(self.settings, self.backend.client, notifier, compactor, recorder, tools)
        self.sessions = SessionService(self.chat)
        return self

    def session_dir(self) -> Path:
        path = data_home() / "sessions" / project_id(self.root) / self.chat.conversation.session_id
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return path

    def save_tool_output(self, content: str, tool_name: str) -> Path:
        directory = self.session_dir()
        if self._outputs is None or self._outputs.directory.parent != directory:
            self._outputs = ToolOutputSaver(directory)
        return self._outputs(content, tool_name)

    def _output_threshold(self) -> int:
        return tool_output_threshold(self.settings().effective_token_limit(), self.chat.conversation.last_prompt_tokens)

    async def _pre_compress(self, trigger: Trigger) -> None:
        specs = self.settings().hooks.pre_compress
        if specs:
            path = self.chat.recorder.path
            await hooks.run_pre_compress(
                specs,
                session_id=self.chat.conversation.session_id,
                transcript_path=str(path) if path is not None and path.exists() else "",
                cwd=self.root,
                trigger=trigger,
            )

    async def aclose(self) -> None:
        self.chat.recorder.close()
        await self.backend.aclose()
