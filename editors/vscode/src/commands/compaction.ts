/** Compress Conversation and Undo Last Compaction. */
import * as vscode from 'vscode';
import { errorCode, errorMessage } from '../api';
import { ErrorCode } from '../protocol';
import { Cmd, Ctx } from './context';

/** Compress now, with optional focus instructions (the argument, else asked for). */
export function compress(ctx: Ctx): Cmd {
  return async (instructionsArg?: unknown) => {
    const api = ctx.api();
    let instructions = typeof instructionsArg === 'string' ? instructionsArg : undefined;
    if (instructions === undefined) {
      instructions = await vscode.window.showInputBox({
        title: 'Compress Conversation',
        prompt: 'Optional: what should the summary keep in focus? Leave empty for a general summary.',
        placeHolder: 'e.g. the API design decisions and the failing test',
        ignoreFocusOut: true,
      });
      if (instructions === undefined) return; // Escape: cancelled
    }
    const focus = instructions.trim();
    const before = ctx.compressedSeen;
    ctx.status.setCompressing(true);
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Sidecar: Compressing conversation', cancellable: true },
        (progress, token) => ctx.conn.progress.withCompressSink(progress, () => api.compress(focus ? { instructions: focus } : {}, token)),
      );
      // servers announce the outcome with sidecar/compressed; show the result's message if none came
      if (ctx.compressedSeen === before && result?.message) ctx.showOutcome(result.status, result.message);
    } catch (e) {
      const code = errorCode(e);
      if (code === ErrorCode.requestCancelled) void vscode.window.showInformationMessage('Sidecar: compaction cancelled; the conversation is unchanged.');
      else if (code === ErrorCode.busy) void vscode.window.showInformationMessage(`Sidecar: ${errorMessage(e)}`);
      else if (code === ErrorCode.methodNotFound) void vscode.window.showWarningMessage('Sidecar: this sidecar version cannot compress conversations yet.');
      else throw e;
    } finally {
      ctx.status.setCompressing(false);
    }
  };
}

export function undoCompaction(ctx: Ctx): Cmd {
  return async () => {
    const r = await ctx.api().undoCompaction();
    if (r.restored) {
      ctx.status.setUndone();
      void vscode.window.showInformationMessage(r.message);
      await ctx.loadTranscript();
    } else {
      void vscode.window.showWarningMessage(r.message);
    }
  };
}
