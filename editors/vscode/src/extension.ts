/** Activation, wiring only: the connection, the status bar, the chat view, IDE context and the commands (src/commands). */
import * as vscode from 'vscode';
import { errorMessage } from './api';
import { CHAT_VIEW_ID, ChatViewProvider } from './chatView';
import { COMMANDS } from './commands';
import { Ctx } from './commands/context';
import { SidecarConnection } from './connection';
import { trackOpenFiles } from './ideContext';
import { mcpFailureText } from './notices';
import { OpenFilesTracker } from './openFiles';
import { newMcpFailures, statusLevel, statusText } from './status';
import { backendNote, restartNote } from './wording';
import { UsageStatusBar } from './statusBar';

let connection: SidecarConnection | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const conn = new SidecarConnection(context);
  connection = conn;
  const status = new UsageStatusBar();
  const chat = new ChatViewProvider(context.extensionUri, conn);
  const tracker = new OpenFilesTracker();
  const ctx = new Ctx(context, conn, chat, status);
  conn.shownSession = () => (chat.model.items.some((i) => i.kind === 'user' || i.kind === 'model') ? conn.sessionId : undefined);
  context.subscriptions.push(conn, status, chat, { dispose: () => tracker.dispose() });
  context.subscriptions.push(vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chat, { webviewOptions: { retainContextWhenHidden: true } }));

  // the status bar and the chat footer follow the connection and the usage
  let mcpFailuresTold: Set<string> = new Set(); // each MCP failure is told once, until that server recovers
  const updateChatStatus = () => {
    const u = conn.lastUsage;
    const text = conn.isRunning ? (u ? `${statusText(u).replace('$(pulse) ', '')} of context` : 'Connected') : conn.notRunningMessage();
    chat.setStatus(text, u && conn.isRunning ? statusLevel(u) : 'normal', conn.isRunning, conn.isRunning ? backendNote(u?.backend) : '');
  };
  context.subscriptions.push(
    conn.onDidChangeState((s) => { status.setState(s, conn.lastError); updateChatStatus(); }),
    conn.onTokenUsage((u) => { status.setUsage(u); updateChatStatus(); }),
    conn.onCompressed((p) => { ctx.compressedSeen++; status.setCompressed(p); ctx.showOutcome(p.status, p.message); }),
    conn.onMcpStatus((p) => {
      status.setMcp(p.servers);
      const { fresh, told } = newMcpFailures(mcpFailuresTold, p.servers);
      mcpFailuresTold = told;
      for (const s of fresh) {
        void vscode.window.showErrorMessage(`Sidecar: ${mcpFailureText(s)}`, 'Show log', 'Restart')
          .then((pick) => {
            if (pick === 'Show log') void vscode.commands.executeCommand('sidecar.showLog');
            else if (pick === 'Restart') void vscode.commands.executeCommand('sidecar.showMcpServers', s.name);
          });
      }
    }),
  );

  // IDE context: a new server process knows nothing yet
  context.subscriptions.push(
    trackOpenFiles(tracker),
    tracker.onDidChange((state) => conn.notifyIdeContext(state)),
    conn.onReady((e) => {
      tracker.flush();
      void conn.pushSettings();
      const note = restartNote(e);
      if (note && !e.resumed && e.target) { chat.model.reset(); chat.model.setPins([]); chat.model.setTodos([]); } // not the session on screen
      if (note) chat.model.info(note);
    }),
  );

  // settings and the API key
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration('sidecar')) return;
      await conn.pushSettings();
      // only a change of the value in effect here (a remote window ignores the User value) asks for a restart
      if (e.affectsConfiguration('sidecar.serverCommand') && conn.serverCommandChanged()) {
        const choice = await vscode.window.showInformationMessage('Sidecar: the server command changed. Restart the sidecar now?', 'Restart');
        if (choice === 'Restart') await conn.start();
      }
    }),
    context.secrets.onDidChange((e) => { if (e.key === 'sidecar.apiKey') void conn.pushSettings(); }),
    // the workspace's restricted values become visible once trusted: the server gets them (and applies their rules)
    vscode.workspace.onDidGrantWorkspaceTrust(() => { if (conn.state === 'failed') void conn.start(); else void conn.pushSettings(); }),
  );

  // the commands: each failure is shown in words, never thrown at VS Code
  for (const [id, factory] of Object.entries(COMMANDS)) {
    const run = factory(ctx);
    context.subscriptions.push(vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try { return await run(...args); } catch (e) { void vscode.window.showErrorMessage(`Sidecar: ${errorMessage(e)}`); }
    }));
  }

  status.setState('starting');
  await conn.start();
}

export async function deactivate(): Promise<void> {
  await connection?.stop();
  connection = undefined;
}
