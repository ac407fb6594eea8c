/** Fork Session and Rewind Session: both start at one of the user's messages. */
import * as vscode from 'vscode';
import { Cmd, Ctx } from './context';

/** A user message of the live session: the argument, or picked from the transcript (null: the whole session). */
async function pickUserMessage(ctx: Ctx, arg: unknown, title: string, withWhole: boolean): Promise<string | null | undefined> {
  if (typeof arg === 'string') return arg;
  const entries = (await ctx.api().getTranscript()).entries;
  const items: Array<vscode.QuickPickItem & { id: string | null }> = entries
    .filter((e) => e.type === 'message' && e.kind === 'user' && !e.rewound)
    .map((e) => ({ label: e.type === 'message' ? e.text.split('\n')[0].slice(0, 120) : '', description: e.id, id: e.id }));
  if (withWhole) items.unshift({ label: '$(repo-forked) The whole session', description: 'everything so far', id: null });
  if (!items.length) { void vscode.window.showInformationMessage('Sidecar: no message of yours in this session yet.'); return undefined; }
  const pick = await vscode.window.showQuickPick(items, { title, placeHolder: 'Pick one of your messages' });
  return pick === undefined ? undefined : pick.id;
}

export function forkSession(ctx: Ctx): Cmd {
  return async (messageIdArg?: unknown) => {
    const api = ctx.api();
    const messageId = await pickUserMessage(ctx, messageIdArg, 'Fork Session before…', true);
    if (messageId === undefined) return;
    const r = await api.forkSession(messageId ? { beforeMessageId: messageId } : {});
    await ctx.loadTranscript(r.sessionId);
    ctx.chat.model.info(`Forked into a new session ${r.sessionId.slice(0, 8)} (${r.messageCount} messages from ${r.parentSessionId.slice(0, 8)}, which is unchanged).`);
    await ctx.chat.reveal();
  };
}

export function rewind(ctx: Ctx): Cmd {
  return async (messageIdArg?: unknown) => {
    const api = ctx.api();
    const messageId = await pickUserMessage(ctx, messageIdArg, 'Rewind to before…', false);
    if (!messageId) return;
    const r = await api.rewind({ messageId });
    await ctx.loadTranscript();
    ctx.chat.model.info(r.message);
    ctx.chat.model.setDraft(r.text);
    await ctx.chat.reveal();
  };
}
