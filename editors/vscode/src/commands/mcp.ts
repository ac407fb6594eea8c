/**
 * MCP Servers: a quick pick of the sidecar's MCP servers (status, tools, why one failed), each with Restart and
 * Disable (a disabled one: Enable). Run MCP Prompt…: a server's prompt, its arguments, sent as the user's turn.
 */
import * as vscode from 'vscode';
import { McpPromptInfo, McpServerInfo } from '../protocol';
import { MCP_PICK_PLACEHOLDER, McpAction, mcpActionMessage, mcpArgumentInput, mcpArgumentProblem, mcpPromptPick, mcpServerActions } from '../mcpView';
import { mcpRestartedText } from '../notices';
import { mcpPick, mcpSummary } from '../status';
import { Cmd, Ctx } from './context';

type ServerItem = vscode.QuickPickItem & { server: McpServerInfo };
type ActionButton = vscode.QuickInputButton & { action: McpAction };

const BUTTONS: Record<McpAction, ActionButton> = {
  restart: { iconPath: new vscode.ThemeIcon('debug-restart'), tooltip: 'Restart', action: 'restart' },
  disable: { iconPath: new vscode.ThemeIcon('circle-slash'), tooltip: 'Disable', action: 'disable' },
  enable: { iconPath: new vscode.ThemeIcon('play'), tooltip: 'Enable', action: 'enable' },
};

/** The server's status once it is no longer starting (undefined after `ms`): from sidecar/mcpStatus, or asked. */
async function settled(ctx: Ctx, name: string, ms = 60_000): Promise<McpServerInfo | undefined> {
  return new Promise((resolve) => {
    const done = (s: McpServerInfo | undefined) => { sub.dispose(); clearTimeout(timer); resolve(s); };
    const check = (servers: McpServerInfo[]) => {
      const s = servers.find((x) => x.name === name);
      if (s && s.status !== 'starting') done(s);
    };
    const sub = ctx.conn.onMcpStatus((p) => check(p.servers));
    const timer = setTimeout(() => done(undefined), ms);
    void ctx.api().listMcpServers().then(check, () => undefined);
  });
}

async function run(ctx: Ctx, action: McpAction, name: string): Promise<void> {
  const api = ctx.api();
  if (action === 'restart') {
    // "restarted" only once it runs again: a restart that fails is told by the failure notification alone
    if (!(await api.restartMcpServer({ name })).restarted) { void vscode.window.showWarningMessage(mcpActionMessage(action, name, false)); return; }
    const s = await settled(ctx, name);
    const text = mcpRestartedText(s);
    if (text) void vscode.window.showInformationMessage(text);
    else if (!s) void vscode.window.showInformationMessage(`Sidecar: MCP server "${name}" is still starting.`);
    return;
  }
  const applied = (await api.setMcpServerEnabled({ name, enabled: action === 'enable' })).applied;
  const message = mcpActionMessage(action, name, applied);
  if (applied) void vscode.window.showInformationMessage(message); else void vscode.window.showWarningMessage(message);
}

/** `sidecar.showMcpServers [name]`: with a name (the failure notification's Restart), restart that server at once. */
export function showMcpServers(ctx: Ctx): Cmd {
  return async (nameArg?: unknown) => {
    const api = ctx.api();
    if (typeof nameArg === 'string' && nameArg) { await run(ctx, 'restart', nameArg); return; }
    const servers = await api.listMcpServers();
    ctx.status.setMcp(servers);
    if (!servers.length) {
      void vscode.window.showInformationMessage('Sidecar: no MCP servers are configured. Add them under the "mcpServers" setting (docs/mcp.md).');
      return;
    }
    const qp = vscode.window.createQuickPick<ServerItem>();
    qp.title = `MCP Servers — ${mcpSummary(servers).replace(/^MCP: /, '')}`;
    qp.placeholder = MCP_PICK_PLACEHOLDER;
    qp.matchOnDescription = true;
    qp.matchOnDetail = true;
    qp.items = servers.map((s) => ({ ...mcpPick(s), server: s, buttons: mcpServerActions(s).map((a) => BUTTONS[a]) }));
    const chosen = await new Promise<[McpAction, McpServerInfo] | undefined>((resolve) => {
      qp.onDidAccept(() => { const s = qp.selectedItems[0]?.server; resolve(s && [mcpServerActions(s)[0], s]); qp.hide(); });
      qp.onDidTriggerItemButton((e) => { resolve([(e.button as ActionButton).action, e.item.server]); qp.hide(); });
      qp.onDidHide(() => { resolve(undefined); qp.dispose(); });
      qp.show();
    });
    if (chosen) await run(ctx, chosen[0], chosen[1].name);
  };
}

/** Ask for each argument in turn; undefined when the user gives up. */
async function askArguments(p: McpPromptInfo): Promise<Record<string, string> | undefined> {
  const values: Record<string, string> = {};
  const args = p.arguments ?? [];
  for (let i = 0; i < args.length; i++) {
    const value = await vscode.window.showInputBox({
      ...mcpArgumentInput(p, i), ignoreFocusOut: true, validateInput: (v) => mcpArgumentProblem(args[i], v),
    });
    if (value === undefined) return undefined;
    values[args[i].name] = value;
  }
  return values;
}

/** `sidecar.runMcpPrompt`: pick a prompt of a ready MCP server, give its arguments, send it as your message. */
export function runMcpPrompt(ctx: Ctx): Cmd {
  return async () => {
    const api = ctx.api();
    const prompts = await api.listMcpPrompts();
    if (!prompts.length) {
      void vscode.window.showInformationMessage('Sidecar: no ready MCP server offers prompts (see "Sidecar: MCP Servers").');
      return;
    }
    const picked = await vscode.window.showQuickPick(prompts.map((p) => ({ ...mcpPromptPick(p), prompt: p })), {
      title: 'Run MCP Prompt', placeHolder: 'Pick a prompt; its text is sent as your message', matchOnDescription: true, matchOnDetail: true,
    });
    if (!picked) return;
    const values = await askArguments(picked.prompt);
    if (!values) return;
    const r = await api.getMcpPrompt({ name: picked.prompt.name, arguments: values });
    if (r.error !== undefined || r.text === undefined) {
      void vscode.window.showErrorMessage(`Sidecar: the MCP prompt “${picked.prompt.name}” failed: ${r.error ?? 'no text'}`);
      return;
    }
    await vscode.commands.executeCommand('sidecar.openChat');
    await ctx.chat.send(r.text);
  };
}
