/**
 * Show Context (a webview with a bar per category of the next request: a memory file's row opens it, an MCP
 * server's row opens the MCP Servers pick), Select Model (a quick pick of the backend's models) and Postpone
 * Compaction (the compaction due at the next message skips that message, once).
 */
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { contextHtml, modelPickItem, rowAction } from '../contextView';
import { ContextBreakdown } from '../protocol';
import { CommandFactory, Ctx } from './context';

/** The window's context view: one webview panel, refreshed while it is open whenever the usage changes. */
class ContextPanel {
  private panel: vscode.WebviewPanel | undefined;
  private shown: ContextBreakdown | undefined;

  constructor(private readonly ctx: Ctx) {
    ctx.own(ctx.conn.onTokenUsage(() => { if (this.panel) void this.refresh().catch(() => undefined); }));
  }

  async show(): Promise<void> {
    const b = await this.ctx.api().getContextBreakdown();
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('sidecar.context', 'Sidecar Context', vscode.ViewColumn.Active, { enableScripts: true });
      this.panel.onDidDispose(() => { this.panel = undefined; });
      this.panel.webview.onDidReceiveMessage((m: { type?: string; index?: number }) => void this.onMessage(m));
    }
    this.render(b);
    this.panel.reveal();
  }

  private render(b: ContextBreakdown): void {
    if (!this.panel) return;
    this.shown = b;
    this.panel.webview.html = contextHtml(b, crypto.randomBytes(16).toString('base64'), this.panel.webview.cspSource);
  }

  private async refresh(): Promise<void> {
    if (this.panel) this.render(await this.ctx.api().getContextBreakdown());
  }

  private async onMessage(m: { type?: string; index?: number }): Promise<void> {
    switch (m.type) {
      case 'row': {
        const row = this.shown?.rows[m.index ?? -1];
        const action = row ? rowAction(row) : undefined;
        if (action?.kind === 'file') await vscode.window.showTextDocument(vscode.Uri.file(action.target), { preview: false });
        else if (action?.kind === 'mcp') await vscode.commands.executeCommand('sidecar.showMcpServers');
        return;
      }
      case 'compress': await vscode.commands.executeCommand('sidecar.compress', ''); return;
      case 'focus': await vscode.commands.executeCommand('sidecar.compress'); return;
      case 'postpone': await vscode.commands.executeCommand('sidecar.postponeCompaction'); return;
      case 'model': await vscode.commands.executeCommand('sidecar.selectModel'); return;
      case 'refresh': await this.refresh(); return;
      default:
    }
  }
}

const panels = new WeakMap<Ctx, ContextPanel>();

function panel(ctx: Ctx): ContextPanel {
  let p = panels.get(ctx);
  if (!p) { p = new ContextPanel(ctx); panels.set(ctx, p); }
  return p;
}

/** `sidecar.showContext`: what fills the window, by category. */
export const showContext: CommandFactory = (ctx) => {
  const p = panel(ctx);
  return async () => { await p.show(); };
};

/** `sidecar.selectModel [model]`: the backend's models in a quick pick (or the one given); the status bar follows. */
export const selectModel: CommandFactory = (ctx) => async (modelArg?: unknown) => {
  const api = ctx.api();
  let model = typeof modelArg === 'string' ? modelArg : undefined;
  if (model === undefined) {
    const listed = await api.listModels();
    const items = listed.models.map((m) => modelPickItem(m, listed.current));
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Select Model',
      placeHolder: listed.problem ? `The known models (${listed.problem})` : `Current: ${listed.current}`,
    });
    if (!picked) return;
    model = picked.id;
  }
  const result = await api.setModel({ model });
  if (result.compactsAtNextMessage) void vscode.window.showWarningMessage(`Sidecar: ${result.message}`);
  else void vscode.window.showInformationMessage(`Sidecar: ${result.message}`);
};

/** `sidecar.postponeCompaction`: the next message skips the automatic compaction that is due (once). */
export const postponeCompaction: CommandFactory = (ctx) => async () => {
  const result = await ctx.api().postponeCompaction();
  void vscode.window.showInformationMessage(`Sidecar: ${result.message}`);
};
