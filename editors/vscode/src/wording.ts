/**
 * What the extension tells the user about sessions, messages and pins, built from protocol data: short, with no
 * internal ids (message ids like `m10`, pin ids, full session UUIDs). Pure (no vscode import): unit-tested.
 */
import type { ReadyEvent } from './connection';

/** The chat note after a server (re)start; undefined for a first start with nothing to resume. */
export function restartNote(e: ReadyEvent): string | undefined {
  const what = e.crashed ? 'The sidecar restarted after a crash' : 'The sidecar restarted';
  if (!e.target) return e.crashed ? `${what}.` : undefined;
  if (e.resumed) return `${what}; the session was resumed.`;
  return `${what} but could not resume the session on screen (${e.resumeError ?? 'unknown error'}); this is a new, empty session.`;
}
