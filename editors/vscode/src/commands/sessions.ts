/** New, Resume, Rename and Delete Session, and the session pick they share (Restore: trash.ts). */
import * as vscode from 'vscode';
import { errorMessage, listAllSessions } from '../api';
import { SessionSummary } from '../protocol';
import { plural, sessionPickText } from '../status';
import { branchNote, sessionTitle } from '../wording';
import { Cmd, Ctx } from './context';
import { deletedToast } from './trash';

export function newSession(ctx: Ctx): Cmd {
  return async () => {
    const r = await ctx.api().newSession();
    ctx.chat.model.reset();
    ctx.chat.model.setPins([]);
    ctx.chat.model.info(`New session ${r.sessionId.slice(0, 8)} started.`);
    await ctx.chat.reveal();
  };
}

export function resumeSession(ctx: Ctx): Cmd {
  return async () => {
    const api = ctx.api();
    const sessions = await listAllSessions(api);
    if (!sessions.length) { void vscode.window.showInformationMessage('Sidecar: there are no saved sessions yet.'); return; }
    const pick = await pickSession(ctx, sessions, 'Resume Session', 'Pick a session to continue');
    if (!pick) return;
    const r = await api.resumeSession({ sessionId: pick.sessionId });
    await ctx.loadTranscript(r.sessionId);
    if (r.forked) {
      // the session is open in another window: this one continues in a new branch (the server's warning says so too)
      ctx.chat.model.info(branchNote(pick.title, r.sessionId));
    } else {
      ctx.chat.model.info(`Resumed session “${sessionTitle(pick.title)}” (${plural(r.messageCount, 'message')}).`);
    }
    await ctx.chat.reveal();
  };
}

export function renameSession(ctx: Ctx): Cmd {
  return async (sessionIdArg?: unknown) => {
    const api = ctx.api();
    const sessionId = typeof sessionIdArg === 'string' ? sessionIdArg : ctx.conn.sessionId;
    if (!sessionId) return;
    const current = (await listAllSessions(api)).find((s) => s.sessionId === sessionId);
    const title = await vscode.window.showInputBox({ title: 'Rename Session', value: current?.title ?? '', ignoreFocusOut: true });
    if (!title?.trim()) return;
    const r = await api.renameSession({ sessionId, title: title.trim() });
    void vscode.window.showInformationMessage(`Sidecar: session renamed to “${r.title}”.`);
  };
}

export function deleteSession(ctx: Ctx): Cmd {
  return async () => {
    const api = ctx.api();
    const others = (await listAllSessions(api)).filter((s) => s.sessionId !== ctx.conn.sessionId);
    if (!others.length) { void vscode.window.showInformationMessage('Sidecar: no other saved session to delete (the live one cannot be).'); return; }
    const pick = await vscode.window.showQuickPick(others.map((s) => sessionPickItem(s, ctx.conn.sessionId)), { title: 'Delete Session', placeHolder: 'It goes to the trash for 30 days' });
    if (!pick || !(await confirmDelete(pick.session))) return;
    void deletedToast(api, await api.deleteSession({ sessionId: pick.session.sessionId }));
  };
}

interface SessionPick extends vscode.QuickPickItem { session: SessionSummary }

const RENAME_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('edit'), tooltip: 'Rename' };
const DELETE_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete (to the trash for 30 days)' };

function sessionPickItem(s: SessionSummary, current: string | undefined): SessionPick {
  return {
    ...sessionPickText(s, current, sessionTitle(s.title)),
    buttons: s.sessionId === current ? [RENAME_BUTTON] : [RENAME_BUTTON, DELETE_BUTTON],
    session: s,
  };
}

/** Asked before a session goes to the trash (from the palette and from a pick's button alike). */
async function confirmDelete(s: SessionSummary): Promise<boolean> {
  const ok = await vscode.window.showWarningMessage(
    `Delete session “${sessionTitle(s.title)}”? It goes to the trash for 30 days.`, { modal: true }, 'Delete');
  return ok === 'Delete';
}

/**
 * A quick pick of sessions with a rename and a delete button on each; resolves to the one picked (undefined when
 * dismissed). Renames and deletions happen in place and refresh the list.
 */
function pickSession(ctx: Ctx, sessions: SessionSummary[], title: string, placeHolder: string): Promise<SessionSummary | undefined> {
  const api = ctx.api();
  const qp = vscode.window.createQuickPick<SessionPick>();
  Object.assign(qp, { title, placeholder: placeHolder, matchOnDescription: true, matchOnDetail: true });
  const show = (list: SessionSummary[]) => { qp.items = list.map((s) => sessionPickItem(s, ctx.conn.sessionId)); };
  show(sessions);
  return new Promise((resolve) => {
    let done = false;
    let acting = false; // a rename box or a delete confirmation hides the pick for a moment: not a dismissal
    const finish = (value: SessionSummary | undefined) => { if (!done) { done = true; resolve(value); qp.dispose(); } };
    qp.onDidAccept(() => finish(qp.selectedItems[0]?.session));
    qp.onDidHide(() => { if (!acting) finish(undefined); });
    qp.onDidTriggerItemButton(async ({ item, button }) => {
      acting = true;
      try {
        if (button === RENAME_BUTTON) {
          const newTitle = await vscode.window.showInputBox({ title: 'Rename Session', value: item.session.title ?? '', ignoreFocusOut: true });
          if (newTitle?.trim()) await api.renameSession({ sessionId: item.session.sessionId, title: newTitle.trim() });
        } else if (button === DELETE_BUTTON) {
          if (await confirmDelete(item.session)) void deletedToast(api, await api.deleteSession({ sessionId: item.session.sessionId }));
        }
      } catch (e) {
        void vscode.window.showErrorMessage(`Sidecar: ${errorMessage(e)}`);
      }
      if (done) return;
      try { show(await listAllSessions(api)); } finally { acting = false; }
      qp.show();
    });
    qp.show();
  });
}
