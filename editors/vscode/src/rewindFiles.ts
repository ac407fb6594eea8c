/**
 * Rewind with files: the choice between the conversation alone and the conversation and files, the
 * confirmation that lists the files before anything changes, and the note after. Pure (no vscode import): unit-tested.
 */
import type { FileProblem } from './protocol';
import { firstWords, rewoundNote } from './wording';

/** What a rewind with restoreFiles would do (sidecar/previewRewind) or did (sidecar/rewind). */
export interface FilePlan {
  restored?: string[];
  removed?: string[];
  conflicts?: FileProblem[];
  skipped?: FileProblem[];
}

/** How many files a list shows before "… and N more". */
export const LIST_MAX = 12;

/** Any file the agent changed from that message on (to restore, remove, or that cannot be). */
export function touchesFiles(p: FilePlan | undefined): boolean {
  return !!p && !!(p.restored?.length || p.removed?.length || p.conflicts?.length || p.skipped?.length);
}

/** A path as the user reads it: relative to the workspace folder it is in, else as given. */
export function shortPath(p: string, roots: readonly string[] = []): string {
  for (const root of roots) {
    const r = root.replace(/[\\/]+$/, '');
    if (r && (p.startsWith(`${r}/`) || p.startsWith(`${r}\\`))) return p.slice(r.length + 1);
  }
  return p;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** One line of counts: "restores 2 files, removes 1 the agent created; 1 changed since the agent's edit". */
export function planCounts(p: FilePlan): string {
  const parts: string[] = [];
  if (p.restored?.length) parts.push(`restores ${plural(p.restored.length, 'file')}`);
  if (p.removed?.length) parts.push(`removes ${plural(p.removed.length, 'file')} the agent created`);
  const done = parts.join(', ');
  const left: string[] = [];
  if (p.conflicts?.length) left.push(`${plural(p.conflicts.length, 'file')} changed since the agent's edit (you choose next)`);
  if (p.skipped?.length) left.push(`${plural(p.skipped.length, 'file')} it cannot restore`);
  const all = [done, ...left].filter(Boolean).join('; ');
  return all ? all[0].toUpperCase() + all.slice(1) : 'No file to restore';
}

export type RewindMode = 'conversation' | 'files';

/** The two items of the Rewind choice (the pick after the message, or on the chat's per-message Rewind). */
export function rewindChoices(p: FilePlan): Array<{ label: string; detail: string; mode: RewindMode }> {
  return [
    { label: '$(discard) Rewind conversation', detail: 'The files stay as they are now.', mode: 'conversation' },
    { label: '$(history) Rewind conversation and files', detail: `${planCounts(p)}. The files are listed before anything changes.`, mode: 'files' },
  ];
}

function listLines(title: string, rows: string[]): string[] {
  if (!rows.length) return [];
  const shown = rows.slice(0, LIST_MAX).map((r) => `  ${r}`);
  if (rows.length > LIST_MAX) shown.push(`  … and ${rows.length - LIST_MAX} more`);
  return [title, ...shown];
}

/** The files of a plan, grouped, as lines (the modal's detail). */
export function planLines(p: FilePlan, roots: readonly string[] = []): string[] {
  const s = (x: string) => shortPath(x, roots);
  const problem = (x: FileProblem) => `${s(x.path)} — ${x.reason}`;
  const groups = [
    listLines('Put back as they were before your message:', (p.restored ?? []).map(s)),
    listLines('Removed (the agent created them):', (p.removed ?? []).map(s)),
    listLines('Changed since the agent\'s edit (kept unless you overwrite them):', (p.conflicts ?? []).map(problem)),
    listLines('Cannot be restored:', (p.skipped ?? []).map(problem)),
  ].filter((g) => g.length);
  return groups.flatMap((g, i) => (i ? ['', ...g] : g));
}

/** A button of the confirmation and whether it overwrites conflicting files (force). */
export interface ConfirmButton { title: string; force: boolean }

/** The confirmation before a rewind with files: its question, the file list, and its buttons (Cancel is VS Code's). */
export function confirmFiles(p: FilePlan, roots: readonly string[] = []): { message: string; detail: string; buttons: ConfirmButton[] } {
  const n = (p.restored?.length ?? 0) + (p.removed?.length ?? 0);
  const detail = planLines(p, roots).join('\n');
  if (p.conflicts?.length) {
    return {
      message: `${plural(p.conflicts.length, 'file')} changed since the agent's edit. Rewind the conversation and restore the files?`,
      detail,
      buttons: [
        { title: 'Restore others, keep conflicting files', force: false },
        { title: 'Overwrite my changes too', force: true },
      ],
    };
  }
  return {
    message: n ? `Rewind the conversation and restore ${plural(n, 'file')}?` : 'Rewind the conversation? No file can be restored.',
    detail,
    buttons: [{ title: n ? 'Rewind and Restore' : 'Rewind', force: false }],
  };
}

function names(paths: string[], roots: readonly string[]): string {
  const shown = paths.slice(0, 5).map((x) => shortPath(x, roots));
  return shown.join(', ') + (paths.length > 5 ? ` and ${paths.length - 5} more` : '');
}

/** What a rewind with files did, in one sentence per kind ('' for nothing). */
export function filesDone(r: FilePlan, roots: readonly string[] = []): string {
  const out: string[] = [];
  if (r.restored?.length) out.push(`Restored ${names(r.restored, roots)}.`);
  if (r.removed?.length) out.push(`Removed ${names(r.removed, roots)} (the agent had created ${r.removed.length === 1 ? 'it' : 'them'}).`);
  if (r.conflicts?.length) out.push(`Kept ${names(r.conflicts.map((c) => c.path), roots)} as you changed ${r.conflicts.length === 1 ? 'it' : 'them'} since the agent's edit.`);
  if (r.skipped?.length) out.push(`Could not restore ${r.skipped.slice(0, 5).map((x) => `${shortPath(x.path, roots)} (${x.reason})`).join(', ')}${r.skipped.length > 5 ? ` and ${r.skipped.length - 5} more` : ''}.`);
  return out.join(' ');
}

/** The chat note after a rewind with files: which message, what it means, and what happened to the files. */
export function rewoundFilesNote(text: string, r: FilePlan, roots: readonly string[] = []): string {
  const files = filesDone(r, roots) || 'No file needed restoring.';
  return `Rewound to before your message “${firstWords(text)}”: the model no longer sees it or anything after it `
    + `(the transcript keeps them, marked as rewound). ${files} Its text is back in the input box.`;
}

/** Per user message (sidecar/listCheckpoints, oldest first): how many files the agent changed from it on. */
export function filesFromHere(checkpoints: ReadonlyArray<{ messageId: string; files: ReadonlyArray<{ path: string }> }>): Map<string, number> {
  const out = new Map<string, number>();
  const seen = new Set<string>();
  for (let i = checkpoints.length - 1; i >= 0; i--) {
    for (const f of checkpoints[i].files) seen.add(f.path);
    out.set(checkpoints[i].messageId, seen.size);
  }
  return out;
}

/** The Rewind pick's description of a message: when it was sent, and the files changed from it on (if any). */
export function withFileCount(description: string, files: number | undefined): string {
  if (!files) return description;
  const count = `${plural(files, 'file')} changed from here on`;
  return description ? `${description} · ${count}` : count;
}

/** Said after a rewind when the checkpointing setting is off (sidecar/listCheckpoints `checkpointing: false`). */
export const CHECKPOINTING_OFF = 'Checkpointing is off (setting sidecar.checkpointing): the agent\'s edits made while it is off were not saved and cannot be restored.';

/** The chat note after any rewind: the files part for a rewind with files, and whether checkpointing is off. */
export function rewindNote(mode: RewindMode, text: string, r: FilePlan, roots: readonly string[], checkpointing: boolean | undefined): string {
  const note = mode === 'files' ? rewoundFilesNote(text, r, roots) : rewoundNote(text);
  return checkpointing === false ? `${note} ${CHECKPOINTING_OFF}` : note;
}

/** The Rewind pick lists your messages newest first: the one pre-selected is the last you sent (the usual target). */
export function newestFirst<T>(messages: readonly T[]): T[] {
  return [...messages].reverse();
}
