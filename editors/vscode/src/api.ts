/**
 * Typed calls of the sidecar methods over any JSON-RPC endpoint: the extension passes its LanguageClient,
 * the round-trip test a plain vscode-jsonrpc connection. No vscode import.
 */
import {
  CompressParams, CompressResult, DeleteSessionResult, ForkParams, ForkSessionResult, GetTranscriptResult,
  IdeContextParams, ListPinsResult, ListSessionsPage, ListSessionsParams, ListSessionsResult, Method, NewSessionResult,
  PinResult, RenameSessionResult, ResumeSessionResult, RewindResult, SendMessageResult, TokenUsage,
  UndoCompactionResult,
  SessionSummary,
} from './protocol';

/** What both vscode-languageclient's LanguageClient and vscode-jsonrpc's MessageConnection offer. */
export interface RpcEndpoint {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  sendRequest<R>(method: string, params: any, token?: any): Promise<R>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  sendNotification(method: string, params?: any): Promise<void> | void;
}

export class SidecarApi {
  constructor(private readonly rpc: RpcEndpoint) {}

  /** vscode-jsonrpc sends `(params, undefined)` as a by-position array: only pass a token that exists. */
  private request<R>(method: string, params: object, token?: unknown): Promise<R> {
    return token === undefined ? this.rpc.sendRequest<R>(method, params) : this.rpc.sendRequest<R>(method, params, token);
  }

  sendMessage(text: string, token?: unknown): Promise<SendMessageResult> {
    return this.request(Method.sendMessage, { text }, token);
  }
  getTokenUsage(): Promise<TokenUsage> {
    return this.request(Method.getTokenUsage, {});
  }
  compress(instructions?: string, token?: unknown): Promise<CompressResult> {
    const params: CompressParams = instructions ? { instructions } : {};
    return this.request(Method.compress, params, token);
  }
  newSession(): Promise<NewSessionResult> {
    return this.request(Method.newSession, {});
  }
  /** Without params the server answers the bare list (the paged form is searchSessions). */
  listSessions(): Promise<SessionSummary[]> {
    return this.request<ListSessionsResult>(Method.listSessions, {}) as Promise<SessionSummary[]>;
  }
  resumeSession(sessionId: string): Promise<ResumeSessionResult> {
    return this.request(Method.resumeSession, { sessionId });
  }
  getTranscript(sessionId?: string): Promise<GetTranscriptResult> {
    return this.request(Method.getTranscript, sessionId ? { sessionId } : {});
  }
  undoCompaction(): Promise<UndoCompactionResult> {
    return this.request(Method.undoCompaction, {});
  }
  /** One page of sessions (the paged form of listSessions). */
  searchSessions(params: ListSessionsParams): Promise<ListSessionsPage> {
    return this.request(Method.listSessions, params);
  }
  forkSession(params: ForkParams = {}): Promise<ForkSessionResult> {
    return this.request(Method.forkSession, params);
  }
  rewind(messageId: string): Promise<RewindResult> {
    return this.request(Method.rewind, { messageId });
  }
  renameSession(sessionId: string, title: string): Promise<RenameSessionResult> {
    return this.request(Method.renameSession, { sessionId, title });
  }
  deleteSession(sessionId: string): Promise<DeleteSessionResult> {
    return this.request(Method.deleteSession, { sessionId });
  }
  pin(text: string): Promise<PinResult> {
    return this.request(Method.pin, { text });
  }
  unpin(pinId: string): Promise<{ pinId: string; removed: boolean }> {
    return this.request(Method.unpin, { pinId });
  }
  listPins(): Promise<ListPinsResult> {
    return this.request(Method.listPins, {});
  }
  ideContext(params: IdeContextParams): Promise<void> | void {
    return this.rpc.sendNotification(Method.ideContext, params);
  }
}

/** The JSON-RPC error code of a rejected request, if it is one. */
export function errorCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(err);
}
