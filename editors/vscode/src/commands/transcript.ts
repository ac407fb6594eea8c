/** Show Transcript: the live session's whole recording as a read-only Markdown document. */
import * as vscode from 'vscode';
import { transcriptMarkdown } from '../transcript';
import { Cmd, Ctx } from './context';

const TRANSCRIPT_SCHEME = 'sidecar-transcript';

/** One document per session (never "unsaved changes" on close): running the command again refreshes the same tab. */
export function showTranscript(ctx: Ctx): Cmd {
  const transcripts = new Map<string, string>();
  const changed = new vscode.EventEmitter<vscode.Uri>();
  ctx.own(changed);
  ctx.own(vscode.workspace.registerTextDocumentContentProvider(TRANSCRIPT_SCHEME, {
    onDidChange: changed.event,
    provideTextDocumentContent: (uri) => transcripts.get(uri.toString()) ?? '',
  }));
  return async () => {
    const t = await ctx.api().getTranscript();
    const uri = vscode.Uri.from({ scheme: TRANSCRIPT_SCHEME, path: `/Sidecar transcript ${t.sessionId.slice(0, 8)}.md` });
    const known = transcripts.has(uri.toString());
    transcripts.set(uri.toString(), transcriptMarkdown(t));
    if (known) changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  };
}
