/**
 * Show Memory (a read-only document of the context files), Refresh Memory and Add to Memory…; and, from
 * sidecar/memoryChanged, the status-bar tooltip line and the one-time notice for project files an untrusted workspace
 * did not load.
 */
import * as vscode from 'vscode';
import { AddScope, addScopeItems, addedMessage, memoryMarkdown, memorySummary, skippedNotice } from '../memory';
import { MemoryInfo } from '../protocol';
import { Cmd, CommandFactory, Ctx } from './context';

const SCHEME = 'sidecar-memory';
const TRUST = 'Manage Workspace Trust';

/**
 * The window's memory state: the last MemoryInfo, its document, whether the notice was told. One per window, made by
 * the first memory command factory (they all run at activation); it follows sidecar/memoryChanged from then on.
 */
class MemoryView {
  private info: MemoryInfo | undefined;
  private told = false;
  readonly uri = vscode.Uri.from({ scheme: SCHEME, path: '/Sidecar Memory.md' });
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();

  constructor(private readonly ctx: Ctx) {
    ctx.own(this.changed);
    ctx.own(vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
      onDidChange: this.changed.event,
      provideTextDocumentContent: () => (this.info ? memoryMarkdown(this.info) : '# Sidecar memory\n\nNot loaded yet.\n'),
    }));
    ctx.own(ctx.conn.onMemoryChanged((m) => this.accept(m))); // every (re)started server sends one once it has loaded
  }

  /** A MemoryInfo from the server (pushed or answered): the tooltip line, an open document, the notice. */
  accept(m: MemoryInfo): void {
    this.info = m;
    this.ctx.status.setMemory(memorySummary(m));
    this.changed.fire(this.uri);
    const { notice, told } = skippedNotice(this.told, m);
    this.told = told;
    if (notice) {
      void vscode.window.showWarningMessage(notice, TRUST).then((pick) => {
        if (pick === TRUST) void vscode.commands.executeCommand('workbench.trust.manage');
      });
    }
  }

  async show(): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(this.uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  }
}

const views = new WeakMap<Ctx, MemoryView>();

function view(ctx: Ctx): MemoryView {
  let v = views.get(ctx);
  if (!v) { v = new MemoryView(ctx); views.set(ctx, v); }
  return v;
}

/** `sidecar.showMemory`: every context file (path, scope, tokens) and its content; one tab, kept up to date. */
export const showMemory: CommandFactory = (ctx) => {
  const v = view(ctx);
  return async () => {
    v.accept(await ctx.api().getMemory());
    await v.show();
  };
};

/** `sidecar.refreshMemory`: read the files again (after editing one outside VS Code, say). */
export const refreshMemory: CommandFactory = (ctx) => {
  const v = view(ctx);
  return async () => {
    const m = await ctx.api().refreshMemory();
    v.accept(m);
    void vscode.window.showInformationMessage(`Sidecar: memory reloaded. ${memorySummary(m)}.`);
  };
};

/** `sidecar.addMemory [text] [scope]`: a fact (input box, prefilled with the selection) and where it goes (a pick). */
export function addMemory(ctx: Ctx): Cmd {
  const v = view(ctx);
  return async (textArg?: unknown, scopeArg?: unknown) => {
    const api = ctx.api();
    let text = typeof textArg === 'string' ? textArg : undefined;
    if (text === undefined) {
      const editor = vscode.window.activeTextEditor;
      const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
      text = await vscode.window.showInputBox({
        title: 'Add to Memory',
        prompt: 'A fact or instruction the agent keeps in every session (appended as "- …" under "## Gemini Added Memories").',
        value: selected.replace(/\s*\n\s*/g, ' ').trim(),
        ignoreFocusOut: true,
        validateInput: (s) => (s.trim() ? undefined : 'Type what the agent should remember'),
      });
    }
    if (!text?.trim()) return;
    let scope: AddScope | undefined = scopeArg === 'global' || scopeArg === 'project' ? scopeArg : undefined;
    if (!scope) {
      const pick = await vscode.window.showQuickPick(addScopeItems(vscode.workspace.isTrusted), {
        title: 'Add to Memory: where?', ignoreFocusOut: true,
        placeHolder: vscode.workspace.isTrusted ? undefined : 'Project memory needs a trusted workspace (its files are not loaded here)',
      });
      scope = pick?.scope;
    }
    if (!scope) return;
    const m = await api.addMemory({ text: text.trim(), scope });
    v.accept(m);
    void vscode.window.showInformationMessage(addedMessage(scope, m));
  };
}
