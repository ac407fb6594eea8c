/**
 * The chat view: a sidebar webview with an input box, streamed replies (sidecar/messageDelta), tool-call
 * cards answering sidecar/confirmToolCall, and compaction markers. The conversation lives in ChatModel on the
 * extension side; the webview only renders it, so hiding and showing the view loses nothing.
 */
import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { errorCode, errorMessage } from './api';
import { ChatModel, FromWebview, MessageAction, ToWebview, userMessageId } from './chatModel';
import { SidecarConnection } from './connection';
import { ConfirmToolCallParams, ConfirmToolCallResult, ErrorCode, ToolDecision } from './protocol';

export const CHAT_VIEW_ID = 'sidecar.chat';

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  readonly model = new ChatModel();
  private view: vscode.WebviewView | undefined;
  private turn: vscode.CancellationTokenSource | undefined;
  private readonly confirms = new Map<string, (d: ToolDecision) => void>();
  private readonly disposables: vscode.Disposable[] = [];
  private status: ToWebview = { type: 'status', text: '', level: 'normal', connected: false };

  constructor(private readonly extensionUri: vscode.Uri, private readonly conn: SidecarConnection) {
    this.disposables.push(
      this.model.onChange((msg) => this.post(msg)),
      conn.onMessageDelta((d) => this.model.delta(d.turnId, d.text)),
      conn.onToolCall((t) => this.model.toolCall(t)),
      conn.onRetry((r) => this.model.retry(r)),
      conn.onCompressed((c) => this.model.compaction(c)),
      conn.onToolOutputsMasked((m) => this.model.info(m.message)),
      conn.onTodosChanged((t) => this.model.setTodos(t.items)),
    );
    conn.setConfirmHandler((p, token) => this.confirm(p, token));
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview, media);
    this.disposables.push(
      view.webview.onDidReceiveMessage((m: FromWebview) => this.onMessage(m)),
      view.onDidDispose(() => { if (this.view === view) this.view = undefined; }),
    );
  }

  setStatus(text: string, level: string, connected: boolean, backend = ''): void {
    this.status = { type: 'status', text, level, connected, backend };
    this.post(this.status);
  }

  /**
   * Show the chat. `keepFocus`: a question that arrives while the user types elsewhere shows the view without taking
   * the keyboard (keys meant for the editor must not land in the chat); only a view never opened yet is focused, as
   * VS Code can create it no other way.
   */
  async reveal(keepFocus = false): Promise<void> {
    if (keepFocus && this.view) {
      this.view.show(true);
      return;
    }
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  private post(msg: ToWebview): void {
    void this.view?.webview.postMessage(msg);
  }

  private onMessage(m: FromWebview): void {
    switch (m.type) {
      case 'ready':
        this.post(this.model.snapshot());
        this.post(this.status);
        this.post({ type: 'pins', pins: this.model.pins });
        this.post({ type: 'todos', items: this.model.todos });
        break;
      case 'send':
        void this.send(m.text);
        break;
      case 'stop':
        this.turn?.cancel();
        break;
      case 'decide':
        this.decide(m.callId, m.decision);
        break;
      case 'command':
        if (/^sidecar\.[A-Za-z]+$/.test(m.command)) void vscode.commands.executeCommand(m.command);
        break;
      case 'action':
        void this.action(m.action, m.itemId);
        break;
      case 'unpin':
        if (typeof m.pinId === 'string') void vscode.commands.executeCommand('sidecar.unpin', m.pinId);
        break;
    }
  }

  /**
   * "Fork from here", "Rewind to here", "Summarise up to here" (user messages), "Pin" (any message) and the rating of
   * a compaction marker, run as the palette commands.
   */
  private async action(action: MessageAction, itemId: string): Promise<void> {
    const item = this.model.item(itemId);
    if (!item) return;
    if (action === 'rateGood' || action === 'rateLost') {
      if (item.kind === 'compaction' && item.compactionId) {
        await vscode.commands.executeCommand('sidecar.rateCompaction', item.compactionId, action === 'rateGood' ? 'good' : 'lost');
      }
      return;
    }
    if (action === 'pin') {
      if (item.kind === 'user' || item.kind === 'model') await vscode.commands.executeCommand('sidecar.pin', item.text);
      return;
    }
    if (item.kind !== 'user' || !this.conn.isRunning) return;
    const entries = (await this.conn.api.getTranscript()).entries;
    const messageId = userMessageId(this.model.items, itemId, entries);
    if (!messageId) { void vscode.window.showWarningMessage('Sidecar: that message is not in this session’s recording.'); return; }
    const command = action === 'fork' ? 'sidecar.forkSession' : action === 'summarize' ? 'sidecar.compressUpTo' : 'sidecar.rewind';
    await vscode.commands.executeCommand(command, messageId);
  }

  /** Send one user message and stream the reply into the view. */
  async send(text: string): Promise<void> {
    text = text.trim();
    if (!text) return;
    if (this.model.busy) { void vscode.window.showInformationMessage('Sidecar: wait for the current reply, or stop it first.'); return; }
    if (!this.conn.isRunning) { this.model.error(this.conn.notRunningMessage()); return; }
    this.model.addUser(text);
    this.model.setBusy(true);
    const cts = new vscode.CancellationTokenSource();
    this.turn = cts;
    try {
      const result = await this.conn.api.sendMessage({ text }, cts.token);
      this.model.finish(result.turnId, result.text);
    } catch (e) {
      const code = errorCode(e);
      if (code === ErrorCode.requestCancelled || cts.token.isCancellationRequested) this.model.info('Stopped.');
      else if (code === ErrorCode.contextOverflow) this.model.error(`${errorMessage(e)} — run “Sidecar: Compress Conversation” to make room.`);
      else if (!this.conn.isRunning || /connection|disposed/i.test(errorMessage(e))) this.model.error(`The sidecar stopped while answering (${errorMessage(e)}). It restarts and resumes the session by itself; send the message again.`);
      else this.model.error(errorMessage(e));
    } finally {
      if (this.turn === cts) this.turn = undefined;
      cts.dispose();
      this.model.setBusy(false);
    }
  }

  private confirm(p: ConfirmToolCallParams, token: vscode.CancellationToken): Promise<ConfirmToolCallResult> {
    this.model.confirmRequest(p);
    void this.reveal(true);
    return new Promise((resolve) => {
      const done = (decision: ToolDecision) => {
        if (!this.confirms.has(p.callId)) return;
        this.confirms.delete(p.callId);
        sub.dispose();
        this.model.decided(p.callId, decision);
        resolve({ decision });
      };
      this.confirms.set(p.callId, done);
      const sub = token.onCancellationRequested(() => done('deny'));
    });
  }

  private decide(callId: string, decision: ToolDecision): void {
    if (decision !== 'allow' && decision !== 'allowAlways' && decision !== 'allowAlwaysServer' && decision !== 'deny') return;
    this.confirms.get(callId)?.(decision);
  }

  private html(webview: vscode.Webview, media: vscode.Uri): string {
    const nonce = crypto.randomBytes(16).toString('base64');
    const css = webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css'));
    const js = webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.js'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>Sidecar Chat</title>
</head>
<body>
<section id="plan" aria-label="Plan" hidden></section>
<section id="pins" aria-label="Pinned facts" hidden></section>
<main id="log" role="log" aria-live="polite" aria-label="Conversation"></main>
<div id="empty" class="empty">
  <p><strong>Ask Gemini about your code.</strong></p>
  <p>Your open files, cursor and selection go along as context. Long conversations are compacted automatically; you can also run <em>Compress Conversation</em> yourself.</p>
  <p id="backend" class="backend" hidden></p>
</div>
<form id="composer">
  <textarea id="input" rows="3" placeholder="Ask Gemini… (Enter to send, Shift+Enter for a new line)" aria-label="Message to Gemini"></textarea>
  <div class="row">
    <span id="status" class="status"></span>
    <button type="button" id="stop" class="secondary" hidden>Stop</button>
    <button type="submit" id="send">Send</button>
  </div>
</form>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
  }

  dispose(): void {
    for (const done of [...this.confirms.values()]) done('deny');
    this.turn?.cancel();
    for (const d of this.disposables) d.dispose();
  }
}
