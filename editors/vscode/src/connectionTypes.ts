/** What the connection tells the rest of the extension, as types only: modules that word or show it (wording.ts,
 * statusBar.ts) depend on these, not on the connection itself. */

/** A server answered after a start: `target` is the session it was to resume (none on a first start), `resumed` the
 * one it continues, `resumeError` why it could not; `crashed` when the process had died. */
export interface ReadyEvent { crashed: boolean; target?: string; resumed?: string; resumeError?: string }

export type ConnectionState = 'stopped' | 'starting' | 'installing' | 'running' | 'restarting' | 'failed';
