/**
 * What the user reads about the agent's memory (GEMINI.md / AGENTS.md context files): the tooltip line, the Show
 * Memory document, the untrusted-workspace notice, the Add to Memory choices. Pure (no vscode import: unit-tested).
 */
import { AddMemoryParams, MemoryFile, MemoryInfo } from './protocol';
import { exact, plural } from './status';
import { fence } from './transcript';

export type AddScope = NonNullable<AddMemoryParams['scope']>;

const SCOPE_LABEL: Record<MemoryFile['scope'], string> = {
  global: 'global (every project)',
  project: 'project',
  subdirectory: 'subfolder (delivered with a tool result under it)',
};

/** "Memory: 2 files (1,234 tokens)", plus "; 3 project files not loaded" when some were skipped. */
export function memorySummary(m: MemoryInfo): string {
  const loaded = m.files.length ? `${plural(m.files.length, 'file')} (${exact(m.tokens)} tokens)` : 'no context files';
  const skipped = m.skippedProjectFiles > 0 ? `; ${plural(m.skippedProjectFiles, 'project file')} not loaded` : '';
  return `Memory: ${loaded}${skipped}`;
}

/**
 * Each file's content, from the wrapped text the model gets (`--- Context from: <path> ---` … `--- End of Context
 * from: <path> ---`). A file whose markers are not found is absent from the map (the caller shows the whole text).
 */
export function contentsByPath(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const begin = /^--- Context from: (.+) ---$/gm;
  for (let m = begin.exec(text); m; m = begin.exec(text)) {
    const file = m[1];
    const endMarker = `\n--- End of Context from: ${file} ---`;
    const start = m.index + m[0].length + 1;
    const end = text.indexOf(endMarker, start - 1);
    if (end < 0) continue;
    out.set(file, text.slice(start, Math.max(start, end)));
    begin.lastIndex = end + endMarker.length;
  }
  return out;
}

const DEFAULT_REASON = 'the workspace is not trusted, and they are instructions written by whoever wrote the repository';

/** The untrusted-workspace sentence: how many project files, and why they were not loaded. */
export function skippedText(m: MemoryInfo): string | undefined {
  if (m.skippedProjectFiles <= 0) return undefined;
  const n = m.skippedProjectFiles;
  const why = (m.skippedReason || DEFAULT_REASON).replace(/[.\s]+$/, '');
  return `${plural(n, 'project memory file')} ${n === 1 ? 'was' : 'were'} not loaded: ${why}.`;
}

/** Sidecar: Show Memory — every file (path, scope, tokens) and its content, in the order the model sees them. */
export function memoryMarkdown(m: MemoryInfo): string {
  const parts = ['# Sidecar memory', ''];
  parts.push(m.files.length
    ? `${plural(m.files.length, 'context file')}, ${exact(m.tokens)} tokens, in the order the model sees them (global ones in the system instruction, the project's in the session context).`
    : 'No context files are loaded. Instructions for the agent go in `~/.gemini/GEMINI.md` (every project) or in `GEMINI.md` / `AGENTS.md` at the project root; **Sidecar: Add to Memory…** appends one.');
  parts.push('');
  const skipped = skippedText(m);
  if (skipped) parts.push(`> **Not loaded:** ${skipped}`, '');
  if (m.files.length) {
    parts.push('| # | File | Scope | Tokens |', '|---|---|---|---|');
    m.files.forEach((f, i) => parts.push(`| ${i + 1} | \`${f.path.replace(/[|`]/g, (c) => `\\${c}`)}\` | ${f.scope} | ${exact(f.tokens)} |`));
    parts.push('');
  }
  const contents = contentsByPath(m.text);
  m.files.forEach((f, i) => {
    parts.push(`## ${i + 1}. ${f.path}`, '', `_${SCOPE_LABEL[f.scope] ?? f.scope} · ${exact(f.tokens)} tokens_`, '');
    const content = contents.get(f.path);
    parts.push(content === undefined ? '_(its text is in the full text below)_' : fence(content), '');
  });
  if (m.files.some((f) => !contents.has(f.path))) parts.push('## The text the model gets', '', fence(m.text), '');
  return parts.join('\n');
}

/** Tell the untrusted notice once per window: when files are skipped and it was not told since they last loaded. */
export function skippedNotice(told: boolean, m: MemoryInfo): { notice?: string; told: boolean } {
  const text = skippedText(m);
  if (!text) return { told: false }; // trusted now (or nothing to skip): a later skip is told again
  const them = m.skippedProjectFiles === 1 ? 'it' : 'them';
  return told ? { told } : { notice: `Sidecar: ${text} Trust the workspace to load ${them}.`, told: true };
}

/** The scope pick of Add to Memory: an untrusted workspace's memory is not loaded, so it is not offered there. */
export function addScopeItems(trusted = true): Array<{ label: string; description: string; detail: string; scope: AddScope }> {
  const global = { label: 'Global', description: '~/.gemini/GEMINI.md', detail: 'Every project: your own preferences and habits', scope: 'global' as const };
  const project = { label: 'Project', description: 'GEMINI.md at the project root', detail: 'This project only (created when missing; others who clone it see it if you commit it)', scope: 'project' as const };
  return trusted ? [global, project] : [global];
}

/** After addMemory: where the fact went (the file as loaded now, when it is listed) and the new totals. */
export function addedMessage(scope: AddScope, m: MemoryInfo): string {
  const file = m.files.find((f) => f.scope === scope && /(^|[\\/])GEMINI\.md$/.test(f.path));
  const where = file ? file.path : scope === 'global' ? '~/.gemini/GEMINI.md' : 'the project GEMINI.md';
  return `Sidecar: added to ${scope} memory (${where}). ${memorySummary(m)}.`;
}
