/**
 * Steering a compaction: Summarise up to Here, Preview Compaction (an editable document, then Apply or Discard) and
 * Rate Compaction. The server checks everything (message ids, stale previews, the edited text); these show it.
 */
import * as vscode from 'vscode';
import { errorCode, errorMessage } from '../api';
import { ErrorCode, PreviewCompactionResult } from '../protocol';

type CompactionRating = 'good' | 'lost';
import { Cmd, Ctx } from './context';
import { pickUserMessage } from './history';

/** The preview being read: its id and the document the user may edit. */
interface OpenPreview { previewId: string; document: vscode.TextDocument; proposed: string }
let current: OpenPreview | undefined;

/** Run a manual compaction request with the notification progress and the usual error words (as Compress). */
async function withCompressProgress<T>(ctx: Ctx, title: string, run: (token: vscode.CancellationToken) => Promise<T>): Promise<T | undefined> {
  ctx.status.setCompressing(true);
  try {
    return await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Sidecar: ${title}`, cancellable: true },
      (progress, token) => ctx.conn.progress.withCompressSink(progress, () => run(token)),
    );
  } catch (e) {
    const code = errorCode(e);
    if (code === ErrorCode.requestCancelled) void vscode.window.showInformationMessage('Sidecar: cancelled; the conversation is unchanged.');
    else void vscode.window.showWarningMessage(`Sidecar: ${errorMessage(e)}`);
    return undefined;
  } finally {
    ctx.status.setCompressing(false);
  }
}

/** Summarise up to Here (the chat passes the message id; the palette picks one): everything before it becomes the summary. */
export function compressUpTo(ctx: Ctx): Cmd {
  return async (messageIdArg?: unknown) => {
    const target = await pickUserMessage(ctx, messageIdArg, 'Summarise everything before…', false);
    if (!target) return;
    const before = ctx.compressedSeen;
    const r = await withCompressProgress(ctx, 'Summarising up to your message', (token) => ctx.api().compress({ upToMessageId: target.id }, token));
    if (r && ctx.compressedSeen === before) ctx.showOutcome(r.status, r.message);
  };
}

/** Preview Compaction: the proposed summary in an editable document, with Apply and Discard. */
export function previewCompaction(ctx: Ctx): Cmd {
  return async (messageIdArg?: unknown) => {
    let upTo: string | undefined;
    let focus = '';
    if (typeof messageIdArg === 'string') upTo = messageIdArg;
    else {
      const asked = await vscode.window.showInputBox({
        title: 'Preview Compaction',
        prompt: 'Optional: what should the summary keep in focus? Nothing changes until you apply the summary.',
        placeHolder: 'e.g. the API design decisions and the failing test',
        ignoreFocusOut: true,
      });
      if (asked === undefined) return;
      focus = asked.trim();
    }
    const params = { ...(focus ? { instructions: focus } : {}), ...(upTo ? { upToMessageId: upTo } : {}) };
    const r = await withCompressProgress(ctx, 'Preparing a summary to preview', (token) => ctx.api().previewCompaction(params, token));
    if (!r) return;
    await showPreview(ctx, r);
  };
}

async function showPreview(ctx: Ctx, r: PreviewCompactionResult): Promise<void> {
  if (!r.previewId || r.snapshot === null) { ctx.showOutcome(r.status, r.message); return; }
  await closePreview();
  const document = await vscode.workspace.openTextDocument({ content: r.snapshot, language: 'xml' });
  current = { previewId: r.previewId, document, proposed: r.snapshot };
  await vscode.commands.executeCommand('setContext', 'sidecar.compactionPreview', true);
  await vscode.window.showTextDocument(document, { preview: false });
  const previewId = r.previewId;
  void vscode.window
    .showInformationMessage(`${r.message} Edit the document if you like, then Apply (“Sidecar: Apply Compaction Preview”).`, 'Apply', 'Discard')
    .then((choice) => {
      if (current?.previewId !== previewId) return;
      if (choice === 'Apply') void vscode.commands.executeCommand('sidecar.applyCompactionPreview');
      else if (choice === 'Discard') void vscode.commands.executeCommand('sidecar.discardCompactionPreview');
    });
}

/** Close the preview's document without asking to save it (it is an untitled document). */
async function closePreview(): Promise<void> {
  const open = current;
  current = undefined;
  await vscode.commands.executeCommand('setContext', 'sidecar.compactionPreview', false);
  if (!open || open.document.isClosed) return;
  await vscode.window.showTextDocument(open.document, { preview: false });
  await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
}

/** Apply Compaction Preview: the document's text (edited or not) replaces the history it summarises. */
export function applyCompactionPreview(ctx: Ctx): Cmd {
  return async () => {
    const open = current;
    if (!open) { void vscode.window.showInformationMessage('Sidecar: there is no compaction preview to apply; run “Sidecar: Preview Compaction”.'); return; }
    const text = open.document.isClosed ? open.proposed : open.document.getText();
    const before = ctx.compressedSeen;
    const r = await withCompressProgress(ctx, 'Applying the summary', (token) =>
      ctx.api().applyCompaction({ previewId: open.previewId, snapshot: text }, token));
    if (!r) return; // refused (stale, malformed edit): the document stays open to fix or discard
    await closePreview();
    if (ctx.compressedSeen === before) ctx.showOutcome(r.status, r.message);
  };
}

/** Discard Compaction Preview: close the document; the history stays as it is. */
export function discardCompactionPreview(_ctx: Ctx): Cmd {
  return async () => {
    if (!current) return;
    await closePreview();
    void vscode.window.showInformationMessage('Sidecar: summary discarded; the conversation is unchanged.');
  };
}

/** Rate Compaction (the chat's compaction card passes the id and the rating): good, or lost something with a note. */
export function rateCompaction(ctx: Ctx): Cmd {
  return async (compactionIdArg?: unknown, ratingArg?: unknown) => {
    let rating = ratingArg === 'good' || ratingArg === 'lost' ? (ratingArg as CompactionRating) : undefined;
    if (!rating) {
      const pick = await vscode.window.showQuickPick(
        [
          { label: '$(thumbsup) Good', description: 'the summary kept what mattered', rating: 'good' as const },
          { label: '$(thumbsdown) Lost something', description: 'say what it lost', rating: 'lost' as const },
        ],
        { title: 'Rate the compaction’s summary' },
      );
      if (!pick) return;
      rating = pick.rating;
    }
    let note: string | undefined;
    if (rating === 'lost') {
      note = await vscode.window.showInputBox({ title: 'What did the summary lose?', prompt: 'Optional: a note kept with the rating.', ignoreFocusOut: true });
      if (note === undefined) return;
    }
    const compactionId = typeof compactionIdArg === 'string' ? compactionIdArg : undefined;
    try {
      const r = await ctx.api().rateCompaction({ rating, ...(compactionId ? { compactionId } : {}), ...(note?.trim() ? { note: note.trim() } : {}) });
      ctx.chat.model.rated(r.compactionId, r.rating);
      void vscode.window.showInformationMessage(`Sidecar: ${r.message}`);
    } catch (e) {
      void vscode.window.showWarningMessage(`Sidecar: ${errorMessage(e)}`);
    }
  };
}
