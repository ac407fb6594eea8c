/** Pin a Fact, Unpin a Fact and Show Pinned Facts; Clear Plan (the model's todo list). */
import * as vscode from 'vscode';
import { pinPick } from '../wording';
import { Cmd, Ctx } from './context';

export function pin(ctx: Ctx): Cmd {
  return async (textArg?: unknown) => {
    const api = ctx.api();
    let text = typeof textArg === 'string' ? textArg : undefined;
    if (text === undefined) {
      const editor = vscode.window.activeTextEditor;
      const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
      text = await vscode.window.showInputBox({ title: 'Pin a Fact', prompt: 'Kept verbatim for the model through every compaction.', value: selected, ignoreFocusOut: true });
    }
    if (!text?.trim()) return;
    const r = await api.pin({ text });
    await ctx.refreshPins();
    void vscode.window.showInformationMessage(r.warning ? `Sidecar: pinned, but ${r.warning}` : 'Sidecar: pinned; the model keeps it through every compaction.');
  };
}

export function unpin(ctx: Ctx): Cmd {
  return async (pinIdArg?: unknown) => {
    const api = ctx.api();
    let pinId = typeof pinIdArg === 'string' ? pinIdArg : undefined;
    if (!pinId) {
      const { pins } = await api.listPins();
      const pick = await vscode.window.showQuickPick(pins.map(pinPick), { title: 'Unpin a Fact' });
      pinId = pick?.pinId;
    }
    if (!pinId) return;
    await api.unpin({ pinId });
    await ctx.refreshPins();
  };
}

export function showPins(ctx: Ctx): Cmd {
  return async () => {
    const api = ctx.api();
    const { pins } = await api.listPins();
    await ctx.refreshPins();
    if (!pins.length) { void vscode.window.showInformationMessage('Sidecar: nothing is pinned in this session. “Sidecar: Pin a Fact” adds one.'); return; }
    const pick = await vscode.window.showQuickPick(pins.map(pinPick), {
      title: `Pinned Facts (${pins.length})`, placeHolder: 'Pick one to unpin it',
    });
    if (pick) { await api.unpin({ pinId: pick.pinId }); await ctx.refreshPins(); }
  };
}

/** Clear the model's todo list (the Plan section's "Clear"). */
export function clearPlan(ctx: Ctx): Cmd {
  return async () => {
    const { cleared } = await ctx.api().clearTodos();
    await ctx.refreshTodos();
    if (!cleared) void vscode.window.showInformationMessage('Sidecar: the plan is already empty.');
  };
}
