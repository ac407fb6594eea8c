"""Every sidecar/* method and notification, once: its name, who sends it, its params and result types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from sidecar.protocol.compaction import (
    ApplyCompactionParams,
    ApplyCompactionResult,
    PreviewCompactionParams,
    PreviewCompactionResult,
    RateCompactionParams,
    RateCompactionResult,
)
from sidecar.protocol.context import (
    ContextBreakdown,
    ListModelsResult,
    PostponeCompactionResult,
    SetModelParams,
    SetModelResult,
)
from sidecar.protocol.ide import IdeContextParams
from sidecar.protocol.mcp import (
    GetMcpPromptParams,
    GetMcpPromptResult,
    McpPromptInfo,
    McpServerInfo,
    McpStatusParams,
    RestartMcpServerParams,
    RestartMcpServerResult,
    SetMcpServerEnabledParams,
    SetMcpServerEnabledResult,
)
from sidecar.protocol.memory import AddMemoryParams, MemoryInfo
from sidecar.protocol.sessions import (
    ClearTodosResult,
    DeleteSessionResult,
    ForkSessionResult,
    GetTodosResult,
    GetTranscriptResult,
    ImportSessionResult,
    ListCheckpointsResult,
    ListDeletedSessionsResult,
    ListPinsResult,
    ListSessionsPage,
    NewSessionResult,
    PinResult,
    PreviewRewindResult,
    RenameSessionResult,
    RestoreSessionResult,
    ResumeSessionResult,
    RewindResult,
    SessionSummary,
    TodosChangedParams,
    UndoCompactionResult,
    UnpinResult,
)
from sidecar.protocol.tools import ConfirmToolCallParams, ConfirmToolCallResult, ToolCallParams
from sidecar.protocol.types import (
    CompressedParams,
    CompressParams,
    CompressResult,
    Empty,
    ForkParams,
    GetTranscriptParams,
    ImportParams,
    ListCheckpointsParams,
    ListSessionsParams,
    MessageDeltaParams,
    PinParams,
    PreviewRewindParams,
    RenameParams,
    ResumeSessionParams,
    RetryParams,
    RewindParams,
    SendMessageParams,
    SendMessageResult,
    TokenUsage,
    ToolOutputsMaskedParams,
    UnpinParams,
)

#: Every custom method's name starts with this; the rest of the name is its key in the editors' tables.
PREFIX = "sidecar/"

#: workspace/executeCommand command that runs sidecar/compress (optional first argument: the instructions).
COMPRESS_COMMAND = "sidecar.compressConversation"

#: Titles of the server's work-done progress, which editors tell apart.
PROGRESS_TURN = "Gemini"
PROGRESS_COMPRESS = "Compressing conversation"
#: What a progress is about; the server's code tells progresses apart by kind, never by title.
ProgressKind = Literal["turn", "compaction"]
PROGRESS_TITLES: dict[ProgressKind, str] = {"turn": PROGRESS_TURN, "compaction": PROGRESS_COMPRESS}


P = TypeVar("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Method(Generic[P, R]):
    """One method or notification of the contract: `Method[Params, Result]`, so that a handler registered for it
    is checked by mypy against both (sidecar.rpc.dispatch.request). Notifications are `Method[Params, None]`."""

    name: str
    kind: Literal["request", "notification"]
    #: Who sends it.
    sender: Literal["client", "server"]
    params: type[P]
    #: The result type (requests only; a union for sidecar/listSessions), the same as R (tests/unit/protocol).
    result: Any = None
    summary: str = ""

    @property
    def key(self) -> str:
        """The name without the prefix: the constant's name in the editors' tables (`sendMessage`)."""
        return self.name.removeprefix(PREFIX)


# -- requests (client -> server) ----------------------------------------------------------------------------
SEND_MESSAGE: Method[SendMessageParams, SendMessageResult] = Method(
    "sidecar/sendMessage",
    "request",
    "client",
    SendMessageParams,
    SendMessageResult,
    "Run one user turn; the reply streams as sidecar/messageDelta.",
)
GET_TOKEN_USAGE: Method[Empty, TokenUsage] = Method(
    "sidecar/getTokenUsage", "request", "client", Empty, TokenUsage, "The current token usage."
)
COMPRESS: Method[CompressParams, CompressResult] = Method(
    "sidecar/compress",
    "request",
    "client",
    CompressParams,
    CompressResult,
    "Compress the conversation now (optional focus instructions; upToMessageId: summarise everything before that "
    "user message, keep it and the rest verbatim).",
)
PREVIEW_COMPACTION: Method[PreviewCompactionParams, PreviewCompactionResult] = Method(
    "sidecar/previewCompaction",
    "request",
    "client",
    PreviewCompactionParams,
    PreviewCompactionResult,
    "The summary a compaction would apply now (optional focus, upToMessageId) and the sizes before and after; the "
    "history is unchanged.",
)
APPLY_COMPACTION: Method[ApplyCompactionParams, ApplyCompactionResult] = Method(
    "sidecar/applyCompaction",
    "request",
    "client",
    ApplyCompactionParams,
    ApplyCompactionResult,
    "Apply a previewed summary, or the user's edited text of it (recorded as edited); refused when the history "
    "changed since the preview.",
)
RATE_COMPACTION: Method[RateCompactionParams, RateCompactionResult] = Method(
    "sidecar/rateCompaction",
    "request",
    "client",
    RateCompactionParams,
    RateCompactionResult,
    "Rate a compaction (default: the latest): good, or lost something, with an optional note; recorded with it.",
)
NEW_SESSION: Method[Empty, NewSessionResult] = Method(
    "sidecar/newSession", "request", "client", Empty, NewSessionResult, "Start a new, empty conversation."
)
LIST_SESSIONS: Method[ListSessionsParams, list[SessionSummary] | ListSessionsPage] = Method(
    "sidecar/listSessions",
    "request",
    "client",
    ListSessionsParams,
    list[SessionSummary] | ListSessionsPage,
    "This project's recorded sessions, newest first (the bare list without params; a page with query/limit/cursor).",
)
RESUME_SESSION: Method[ResumeSessionParams, ResumeSessionResult] = Method(
    "sidecar/resumeSession",
    "request",
    "client",
    ResumeSessionParams,
    ResumeSessionResult,
    "Continue a recorded session.",
)
GET_TRANSCRIPT: Method[GetTranscriptParams, GetTranscriptResult] = Method(
    "sidecar/getTranscript",
    "request",
    "client",
    GetTranscriptParams,
    GetTranscriptResult,
    "Every message ever recorded in a session, with compaction markers.",
)
IMPORT_SESSION: Method[ImportParams, ImportSessionResult] = Method(
    "sidecar/importSession",
    "request",
    "client",
    ImportParams,
    ImportSessionResult,
    "Import a Gemini CLI session file as a new session.",
)
UNDO_COMPACTION: Method[Empty, UndoCompactionResult] = Method(
    "sidecar/undoCompaction",
    "request",
    "client",
    Empty,
    UndoCompactionResult,
    "Restore the history from right before the latest compaction.",
)

FORK_SESSION: Method[ForkParams, ForkSessionResult] = Method(
    "sidecar/forkSession",
    "request",
    "client",
    ForkParams,
    ForkSessionResult,
    "A new live session with a session's history before a user message (default: all of it); the parent unchanged.",
)
REWIND: Method[RewindParams, RewindResult] = Method(
    "sidecar/rewind",
    "request",
    "client",
    RewindParams,
    RewindResult,
    "Drop a user message and everything after it from the model's history (the transcript keeps them); with "
    "restoreFiles, also put back the files the agent changed since.",
)
RENAME_SESSION: Method[RenameParams, RenameSessionResult] = Method(
    "sidecar/renameSession", "request", "client", RenameParams, RenameSessionResult, "Give a session a title."
)
DELETE_SESSION: Method[ResumeSessionParams, DeleteSessionResult] = Method(
    "sidecar/deleteSession",
    "request",
    "client",
    ResumeSessionParams,
    DeleteSessionResult,
    "Move a session (not the live one) to the trash for 30 days.",
)
LIST_DELETED_SESSIONS: Method[Empty, ListDeletedSessionsResult] = Method(
    "sidecar/listDeletedSessions",
    "request",
    "client",
    Empty,
    ListDeletedSessionsResult,
    "This project's sessions in the trash (restorable), most recently deleted first.",
)
RESTORE_SESSION: Method[ResumeSessionParams, RestoreSessionResult] = Method(
    "sidecar/restoreSession",
    "request",
    "client",
    ResumeSessionParams,
    RestoreSessionResult,
    "Bring a deleted session back from the trash (it is not resumed).",
)
PIN: Method[PinParams, PinResult] = Method(
    "sidecar/pin",
    "request",
    "client",
    PinParams,
    PinResult,
    "Pin a fact: every request carries it verbatim, every compaction keeps it.",
)
UNPIN: Method[UnpinParams, UnpinResult] = Method(
    "sidecar/unpin", "request", "client", UnpinParams, UnpinResult, "Remove a pinned fact."
)
LIST_PINS: Method[Empty, ListPinsResult] = Method(
    "sidecar/listPins", "request", "client", Empty, ListPinsResult, "The live session's pinned facts."
)

GET_TODOS: Method[Empty, GetTodosResult] = Method(
    "sidecar/getTodos", "request", "client", Empty, GetTodosResult, "The model's todo list of the live session."
)
CLEAR_TODOS: Method[Empty, ClearTodosResult] = Method(
    "sidecar/clearTodos",
    "request",
    "client",
    Empty,
    ClearTodosResult,
    "Clear the model's todo list (recorded; the model no longer gets it).",
)
TODOS_CHANGED: Method[TodosChangedParams, None] = Method(
    "sidecar/todosChanged",
    "notification",
    "server",
    TodosChangedParams,
    summary="The live session's todo list changed (write_todos, a clear, new, resume, fork, rewind): the whole list.",
)

LIST_MCP_SERVERS: Method[Empty, list[McpServerInfo]] = Method(
    "sidecar/listMcpServers",
    "request",
    "client",
    Empty,
    list[McpServerInfo],
    "The configured MCP servers: status (starting, ready, failed, disabled), their tools, why one failed.",
)
RESTART_MCP_SERVER: Method[RestartMcpServerParams, RestartMcpServerResult] = Method(
    "sidecar/restartMcpServer",
    "request",
    "client",
    RestartMcpServerParams,
    RestartMcpServerResult,
    "Stop an MCP server and start it again (e.g. after it failed).",
)
SET_MCP_SERVER_ENABLED: Method[SetMcpServerEnabledParams, SetMcpServerEnabledResult] = Method(
    "sidecar/setMcpServerEnabled",
    "request",
    "client",
    SetMcpServerEnabledParams,
    SetMcpServerEnabledResult,
    "Disable an MCP server (its process stops, its tools leave the model) or enable it again, until the sidecar exits.",
)
LIST_MCP_PROMPTS: Method[Empty, list[McpPromptInfo]] = Method(
    "sidecar/listMcpPrompts",
    "request",
    "client",
    Empty,
    list[McpPromptInfo],
    "The ready MCP servers' prompts by command name, with their arguments.",
)
GET_MCP_PROMPT: Method[GetMcpPromptParams, GetMcpPromptResult] = Method(
    "sidecar/getMcpPrompt",
    "request",
    "client",
    GetMcpPromptParams,
    GetMcpPromptResult,
    "Expand an MCP prompt with its arguments: the text for the editor to send as the user's turn, or why not.",
)

# checkpoints: the files the agent changed, put back with the conversation (docs/checkpoints.md)
LIST_CHECKPOINTS: Method[ListCheckpointsParams, ListCheckpointsResult] = Method(
    "sidecar/listCheckpoints",
    "request",
    "client",
    ListCheckpointsParams,
    ListCheckpointsResult,
    "A session's user messages that can be rewound to, with the files each turn changed (default: the live one).",
)
PREVIEW_REWIND: Method[PreviewRewindParams, PreviewRewindResult] = Method(
    "sidecar/previewRewind",
    "request",
    "client",
    PreviewRewindParams,
    PreviewRewindResult,
    "What sidecar/rewind with restoreFiles would put back, remove, leave (conflicts) and skip; nothing is changed.",
)

GET_MEMORY: Method[Empty, MemoryInfo] = Method(
    "sidecar/getMemory",
    "request",
    "client",
    Empty,
    MemoryInfo,
    "The context files loaded (GEMINI.md, AGENTS.md: global, project, subfolders) and their text.",
)
REFRESH_MEMORY: Method[Empty, MemoryInfo] = Method(
    "sidecar/refreshMemory",
    "request",
    "client",
    Empty,
    MemoryInfo,
    "Read the context files again (subfolder files are delivered again when a tool touches them).",
)
ADD_MEMORY: Method[AddMemoryParams, MemoryInfo] = Method(
    "sidecar/addMemory",
    "request",
    "client",
    AddMemoryParams,
    MemoryInfo,
    "Append `- <text>` under `## Gemini Added Memories` in ~/.gemini/GEMINI.md or the project GEMINI.md; refresh.",
)

GET_CONTEXT_BREAKDOWN: Method[Empty, ContextBreakdown] = Method(
    "sidecar/getContextBreakdown",
    "request",
    "client",
    Empty,
    ContextBreakdown,
    "The next request's tokens by category (system prompt, tools, memory files, messages, …) and the free space.",
)
POSTPONE_COMPACTION: Method[Empty, PostponeCompactionResult] = Method(
    "sidecar/postponeCompaction",
    "request",
    "client",
    Empty,
    PostponeCompactionResult,
    "The next message skips the automatic compaction that is due (once; recorded).",
)
LIST_MODELS: Method[Empty, ListModelsResult] = Method(
    "sidecar/listModels",
    "request",
    "client",
    Empty,
    ListModelsResult,
    "The backend's models that support generateContent (the known table when the list cannot be had).",
)
SET_MODEL: Method[SetModelParams, SetModelResult] = Method(
    "sidecar/setModel",
    "request",
    "client",
    SetModelParams,
    SetModelResult,
    "Use another model from the next request on; the window and thresholds follow; recorded.",
)

# -- notifications (client -> server) -----------------------------------------------------------------------
IDE_CONTEXT: Method[IdeContextParams, None] = Method(
    "sidecar/ideContext",
    "notification",
    "client",
    IdeContextParams,
    summary="The editor's open files, cursor, selection and workspace trust.",
)

# -- notifications (server -> client) -----------------------------------------------------------------------
MESSAGE_DELTA: Method[MessageDeltaParams, None] = Method(
    "sidecar/messageDelta", "notification", "server", MessageDeltaParams, summary="One streamed chunk of the reply."
)
TOKEN_USAGE: Method[TokenUsage, None] = Method(
    "sidecar/tokenUsage",
    "notification",
    "server",
    TokenUsage,
    summary="Token usage, pushed once per change of state (turns, compactions, settings, session switches).",
)
COMPRESSED: Method[CompressedParams, None] = Method(
    "sidecar/compressed",
    "notification",
    "server",
    CompressedParams,
    summary="A compaction attempt that was not NOOP, failures included.",
)
TOOL_CALL: Method[ToolCallParams, None] = Method(
    "sidecar/toolCall",
    "notification",
    "server",
    ToolCallParams,
    summary="A tool call's status changed (pending, running, done, error, denied, cancelled).",
)

MCP_STATUS: Method[McpStatusParams, None] = Method(
    "sidecar/mcpStatus",
    "notification",
    "server",
    McpStatusParams,
    summary="An MCP server's status or tool list changed; carries every server, as sidecar/listMcpServers.",
)

MEMORY_CHANGED: Method[MemoryInfo, None] = Method(
    "sidecar/memoryChanged",
    "notification",
    "server",
    MemoryInfo,
    summary="The context files loaded changed (start, refresh, addMemory, a file edited, a subfolder file delivered).",
)

RETRY: Method[RetryParams, None] = Method(
    "sidecar/retry",
    "notification",
    "server",
    RetryParams,
    summary="An unusable reply is retried: drop the failed attempt's text (the turn's text restarts from `text`).",
)

TOOL_OUTPUTS_MASKED: Method[ToolOutputsMaskedParams, None] = Method(
    "sidecar/toolOutputsMasked",
    "notification",
    "server",
    ToolOutputsMaskedParams,
    summary="Old tool outputs were masked before a request (once per masking): show `message` in the chat.",
)

# -- requests (server -> client) ----------------------------------------------------------------------------
CONFIRM_TOOL_CALL: Method[ConfirmToolCallParams, ConfirmToolCallResult] = Method(
    "sidecar/confirmToolCall",
    "request",
    "server",
    ConfirmToolCallParams,
    ConfirmToolCallResult,
    "Ask the user whether an edit or a shell command may run.",
)

ALL: tuple[Method[Any, Any], ...] = (
    SEND_MESSAGE,
    GET_TOKEN_USAGE,
    COMPRESS,
    PREVIEW_COMPACTION,
    APPLY_COMPACTION,
    RATE_COMPACTION,
    NEW_SESSION,
    LIST_SESSIONS,
    RESUME_SESSION,
    GET_TRANSCRIPT,
    IMPORT_SESSION,
    UNDO_COMPACTION,
    FORK_SESSION,
    REWIND,
    RENAME_SESSION,
    DELETE_SESSION,
    LIST_DELETED_SESSIONS,
    RESTORE_SESSION,
    PIN,
    UNPIN,
    LIST_PINS,
    GET_TODOS,
    CLEAR_TODOS,
    TODOS_CHANGED,
    LIST_MCP_SERVERS,
    RESTART_MCP_SERVER,
    SET_MCP_SERVER_ENABLED,
    LIST_MCP_PROMPTS,
    GET_MCP_PROMPT,
    LIST_CHECKPOINTS,
    PREVIEW_REWIND,
    GET_MEMORY,
    REFRESH_MEMORY,
    ADD_MEMORY,
    GET_CONTEXT_BREAKDOWN,
    POSTPONE_COMPACTION,
    LIST_MODELS,
    SET_MODEL,
    IDE_CONTEXT,
    MESSAGE_DELTA,
    TOKEN_USAGE,
    COMPRESSED,
    TOOL_CALL,
    RETRY,
    MCP_STATUS,
    MEMORY_CHANGED,
    TOOL_OUTPUTS_MASKED,
    CONFIRM_TOOL_CALL,
)
