/**
 * The sidecar wire contract (docs/protocol.md): method names and the shapes of their params and results.
 *
 * This is the one place the extension spells the protocol; everything else imports from here. It imports
 * nothing, so it loads under plain Node (unit tests, the round-trip test) as well as in the extension host.
 */

// -- method names ------------------------------------------------------------------------------------
export const Method = {
  sendMessage: 'sidecar/sendMessage',
  getTokenUsage: 'sidecar/getTokenUsage',
  compress: 'sidecar/compress',
  newSession: 'sidecar/newSession',
  listSessions: 'sidecar/listSessions',
  resumeSession: 'sidecar/resumeSession',
  getTranscript: 'sidecar/getTranscript',
  undoCompaction: 'sidecar/undoCompaction',
  forkSession: 'sidecar/forkSession',
  rewind: 'sidecar/rewind',
  renameSession: 'sidecar/renameSession',
  deleteSession: 'sidecar/deleteSession',
  pin: 'sidecar/pin',
  unpin: 'sidecar/unpin',
  listPins: 'sidecar/listPins',
  // client -> server notification
  ideContext: 'sidecar/ideContext',
  // server -> client notifications
  messageDelta: 'sidecar/messageDelta',
  tokenUsage: 'sidecar/tokenUsage',
  compressed: 'sidecar/compressed',
  toolCall: 'sidecar/toolCall',
  // server -> client request
  confirmToolCall: 'sidecar/confirmToolCall',
} as const;

/** Titles of the server's work-done progress. */
export const ProgressTitle = {
  turn: 'Gemini',
  compress: 'Compressing conversation',
} as const;

// -- error codes -------------------------------------------------------------------------------------
export const ErrorCode = {
  invalidParams: -32602,
  methodNotFound: -32601,
  internalError: -32603,
  requestCancelled: -32800,
  modelError: -32001,
  contextOverflow: -32002,
  alreadyCompressing: -32003,
  sessionError: -32004,
} as const;

// -- shared values -----------------------------------------------------------------------------------
export type UsageSource = 'api' | 'estimate';

export interface TokenUsage {
  /** Grows by one with every change of state, from 1 in each server process: keep the highest, drop older. */
  seq: number;
  sessionId: string;
  model: string;
  promptTokenCount: number;
  tokenLimit: number;
  /** 0-100, one decimal. */
  percentUsed: number;
  /** 0-1: automatic compaction starts at this fraction of tokenLimit. */
  compressionThreshold: number;
  source: UsageSource;
  /** why a fresh estimate: after a history rewrite; null/absent for API counts and "the history grew" */
  estimateReason?: 'newSession' | 'undo' | 'resume' | null;
}

/** The `sidecar` settings section, passed as initializationOptions and in didChangeConfiguration. */
export interface SidecarSettings {
  model?: string;
  apiKey?: string;
  baseUrl?: string;
  tokenLimit?: number;
  compressionThreshold?: number;
  compressionModel?: string;
  requestTimeoutMs?: number;
  retryAttempts?: number;
  retryInitialDelayMs?: number;
  maxToolRounds?: number;
  approvalMode?: 'default' | 'autoEdit' | 'yolo';
  hooks?: Record<string, unknown>;
}

// -- requests ----------------------------------------------------------------------------------------
export interface SendMessageParams { text: string }
export interface SendMessageResult {
  turnId: string;
  text: string;
  finishReason: string | null;
  usage: TokenUsage;
}

export type CompressionStatus =
  | 'COMPRESSED'
  | 'COMPRESSION_FAILED_INFLATED_TOKEN_COUNT'
  | 'COMPRESSION_FAILED_TOKEN_COUNT_ERROR'
  | 'COMPRESSION_FAILED_EMPTY_SUMMARY'
  | 'NOOP'
  | 'CONTENT_TRUNCATED';

export interface CompressParams { instructions?: string }
export interface CompressResult {
  status: CompressionStatus;
  originalTokenCount: number;
  newTokenCount: number;
  message: string;
}

export interface NewSessionResult { sessionId: string }

export interface SessionInfo {
  sessionId: string;
  title: string;
  /** ISO 8601 */
  startTime: string;
  /** ISO 8601 */
  lastUpdated: string;
  messageCount: number;
  compactionCount: number;
  /** Set when the session is a branch (forkSession, or a resume while another window held it). */
  parentSessionId?: string;
}
/** listSessions with no params: the bare list (what this extension uses). */
export type ListSessionsResult = SessionInfo[];
/** listSessions with query/limit/cursor: one page. */
export interface ListSessionsParams { query?: string; limit?: number; cursor?: string }
export interface ListSessionsPage { sessions: SessionInfo[]; nextCursor?: string }

export interface ResumeSessionParams { sessionId: string }
export interface ResumeSessionResult {
  sessionId: string;
  messageCount: number;
  /** The session was open in another window: `sessionId` is a new branch of `parentSessionId`. */
  forked?: boolean;
  parentSessionId?: string;
  /** The words to show the user when forked. */
  message?: string;
}

export interface ForkSessionParams { sessionId?: string; beforeMessageId?: string }
export interface ForkSessionResult { sessionId: string; parentSessionId: string; messageCount: number }
export interface RewindParams { messageId: string }
export interface RewindResult { messageCount: number; text: string; message: string }
export interface RenameSessionParams { sessionId: string; title: string }
export interface RenameSessionResult { sessionId: string; title: string }
export interface DeleteSessionResult { sessionId: string; message: string }
export interface Pin { pinId: string; text: string }
export interface PinResult { pinId: string; warning?: string }
export interface ListPinsResult { pins: Pin[] }

export interface GetTranscriptParams { sessionId?: string }
export type MessageKind = 'user' | 'model' | 'toolCall' | 'toolResult' | 'ideContext' | 'info' | 'error' | 'summary';
export interface TranscriptMessage {
  type: 'message';
  id: string;
  time: string;
  role: 'user' | 'model';
  kind: MessageKind;
  text: string;
  turnId?: string;
  /** a toolCall message's calls, as data (never parse `text` for names) */
  toolCalls?: TranscriptToolCall[];
  /** Dropped from the model's history by sidecar/rewind (kept for reading). */
  rewound?: boolean;
}
export interface TranscriptToolCall { name: string; args?: unknown; id?: string }
export interface TranscriptCompaction {
  type: 'compaction';
  id: string;
  time: string;
  trigger: 'auto' | 'manual';
  status: CompressionStatus;
  originalTokenCount: number;
  newTokenCount: number;
  undone: boolean;
  /** the <state_snapshot> text of a COMPRESSED compaction */
  snapshot?: string;
}
/** Where a branch starts: the entries before it are its parent's. */
export interface TranscriptFork {
  type: 'fork';
  id: string;
  time: string;
  parentSessionId: string;
  parentMessageId?: string;
  beforeMessageId?: string;
  reason?: 'fork' | 'locked';
}
export type TranscriptEntry = TranscriptMessage | TranscriptCompaction | TranscriptFork;
export interface GetTranscriptResult { sessionId: string; entries: TranscriptEntry[] }

export interface UndoCompactionResult { restored: boolean; message: string }

// -- client -> server notification ---------------------------------------------------------------------
export interface Cursor {
  /** 1-based */
  line: number;
  /** 1-based */
  character: number;
}
export interface OpenFile {
  /** absolute file system path */
  path: string;
  /** ms since the epoch: when the file was last focused */
  timestamp: number;
  isActive?: boolean;
  cursor?: Cursor;
  selectedText?: string;
}
export interface IdeContextParams {
  openFiles: OpenFile[];
  isTrusted?: boolean;
}

// -- server -> client notifications -------------------------------------------------------------------
export interface MessageDeltaParams { turnId: string; text: string }

export interface CompressedParams {
  sessionId: string;
  status: CompressionStatus;
  originalTokenCount: number;
  newTokenCount: number;
  trigger: 'auto' | 'manual';
  /** The text to show the user. */
  message: string;
}

export type ToolCallStatus = 'pending' | 'running' | 'done' | 'error' | 'denied' | 'cancelled';
export interface ToolCallParams {
  turnId: string;
  callId: string;
  name: string;
  args: unknown;
  status: ToolCallStatus;
  summary?: string;
}

// -- server -> client request ------------------------------------------------------------------------
export interface ConfirmToolCallParams {
  turnId: string;
  callId: string;
  toolName: string;
  args: unknown;
  description: string;
  diff?: string;
}
export type ToolDecision = 'allow' | 'allowAlways' | 'deny';
export interface ConfirmToolCallResult { decision: ToolDecision }

/** True when a compression status means the history got smaller. */
export function compressionSucceeded(status: CompressionStatus): boolean {
  return status === 'COMPRESSED' || status === 'CONTENT_TRUNCATED';
}
