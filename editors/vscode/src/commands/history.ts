/** Fork Session and Rewind Session: both start at one of the user's messages. */
import * as vscode from 'vscode';
import { errorCode } from '../api';
import { ErrorCode, ListCheckpointsResult, PreviewRewindResult, SidecarApi, TranscriptMessage } from '../protocol';
import { confirmFiles, filesDone, filesFromHere, newestFirst, RewindMode, rewindChoices, rewindNote, touchesFiles, withFileCount } from '../rewindFiles';
import { firstWords, userMessagePick } from '../wording';
import { Cmd, Ctx } from './context';

/** A user message of the live session: the argument (its id), or picked from the transcript; null: the whole
 * session; undefined: none (dismissed, or nothing to pick). */
export async function pickUserMessage(ctx: Ctx, arg: unknown, title: string, withWhole: boolean, fileCounts?: Map<string, number>): Promise<TranscriptMessage | null | undefined> {
  const entries = (await ctx.api().getTranscript()).entries;
  const users = entries.filter((e): e is TranscriptMessage => e.type === 'message' && e.kind === 'user');
  if (typeof arg === 'string') return users.find((e) => e.id === arg) ?? { type: 'message', id: arg, time: '', role: 'user', kind: 'user', text: '' };
  const items: Array<vscode.QuickPickItem & { entry: TranscriptMessage | null }> = users
    .filter((e) => !e.rewound)
    .map((e) => {
      const item = userMessagePick(e);
      return { ...item, description: withFileCount(item.description, fileCounts?.get(e.id)), entry: e };
    });
  if (withWhole) items.unshift({ label: '$(repo-forked) The whole session', description: 'everything so far', entry: null });
  else items.splice(0, items.length, ...newestFirst(items)); // Rewind: the newest message first, pre-selected
  if (!items.length) { void vscode.window.showInformationMessage('Sidecar: no message of yours in this session yet.'); return undefined; }
  const pick = await vscode.window.showQuickPick(items, { title, placeHolder: 'Pick one of your messages' });
  return pick === undefined ? undefined : pick.entry;
}

export function forkSession(ctx: Ctx): Cmd {
  return async (messageIdArg?: unknown) => {
    const api = ctx.api();
    const before = await pickUserMessage(ctx, messageIdArg, 'Fork Session before…', true);
    if (before === undefined) return;
    const r = await api.forkSession(before ? { beforeMessageId: before.id } : {});
    await ctx.loadTranscript(r.sessionId);
    ctx.chat.model.info(`Forked into a new session ${r.sessionId.slice(0, 8)} (${r.messageCount} messages from ${r.parentSessionId.slice(0, 8)}, which is unchanged).`);
    if (before?.text) ctx.chat.model.setDraft(before.text); // the message it was cut before, to edit and send, as Rewind does
    await ctx.chat.reveal();
  };
}

/** The live session's checkpoints (undefined: a server without them). */
async function listCheckpoints(api: SidecarApi): Promise<ListCheckpointsResult | undefined> {
  try { return await api.listCheckpoints(); } catch { return undefined; }
}

/** What a rewind with files would do now; undefined from a server that cannot restore files. */
async function previewFiles(api: SidecarApi, messageId: string): Promise<PreviewRewindResult | undefined> {
  try {
    return await api.previewRewind({ messageId });
  } catch (e) {
    if (errorCode(e) === ErrorCode.methodNotFound) return undefined;
    throw e;
  }
}

function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

/**
 * Rewind Session (also the chat's per-message Rewind, which passes the message id): pick a message; when the agent
 * changed files from it on, choose the conversation only or the conversation and files; for files, a modal lists what
 * is put back, removed, left (changed since: keep them or overwrite them) and cannot be restored, before anything runs.
 */
export function rewind(ctx: Ctx): Cmd {
  return async (messageIdArg?: unknown) => {
    const api = ctx.api();
    const checkpoints = await listCheckpoints(api);
    const counts = checkpoints && typeof messageIdArg !== 'string' ? filesFromHere(checkpoints.checkpoints) : undefined;
    const target = await pickUserMessage(ctx, messageIdArg, 'Rewind to before…', false, counts);
    if (!target) return;
    const roots = workspaceRoots();
    const plan = await previewFiles(api, target.id);
    let mode: RewindMode = 'conversation';
    let force = false;
    if (plan && touchesFiles(plan)) {
      const choice = await vscode.window.showQuickPick(rewindChoices(plan), {
        title: `Rewind to before “${firstWords(plan.text || target.text)}”`,
        placeHolder: 'The agent changed files since: the conversation only, or the files too?',
      });
      if (!choice) return;
      mode = choice.mode;
      if (mode === 'files') {
        const c = confirmFiles(plan, roots);
        const button = await vscode.window.showWarningMessage(c.message, { modal: true, detail: c.detail }, ...c.buttons);
        if (!button) return;
        force = button.force;
      }
    }
    const r = await api.rewind(mode === 'files' ? { messageId: target.id, restoreFiles: true, force } : { messageId: target.id });
    await ctx.loadTranscript();
    ctx.chat.model.info(rewindNote(mode, r.text, r, roots, checkpoints?.checkpointing)); // not the server's message: it names the message by its id
    if (mode === 'files' && (r.conflicts?.length || r.skipped?.length)) void vscode.window.showWarningMessage(`Sidecar: ${filesDone(r, roots)}`);
    ctx.chat.model.setDraft(r.text);
    await ctx.chat.reveal();
  };
}
