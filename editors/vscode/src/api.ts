/**
 * The typed client API (SidecarApi, generated into protocol.ts from sidecar/protocol/) and the helpers around it:
 * the error code and text of a rejected request, the bare session list. No vscode import.
 */
import { SessionSummary, SidecarApi } from './protocol';

export { RpcEndpoint, SidecarApi } from './protocol';

/** Without params sidecar/listSessions answers the bare list (the paged form takes query/limit/cursor). */
export async function listAllSessions(api: SidecarApi): Promise<SessionSummary[]> {
  const r = await api.listSessions();
  return Array.isArray(r) ? r : r.sessions;
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
