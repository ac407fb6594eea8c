/** The server and its key: Set/Clear API Key, Show Log, Restart and Reinstall Server, and Open Chat. */
import * as vscode from 'vscode';
import { Cmd, Ctx } from './context';

export function setApiKey(ctx: Ctx): Cmd {
  return async () => {
    const has = await ctx.conn.hasApiKey();
    const key = await vscode.window.showInputBox({
      title: 'Sidecar: Gemini API key',
      prompt: has ? 'A key is stored. Enter a new key to replace it.' : 'Stored in VS Code’s secret storage, never in settings.json.',
      placeHolder: 'AIza…',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() && /\s/.test(v.trim()) ? 'An API key has no spaces' : undefined),
    });
    if (key === undefined || !key.trim()) return;
    await ctx.conn.setApiKey(key.trim()); // secrets.onDidChange pushes the settings
    void vscode.window.showInformationMessage('Sidecar: API key saved in the secret storage.');
  };
}

export function clearApiKey(ctx: Ctx): Cmd {
  return async () => {
    await ctx.conn.setApiKey(undefined);
    void vscode.window.showInformationMessage('Sidecar: API key removed.');
  };
}

export const showLog = (ctx: Ctx): Cmd => () => ctx.conn.output.show(true);
export const restartServer = (ctx: Ctx): Cmd => () => ctx.conn.start();
export const reinstallServer = (ctx: Ctx): Cmd => () => ctx.conn.reinstall();
export const openChat = (ctx: Ctx): Cmd => () => ctx.chat.reveal();
