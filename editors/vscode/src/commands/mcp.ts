/** MCP Servers: a quick pick of the sidecar's MCP servers (status, tools, why one failed), each with Restart. */
import * as vscode from 'vscode';
import { McpServerInfo, SidecarApi } from '../protocol';
import { mcpPick, mcpSummary } from '../status';
import { Cmd, Ctx } from './context';

type ServerItem = vscode.QuickPickItem & { server: McpServerInfo };

const RESTART: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('debug-restart'), tooltip: 'Restart' };

async function restart(api: SidecarApi, name: string): Promise<void> {
  const r = await api.restartMcpServer({ name });
  if (r.restarted) void vscode.window.showInformationMessage(`Sidecar: MCP server "${name}" restarted.`);
  else void vscode.window.showWarningMessage(`Sidecar: there is no MCP server named "${name}".`);
}

/** `sidecar.showMcpServers [name]`: with a name (the failure notification's Restart), restart that server at once. */
export function showMcpServers(ctx: Ctx): Cmd {
  return async (nameArg?: unknown) => {
    const api = ctx.api();
    if (typeof nameArg === 'string' && nameArg) { await restart(api, nameArg); return; }
    const servers = await api.listMcpServers();
    ctx.status.setMcp(servers);
    if (!servers.length) {
      void vscode.window.showInformationMessage('Sidecar: no MCP servers are configured. Add them under the "mcpServers" setting (docs/mcp.md).');
      return;
    }
    const qp = vscode.window.createQuickPick<ServerItem>();
    qp.title = `MCP Servers — ${mcpSummary(servers).replace(/^MCP: /, '')}`;
    qp.placeholder = 'Pick a server to restart it (or use its Restart button)';
    qp.matchOnDescription = true;
    qp.matchOnDetail = true;
    qp.items = servers.map((s) => ({ ...mcpPick(s), server: s, buttons: [RESTART] }));
    const chosen = await new Promise<McpServerInfo | undefined>((resolve) => {
      qp.onDidAccept(() => { resolve(qp.selectedItems[0]?.server); qp.hide(); });
      qp.onDidTriggerItemButton((e) => { resolve(e.item.server); qp.hide(); });
      qp.onDidHide(() => { resolve(undefined); qp.dispose(); });
      qp.show();
    });
    if (chosen) await restart(api, chosen.name);
  };
}
