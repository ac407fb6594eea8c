/**
 * Which of the server's messages and the language client's log lines the user sees, and the words of the MCP failure
 * and restart notices. Pure (no vscode import): unit-tested.
 */
import type { McpServerInfo } from './protocol';

/** The server's MCP failure warning: the extension says it itself (from sidecar/mcpStatus, with Show log and Restart). */
const MCP_FAILURE = /^Sidecar: MCP server '[^']*'.* failed: /;
/** Notices said once per window: a restarted server says them again although nothing changed. */
const ONCE_PER_WINDOW: RegExp[] = [/no Gemini backend set/];

/** The server's window/showMessage notices, filtered: one object per window, so "once" outlives restarts. */
export class ServerNotices {
  private readonly seen = new Set<string>();

  /** Whether to show this message of the server. */
  show(message: string): boolean {
    if (MCP_FAILURE.test(message)) return false;
    const once = ONCE_PER_WINDOW.find((re) => re.test(message));
    if (!once) return true;
    if (this.seen.has(once.source)) return false;
    this.seen.add(once.source);
    return true;
  }
}

/**
 * Whether a language-client error goes to the log. "Connection to server got closed" never does (the extension logs
 * the real cause: the server's last words, restarting, not restarted), nor a failed stop of a client that never ran.
 */
export function clientErrorLogged(message: string, ran: boolean): boolean {
  if (/^Connection to server got closed/.test(message)) return false;
  return ran || !/^Stopping server failed|couldn't create connection to server/.test(message);
}

/** The connection's state after a start that failed: cancelling the install is the user's choice, not an error. */
export function stateAfterFailedStart(installCancelled: boolean): 'stopped' | 'failed' {
  return installCancelled ? 'stopped' : 'failed';
}

/** `MCP server "calc" failed (where): cause`: the server's error, naming the server once, in the extension's words. */
export function mcpFailureText(s: Pick<McpServerInfo, 'name' | 'error'>): string {
  const m = /^MCP server '([^']*)'(?: \(([^)]*)\))? failed: ([\s\S]*)$/.exec(s.error ?? '');
  if (!m) return `MCP server "${s.name}" failed: ${s.error ?? 'no reason given'}`;
  return `MCP server "${m[1]}" failed${m[2] ? ` (${m[2]})` : ''}: ${m[3]}`;
}

/** Why a server failed, on one line, without the "MCP server 'x' failed:" its row already says: the pick shows it whole. */
export function mcpFailureCause(error: string): string {
  const m = /^MCP server '[^']*'(?: \(([^)]*)\))? failed: ([\s\S]*)$/.exec(error);
  const cause = m ? `${m[2]}${m[1] ? ` (${m[1]})` : ''}` : error;
  return cause.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).join(' · ');
}

/**
 * What "Restart" says once the server has started again or not: ready with its tools; undefined when it failed (the
 * failure notification says why) or is still starting.
 */
export function mcpRestartedText(s: McpServerInfo | undefined): string | undefined {
  if (!s || s.status !== 'ready') return undefined;
  return `Sidecar: MCP server "${s.name}" restarted: ready, ${s.tools.length === 1 ? '1 tool' : `${s.tools.length} tools`}.`;
}
