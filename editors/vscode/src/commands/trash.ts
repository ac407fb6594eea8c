/** Deleting goes to the trash; Restore (the delete toast's button, "Sidecar: Restore Deleted Session") brings it back. */
import * as vscode from 'vscode';
import { errorMessage } from '../api';
import { DeleteSessionResult, SidecarApi } from '../protocol';
import { deletedPick } from '../wording';
import { Cmd, Ctx } from './context';

export const RESTORE = 'Restore';

/** The toast after a deletion, with a Restore button that undoes it. */
export async function deletedToast(api: SidecarApi, result: DeleteSessionResult): Promise<void> {
  const choice = await vscode.window.showInformationMessage(result.message, RESTORE);
  if (choice !== RESTORE) return;
  try {
    void vscode.window.showInformationMessage((await api.restoreSession({ sessionId: result.sessionId })).message);
  } catch (e) {
    void vscode.window.showErrorMessage(`Sidecar: ${errorMessage(e)}`);
  }
}

export function restoreDeletedSession(ctx: Ctx): Cmd {
  return async () => {
    const api = ctx.api();
    const trash = await api.listDeletedSessions();
    if (!trash.sessions.length) { void vscode.window.showInformationMessage('Sidecar: no deleted session to restore.'); return; }
    const pick = await vscode.window.showQuickPick(trash.sessions.map(deletedPick), {
      title: 'Restore Deleted Session', placeHolder: `Deleted sessions are kept ${trash.keepDays} days`, matchOnDescription: true,
    });
    if (!pick) return;
    void vscode.window.showInformationMessage((await api.restoreSession({ sessionId: pick.sessionId })).message);
  };
}
