/**
 * What the extension tells the user about sessions, messages and pins, built from protocol data: short, with no
 * internal ids (message ids like `m10`, pin ids, full session UUIDs). Pure (no vscode import): unit-tested.
 */
import type { ReadyEvent } from './connectionTypes';

/** The chat note after a server (re)start; undefined for a first start with nothing to resume. */
export function restartNote(e: ReadyEvent): string | undefined {
  const what = e.crashed ? 'The sidecar restarted after a crash' : 'The sidecar restarted';
  if (!e.target) return e.crashed ? `${what}.` : undefined;
  if (e.resumed) return `${what}; the session was resumed.`;
  return `${what} but could not resume the session on screen (${e.resumeError ?? 'unknown error'}); this is a new, empty session.`;
}

/** A message's text on one line, cut at a word near `max` characters with an ellipsis. */
export function firstWords(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const space = flat.lastIndexOf(' ', max);
  return `${flat.slice(0, space > max / 2 ? space : max)}…`;
}

/** An ISO time as the user's locale writes a short date and time ('' when it is not a time). */
export function shortTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });
}

/** A user message in a pick (Fork, Rewind): its first words and when it was sent, never its id. */
export function userMessagePick(e: { id: string; text: string; time: string }): { label: string; description: string; id: string } {
  return { label: firstWords(e.text, 120), description: shortTime(e.time), id: e.id };
}

/** The chat note after a rewind: which message (its words), and what it means. */
export function rewoundNote(text: string): string {
  return `Rewound to before your message “${firstWords(text)}”: the model no longer sees it or anything after it `
    + '(the transcript keeps them, marked as rewound). Files the agent changed were not touched. Its text is back in the input box.';
}

/** The chat note when a resumed session was open in another window and this one continues in a branch of it. */
export function branchNote(title: string | null | undefined, branchId: string): string {
  const which = title ? `“${firstWords(title)}”` : 'The session';
  return `${which} is open in another window; this window continues in a new branch (${branchId.slice(0, 8)}). Both windows' messages are kept.`;
}

/** A session's title in lists. */
export function sessionTitle(title: string | null | undefined): string {
  return title?.trim() || '(no title)';
}

/** A pinned fact in a pick: the start of its text as the label and the rest (if any) below it — never twice. */
export function pinPick(p: { pinId: string; text: string }): { label: string; detail?: string; pinId: string } {
  const flat = p.text.replace(/\s+/g, ' ').trim();
  const label = firstWords(flat, 120);
  if (label === flat) return { label, pinId: p.pinId };
  const rest = flat.slice(label.length - 1).trim(); // label ends with the ellipsis
  return { label, detail: `…${rest}`, pinId: p.pinId };
}

/** Why a server did not start: its own last words, else what the transport saw in words (never only the JSON-RPC
 * symptom "Pending response rejected since connection got disposed"). */
export function startFailureCause(lastServerLine: string, error: string, exit?: string): string {
  if (lastServerLine) return lastServerLine;
  if (/connection got disposed|connection is closed|pending response rejected/i.test(error)) {
    return `the server exited before it answered${exit ? ` (${exit})` : ''}, and printed nothing`;
  }
  return error;
}

/** A deleted session in the Restore pick: its title, and when it was deleted and how long it had grown. */
export function deletedPick(s: { sessionId: string; title: string | null; deletedAt: string; messageCount: number; parentSessionId?: string | null }):
  { label: string; description: string; sessionId: string } {
  const count = `${s.messageCount} message${s.messageCount === 1 ? '' : 's'}`;
  const when = shortTime(s.deletedAt);
  return {
    label: `${s.parentSessionId ? '$(repo-forked) ' : ''}${sessionTitle(s.title)}`,
    description: `${when ? `deleted ${when} · ` : ''}${count} · ${s.sessionId.slice(0, 8)}`,
    sessionId: s.sessionId,
  };
}

/** The chat's empty state names the backend in use before the first reply; '' while unknown. */
export function backendNote(backend: string | null | undefined): string {
  if (!backend) return '';
  if (/embedded fake/i.test(backend)) {
    return 'Replies come from the embedded fake Gemini (offline, no API key). Run Sidecar: Set API Key to talk to Gemini.';
  }
  return `Replies come from ${backend}.`;
}
