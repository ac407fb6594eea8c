/** "Sidecar: Show Transcript": a session's recording as a Markdown document. Pure. */
import { GetTranscriptResult, TranscriptEntry } from './protocol';
import { exact, statusLabel } from './status';

const ROLE: Record<string, string> = {
  user: 'You', model: 'Gemini', toolCall: 'Tool call', toolResult: 'Tool result', ideContext: 'Editor context',
  info: 'Note', error: 'Error', summary: 'Summary',
};

export function fence(text: string): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}\n${text}\n${ticks}`;
}

function entry(e: TranscriptEntry): string {
  if (e.type === 'compaction') {
    const result = e.status === 'COMPRESSED'
      ? `${exact(e.originalTokenCount)} → ${exact(e.newTokenCount)} tokens`
      : statusLabel(e.status);
    const edited = e.edited ? ', your edited summary' : '';
    const rated = e.rating ? ` · rated ${e.rating === 'good' ? 'good' : 'lost something'}${e.ratingNote ? `: ${e.ratingNote}` : ''}` : '';
    const line = `> **Compaction** (${e.trigger}${e.undone ? ', undone' : ''}${edited}) — ${result} · ${e.time}${rated}`;
    const snapshot = e.snapshot ? `\n\n**Summary the model continues from** (\`<state_snapshot>\`):\n\n${fence(e.snapshot)}` : '';
    return `---\n\n${line}${snapshot}\n\n---`;
  }
  if (e.type === 'fork') return `---\n\n> **Branch** of session ${e.parentSessionId} starts here · ${e.time}\n\n---`;
  const head = `### ${ROLE[e.kind] ?? e.kind} · ${e.time}${e.rewound ? ' · rewound (the model no longer sees it)' : ''}${e.masked ? ' · masked (the model sees previews; the full outputs are saved)' : ''}`;
  const body = e.kind === 'user' || e.kind === 'model' || e.kind === 'info' || e.kind === 'error' ? e.text : fence(e.text);
  return `${head}\n\n${body}`;
}

export function transcriptMarkdown(t: GetTranscriptResult): string {
  const parts = [`# Sidecar session ${t.sessionId}`, '', `${t.entries.length} entries`, ''];
  for (const e of t.entries) parts.push(entry(e), '');
  return parts.join('\n');
}
