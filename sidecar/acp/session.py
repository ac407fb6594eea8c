"""One ACP session: the chat service for a workspace, prompts and slash commands, load/resume, cancel, modes."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import msgspec
from acp import RequestError
from acp.agent.connection import AgentSideConnection
from acp.helpers import update_current_mode
from acp.schema import SessionMode, SessionModeState

from sidecar.acp import commands, updates
from sidecar.acp.bridge import AcpNotifier
from sidecar.acp.outbox import Outbox
from sidecar.acp.replay import conversation_updates, replay_updates
from sidecar.acp.rpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, ClientOffers, NdjsonStdio
from sidecar.acp.tools import AcpToolHost, ClientFiles
from sidecar.app import FrontEnd, Services, build_services
from sidecar.chat.live import LiveConversation
from sidecar.chat.service import ChatService
from sidecar.config.layers import acp_layers
from sidecar.config.settings import Settings
from sidecar.core.ide_context import normalize
from sidecar.core.recording import is_summary_id
from sidecar.core.words import counted
from sidecar.gemini.backend import Backend, acp_key_hint
from sidecar.mcp.acp_servers import from_acp
from sidecar.mcp.config import ServerConfig
from sidecar.mcp.connection import CallFailed
from sidecar.mcp.manager import McpManager
from sidecar.mcp.prompts import PromptCommand, prompt_commands
from sidecar.mcp.prompts import expand as expand_prompt
from sidecar.protocol import edge, errors
from sidecar.protocol.ide import OpenFile
from sidecar.protocol.memory import MemoryInfo
from sidecar.protocol.sessions import TodoItem, TranscriptMessage
from sidecar.recording.reader import RecordingError
from sidecar.session import Session
from sidecar.tools import Workspace

log = logging.getLogger(__name__)

MODES = [
    ("default", "Ask first", "Ask before every edit and shell command."),
    ("autoEdit", "Auto-edit", "Edit files without asking; ask before shell commands."),
    ("yolo", "Never ask", "Run every tool call without asking."),
]


class AcpSession:
    """An ACP session id bound to the sidecar's services for its cwd (one conversation, recorded)."""

    def __init__(
        self,
        conn: AgentSideConnection,
        transport: NdjsonStdio,
        offers: ClientOffers,
        cwd: str,
        user_settings: Path,
        session_id: str | None = None,
    ) -> None:
        if not os.path.isabs(cwd):
            raise RequestError(INVALID_PARAMS, f"Invalid params: cwd must be an absolute path, got {cwd!r}.")
        if not os.path.isdir(cwd):
            raise RequestError(INVALID_PARAMS, f"Invalid params: cwd {cwd!r} is not an existing directory.")
        self.cwd = os.path.realpath(cwd)
        self.mode: str | None = None
        self.outbox = Outbox(transport, session_id or "")
        self.notifier = AcpNotifier(
            self.outbox, lambda: offers.compaction, lambda: self.cancel_requested, self._latest_snapshot
        )
        self.files = ClientFiles(conn, lambda: self.outbox.session_id, offers.read_text_file, offers.write_text_file)
        front_end = FrontEnd(
            notifier=self.notifier,
            inform=self.notifier.say,
            tools=AcpToolHost(self.outbox, conn, self.files, Workspace([self.cwd])),
            editor_text=self.files.editor_text,
            on_mcp_change=self._mcp_changed,
            on_memory_change=self._memory_changed,
            on_todos_change=self._todos_changed,
            load_memory_on_start=False,  # on first use: a session/new answers at once
        )
        session = Session(workspace_folders=[self.cwd], sources=acp_layers(user_settings))
        self.services: Services = build_services(session, front_end)
        assert self.services.backend is not None and self.services.mcp is not None
        self.backend: Backend = self.services.backend
        self.backend.key_hint = acp_key_hint(user_settings)  # the embedded fake's notice names ACP's way to set a key
        self.mcp: McpManager = self.services.mcp
        if session_id is None:
            self.outbox.session_id = self.live.conversation.session_id
        self.turn: asyncio.Task[str] | None = None
        self.cancel_requested = False
        self.attached: dict[str, OpenFile] = {}
        #: The client's mcpServers of session/new, load or resume (sidecar/mcp/acp_servers.py).
        self.client_mcp: dict[str, ServerConfig] = {}
        #: MCP prompts offered as slash commands (sidecar/mcp/prompts.py).
        self.prompt_commands: dict[str, PromptCommand] = {}
        #: start() ran: the recording and the MCP servers are on (a settings reload re-applies the servers).
        self.started = False
        self.reload_settings()

    async def start(self) -> None:
        """Start the services (the recording, the settings' MCP servers); the context files load on first use."""
        self.started = True
        await self.services.start()

    @property
    def chat(self) -> ChatService:
        """The turn loop."""
        return self.services.chat

    @property
    def live(self) -> LiveConversation:
        """The live conversation: its state, usage and lock."""
        return self.services.live

    @property
    def session_id(self) -> str:
        """The ACP session id: the recorded session's (it changes with /new and fork)."""
        return self.outbox.session_id

    # -- settings and modes ---------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """The session's current settings (read-only; Session.reload_settings() writes them)."""
        return self.services.session.settings

    def reload_settings(self) -> None:
        """Re-read the settings files (cheap) through the one pipeline (sidecar/config/layers.py); each problem is
        told once, until it goes away. A mode chosen with session/set_mode is an override: it stays the approval
        mode."""
        for problem in self.services.session.reload_settings():
            log.warning("%s", problem)
            self.notifier.say(f"⚠ {problem}")
        if self.started:
            self.mcp.apply_settings(self.settings.mcp_servers, self.client_mcp, retry=False)
        self.live.settings_changed()  # e.g. another model: a prepared summary is stale

    def use_mcp_servers(self, servers: list[Any] | None) -> None:
        """The client's servers for this session, alongside the settings' (they start in the background)."""
        configs, problems = from_acp(servers)
        for problem in problems:
            self.notifier.say(f"⚠ {problem}")
        if configs != self.client_mcp:
            self.client_mcp = configs
            self.mcp.apply_settings(self.settings.mcp_servers, configs)

    def _mcp_changed(self) -> None:
        """Servers started, stopped or changed: offer their prompts as slash commands."""
        taken = set(commands.BY_NAME)
        found = prompt_commands(self.mcp, taken)
        if found != self.prompt_commands:
            self.prompt_commands = found
            self.outbox.put(self._available_commands())

    def _memory_changed(self, info: MemoryInfo) -> None:
        """The context files loaded changed: the next usage_update says how many, and their tokens."""
        self.notifier.memory = (len(info.files), info.tokens) if info.files else None

    def _todos_changed(self, _session_id: str, items: list[TodoItem]) -> None:
        """The model's todo list changed: the client gets the whole plan."""
        self.outbox.put(updates.plan_update(items))

    async def memory(self, argument: str) -> None:
        """`/memory show|refresh|add [--global|--project] <text>`."""
        try:
            parsed = commands.parse_memory(argument)
        except ValueError as exc:
            raise errors.SidecarError(errors.INVALID_PARAMS, str(exc)) from None
        memory = self.services.memory
        if parsed.action == "show":
            await memory.ensure_loaded()
            info, heading = memory.info(), ""
        elif parsed.action == "refresh":
            info, heading = await memory.refresh(), "Memory reloaded from the context files."
        else:
            info = await memory.add(parsed.text, parsed.scope)
            heading = f"Remembered in `{memory.add_target(parsed.scope)}`: {parsed.text}"
        self.notifier.say(commands.render_memory(msgspec.to_builtins(info), heading))

    def _available_commands(self) -> Any:
        return commands.available_commands([(c.command, c.description, c.hint) for c in self.prompt_commands.values()])

    def modes(self) -> SessionModeState:
        """The approval modes as ACP session modes, with the current one."""
        available = [SessionMode(id=mid, name=name, description=text) for mid, name, text in MODES]
        return SessionModeState(current_mode_id=self.mode or self.settings.approval_mode, available_modes=available)

    def set_mode(self, mode_id: str) -> None:
        """Make `mode_id` the approval mode (a settings override) and tell the client."""
        if mode_id not in {mid for mid, _, _ in MODES}:
            known = ", ".join(mid for mid, _, _ in MODES)
            raise RequestError(
                INVALID_PARAMS, edge.bad_params("session/set_mode", f"unknown mode {mode_id!r} (modes: {known}).")
            )
        self.mode = mode_id
        self.services.session.sources.overrides["approvalMode"] = mode_id
        self.reload_settings()
        self.outbox.put(update_current_mode(mode_id))

    def announce(self) -> None:
        """What a client shows for a session it has just got: slash commands and token usage."""
        self.outbox.put(self._available_commands())
        self.notifier.token_usage(self.live.usage())

    def usage_after(self) -> None:
        """A usage_update after every turn and compaction attempt, even when the numbers stayed the same."""
        if not self.notifier.usage_sent:
            self.notifier.token_usage(self.live.usage())

    # -- load / resume ----------------------------------------------------------------------------------
    def require_recorded(self, recorded_id: str) -> None:
        """RESOURCE_NOT_FOUND unless `recorded_id` is a session recorded for this folder."""
        try:
            exists = self.services.store.path(recorded_id).exists()
        except ValueError:
            exists = False
        if not exists:
            raise RequestError(
                RESOURCE_NOT_FOUND,
                f"No recorded session {recorded_id!r} for the folder {self.cwd}. "
                "A session is recorded from its first prompt: one that was never prompted left "
                "nothing to load, resume or list (start a new one).",
                {"sessionId": recorded_id},
            )

    async def resume(self, recorded_id: str, *, replay: bool) -> None:
        """Continue the recorded session `recorded_id` (session/load replays it to the client, resume does not)."""
        self.require_recorded(recorded_id)
        self.notifier.usage_sent = False
        with self.notifier.usage_after_reply():  # the resumed usage, once, after the replay and the commands
            try:
                await self.services.sessions.resume(recorded_id)
            except errors.SidecarError as exc:
                raise RequestError(exc.code, exc.message, msgspec.to_builtins(exc.data)) from None
            if replay:
                self.send_replay()
            self.outbox.put(self._available_commands())
        self.usage_after()
        await self.outbox.flush()

    def send_replay(self) -> None:
        """Everything said in the session, as an editor's resume shows it (the model keeps the compacted view)."""
        try:
            shown = conversation_updates(self.live.recorder.reload().shown(), self.cwd)
        except (RecordingError, ValueError):  # nothing readable recorded (recording off): the model's view
            conv = self.live.conversation
            shown = replay_updates(conv.history, conv.ids)
        for update in shown:
            self.outbox.put(update)

    # -- prompts --------------------------------------------------------------------------------------
    async def prompt(self, blocks: list[Any]) -> str:
        """Run one prompt (a turn or a slash command), one at a time; its stop reason."""
        if self.turn is not None and not self.turn.done():
            raise RequestError(
                errors.BUSY,
                "A prompt is already running in this session: wait for it to finish, or cancel it (session/cancel).",
            )
        log.debug("prompt for session %s", self.session_id)
        text, files = read_prompt(blocks)
        if not text.strip():
            raise RequestError(INVALID_PARAMS, edge.bad_params("session/prompt", "the prompt has no text."))
        self.cancel_requested = False
        self.notifier.usage_sent = False
        self.reload_settings()
        task = asyncio.get_running_loop().create_task(self._dispatch(text, files), name="acp-prompt")
        self.turn = task
        try:
            stop = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            stop = "cancelled"
        except errors.SidecarError as exc:
            self.usage_after()
            await self.outbox.flush()
            raise RequestError(exc.code, exc.message, msgspec.to_builtins(exc.data)) from None
        finally:
            self.turn = None
        self.usage_after()
        await self.outbox.flush()
        return stop

    def cancel(self) -> None:
        """Cancel the running prompt, if any."""
        self.cancel_requested = True
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()

    async def _dispatch(self, text: str, files: list[str]) -> str:
        command = commands.parse(text)
        if command is None:
            head, _, rest = text.strip().partition(" ")
            prompt = self.prompt_commands.get(head[1:]) if head.startswith("/") else None
            if prompt is not None:  # an MCP prompt: its text is sent as the user's message
                try:
                    text = await expand_prompt(self.mcp, prompt, rest)
                except CallFailed as exc:
                    self.notifier.say(f"⚠ /{prompt.command}: {exc}")
                    return "end_turn"
            return await self._turn(text, files)
        await commands.BY_NAME[command.name].run(self, command.argument)
        return "end_turn"

    async def rewind(self, argument: str) -> None:
        """`/rewind [--files] [--force] [N]`: take back the user's last N messages (default 1) and everything after
        them; with --files also put back the files the agent changed since (--force: also those changed since)."""
        words = argument.split()
        files, force = "--files" in words or "--force" in words, "--force" in words
        number = " ".join(w for w in words if w not in ("--files", "--force"))
        count = int(number) if number.isdigit() else None
        if number and (count is None or count < 1):
            raise errors.SidecarError(
                errors.INVALID_PARAMS,
                f"/rewind takes how many of your messages to take "
                f"back (a number, default 1) and --files, not {argument!r}.",
            )
        entries = self.services.sessions.transcript(None).entries
        mine = [e.id for e in entries if isinstance(e, TranscriptMessage) and e.kind == "user" and not e.rewound]
        wanted = count or 1
        if len(mine) < wanted:
            raise errors.SidecarError(
                errors.SESSION_ERROR,
                f"Cannot rewind {counted(wanted, 'message')}: this session has "
                f"{counted(len(mine), 'message')} of yours the model still sees.",
            )
        result = await self.services.actions.rewind(mine[-wanted], restore_files=files, force=force)
        listed = commands.render_rewound_files(result) if files else ""
        self.notifier.say(f"{result.message}{listed}\n\nYour message was:\n\n> " + result.text.replace("\n", "\n> "))

    async def fork_from(self, source: str) -> None:
        """Make this (new) session a fork of the recorded session `source`: its whole history, the parent unchanged."""
        self.outbox.hold()  # the usage the fork pushes is the fork's: announce() sends it under the fork's id
        try:
            result = await self.services.actions.fork(source, None)
        finally:
            self.outbox.close()
        self.outbox.session_id = result.session_id

    async def _turn(self, text: str, files: list[str]) -> str:
        if files:
            now = time.time() * 1000
            for index, path in enumerate(files):
                self.attached.pop(path, None)
                self.attached[path] = OpenFile(path=path, timestamp=now - index)
            self.live.set_ide_context(normalize(list(self.attached.values())), True)
        try:
            result = await self.chat.send_message(text, None, self.live.ide.current)
        except errors.SidecarError as exc:
            if exc.code == errors.MODEL_ERROR and getattr(exc.data, "kind", None) == "blocked":
                self.notifier.say(exc.message)  # a blocked prompt (or reply) is a refusal, named in words
                return "refusal"
            raise
        return updates.stop_reason(result.finish_reason)

    async def compress(
        self, focus: str | None, run: Callable[[], Awaitable[object]] | None = None, *, preview: bool = False
    ) -> None:
        """`/compress [focus]`: a manual compaction, shown as the client's compaction updates when offered. `run`:
        the compaction to run instead (up to a message, a preview, applying one); `preview`: nothing is applied."""
        notifier = self.notifier
        notifier.manual_next = True
        try:
            await (run() if run is not None else self.chat.compress(focus))
        except errors.SidecarError as exc:
            current = notifier.current
            if current is not None and current.manual:
                notifier.finish(current, error=exc.message)
            else:
                notifier.say(exc.message)  # already compressing: nothing was started
            raise
        except asyncio.CancelledError:
            if notifier.current is not None:
                notifier.finish(notifier.current, cancelled=True)
            raise
        finally:
            notifier.manual_next = False
        if notifier.current is not None:
            notifier.finish(notifier.current, preview=preview)

    def _latest_snapshot(self) -> str | None:
        conv = self.live.conversation
        for index, mid in enumerate(conv.ids):
            if is_summary_id(mid):
                content = conv.history[index]
                return "".join(p.text or "" for p in content.parts) or None
        return None

    async def close(self) -> None:
        """Cancel, stop sending updates and close the services in their shutdown order."""
        self.cancel()
        self.outbox.close()
        await self.services.aclose()


def _path_of(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    if not parsed.scheme and uri.startswith("/"):
        return uri
    return None


def read_prompt(blocks: list[Any]) -> tuple[str, list[str]]:
    """The user's text (mentions inline as @path, attached file contents appended), and the attached files."""
    text: list[str] = []
    attached: list[str] = []
    contents: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            text.append(block.text)
        elif kind == "resource_link":
            path = _path_of(block.uri)
            text.append(f"@{path or block.uri}")
            if path:
                attached.append(path)
        elif kind == "resource":
            resource = block.resource
            path = _path_of(resource.uri)
            shown = path or resource.uri
            text.append(f"@{shown}")
            if path:
                attached.append(path)
            body = getattr(resource, "text", None)
            if body is not None:
                contents.append(f"Content from @{shown}:\n{body}")
            else:
                contents.append(f"(@{shown} is a binary attachment; its content was not included.)")
        else:
            text.append(f"[{kind} attachment: not supported by this agent, left out]")
    joined = "".join(_spaced(text))
    if contents:
        joined += "\n\n--- Content from referenced files ---\n" + "\n\n".join(contents) + "\n--- End of content ---"
    return joined, attached


def _spaced(pieces: list[str]) -> list[str]:
    """Join text pieces and mentions with a space where neither side has one."""
    out: list[str] = []
    for piece in pieces:
        if out and out[-1] and piece and not out[-1][-1].isspace() and not piece[0].isspace():
            out.append(" ")
        out.append(piece)
    return out
