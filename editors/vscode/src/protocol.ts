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
  // client -> server notification
  ideContext: 'sidecar/ideContext',
  // server -> client notifications
  messageDelta: 'sidecar/messageDelta',
  tokenUsage: 'sidecar/tokenUsage',
  compressed: 'sidecar/compressed',
  toolCall: 'sidecar/toolCall',
  retry: 'sidecar/retry',
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
  /** Where requests go: "Gemini API", "Vertex AI (project, location)", "embedded fake Gemini". */
  backend?: string;
  /** usageMetadata.cachedContentTokenCount of the last reply, when the API reported one. */
  cachedTokenCount?: number | null;
  /** why a fresh estimate: after a history rewrite; null/absent for API counts and "the history grew" */
  estimateReason?: 'newSession' | 'undo' | 'resume' | null;
}

/** The `sidecar` settings section, passed as initializationOptions and in didChangeConfiguration. */
export interface SidecarSettings {
  model?: string;
  apiKey?: string;
  baseUrl?: string;
  backend?: 'gemini' | 'vertex';
  vertexProject?: string;
  vertexLocation?: string;
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
}
export type ListSessionsResult = SessionInfo[];

export interface ResumeSessionParams { sessionId: string }
export interface ResumeSessionResult { sessionId: string; messageCount: number }

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
export type TranscriptEntry = TranscriptMessage | TranscriptCompaction;
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

/** Before another attempt at a reply: drop the failed attempt's text (the turn's text restarts from `text`). */
export interface RetryParams {
  turnId: string;
  /** the attempt about to start, 2..maxAttempts */
  attempt: number;
  maxAttempts: number;
  /** the failure type, e.g. THINKING_ONLY_RESPONSE, MALFORMED_FUNCTION_CALL, stream */
  reason: string;
  /** the cause in words */
  message: string;
  delayMs: number;
  /** the turn's text from earlier rounds: what stays shown */
  text: string;
}

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
