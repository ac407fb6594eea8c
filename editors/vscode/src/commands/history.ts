/** Fork Session and Rewind Session: both start at one of the user's messages. */
import * as vscode from 'vscode';
import { TranscriptMessage } from '../protocol';
import { rewoundNote, userMessagePick } from '../wording';
import { Cmd, Ctx } from './context';

/** A user message of the live session: the argument (its id), or picked from the transcript; null: the whole
 * session; undefined: none (dismissed, or nothing to pick). */
async function pickUserMessage(ctx: Ctx, arg: unknown, title: string, withWhole: boolean): Promise<TranscriptMessage | null | undefined> {
  const entries = (await ctx.api().getTranscript()).entries;
  const users = entries.filter((e): e is TranscriptMessage => e.type === 'message' && e.kind === 'user');
  if (typeof arg === 'string') return users.find((e) => e.id === arg) ?? { type: 'message', id: arg, time: '', role: 'user', kind: 'user', text: '' };
  const items: Array<vscode.QuickPickItem & { entry: TranscriptMessage | null }> = users
    .filter((e) => !e.rewound)
    .map((e) => ({ ...userMessagePick(e), entry: e }));
  if (withWhole) items.unshift({ label: '$(repo-forked) The whole session', description: 'everything so far', entry: null });
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

export function rewind(ctx: Ctx): Cmd {
  return async (messageIdArg?: unknown) => {
    const api = ctx.api();
    const target = await pickUserMessage(ctx, messageIdArg, 'Rewind to before…', false);
    if (!target) return;
    const r = await api.rewind({ messageId: target.id });
    await ctx.loadTranscript();
    ctx.chat.model.info(rewoundNote(r.text)); // the server's message names the message by its id
    ctx.chat.model.setDraft(r.text);
    await ctx.chat.reveal();
  };
}
