/** Activation: the sidecar connection, the status bar, the chat view, IDE context and the commands. */
import * as vscode from 'vscode';
import { errorCode, errorMessage } from './api';
import { CHAT_VIEW_ID, ChatViewProvider } from './chatView';
import { registerDoctorCommands } from './commands/doctor';
import { SidecarConnection } from './connection';
import { trackOpenFiles } from './ideContext';
import { OpenFilesTracker } from './openFiles';
import { CompressedParams, ErrorCode, SessionSummary } from './protocol';
import { compressedMessageLevel, plural, sessionDescription, statusLevel, statusText } from './status';
import { UsageStatusBar } from './statusBar';
import { transcriptMarkdown } from './transcript';

let connection: SidecarConnection | undefined;
const TRANSCRIPT_SCHEME = 'sidecar-transcript';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const conn = new SidecarConnection(context);
  connection = conn;
  const status = new UsageStatusBar();
  const chat = new ChatViewProvider(context.extensionUri, conn);
  const tracker = new OpenFilesTracker();
  context.subscriptions.push(conn, status, chat, { dispose: () => tracker.dispose() });
  context.subscriptions.push(vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chat, { webviewOptions: { retainContextWhenHidden: true } }));

  // -- status bar and chat footer follow the connection and the usage ------------------------------
  const updateChatStatus = () => {
    const u = conn.lastUsage;
    const text = conn.isRunning
      ? (u ? `${statusText(u).replace('$(pulse) ', '')} of context` : 'Connected')
      : conn.notRunningMessage();
    chat.setStatus(text, u && conn.isRunning ? statusLevel(u) : 'normal', conn.isRunning);
  };
  context.subscriptions.push(
    conn.onDidChangeState((s) => { status.setState(s, conn.lastError); updateChatStatus(); }),
    conn.onTokenUsage((u) => { status.setUsage(u); updateChatStatus(); }),
  );

  // -- compaction messages: the user-facing text of sidecar/compressed ------------------------------
  let compressedSeen = 0;
  context.subscriptions.push(conn.onCompressed((p: CompressedParams) => {
    compressedSeen++;
    status.setCompressed(p);
    if (compressedMessageLevel(p.status) === 'info') void vscode.window.showInformationMessage(p.message);
    else void vscode.window.showWarningMessage(p.message);
  }));

  // -- IDE context -------------------------------------------------------------------------------
  context.subscriptions.push(
    trackOpenFiles(tracker),
    tracker.onDidChange((state) => conn.notifyIdeContext(state)),
    conn.onReady(({ restarted, resumed }) => {
      tracker.flush(); // a new server process knows nothing yet
      void conn.pushSettings();
      if (restarted) {
        chat.model.info(resumed ? 'The sidecar restarted after a crash; the session was resumed.' : 'The sidecar restarted after a crash.');
      }
    }),
  );

  // -- settings and the API key -------------------------------------------------------------------
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration('sidecar')) return;
      if (e.affectsConfiguration('sidecar.serverCommand')) {
        const choice = await vscode.window.showInformationMessage('Sidecar: the server command changed. Restart the sidecar now?', 'Restart');
        if (choice === 'Restart') await conn.start();
        return;
      }
      await conn.pushSettings();
    }),
    context.secrets.onDidChange((e) => { if (e.key === 'sidecar.apiKey') void conn.pushSettings(); }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => { if (conn.state === 'failed') void conn.start(); }),
  );

  // -- commands -------------------------------------------------------------------------------------
  const register = (id: string, fn: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try { return await fn(...args); } catch (e) { void vscode.window.showErrorMessage(`Sidecar: ${errorMessage(e)}`); }
    }));
  const requireRunning = () => {
    if (!conn.isRunning) throw new Error(conn.notRunningMessage());
    return conn.api;
  };

  register('sidecar.compress', async (instructionsArg?: unknown) => {
    const api = requireRunning();
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
    const before = compressedSeen;
    status.setCompressing(true);
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Sidecar: Compressing conversation', cancellable: true },
        (progress, token) => conn.progress.withCompressSink(progress, () => api.compress(instructions?.trim() || undefined, token)),
      );
      // servers announce the outcome with sidecar/compressed; show the result's message if none came
      if (compressedSeen === before && result?.message) {
        if (compressedMessageLevel(result.status) === 'info') void vscode.window.showInformationMessage(result.message);
        else void vscode.window.showWarningMessage(result.message);
      }
    } catch (e) {
      const code = errorCode(e);
      if (code === ErrorCode.requestCancelled) void vscode.window.showInformationMessage('Sidecar: compaction cancelled; the conversation is unchanged.');
      else if (code === ErrorCode.busy) void vscode.window.showInformationMessage(`Sidecar: ${errorMessage(e)}`);
      else if (code === ErrorCode.methodNotFound) void vscode.window.showWarningMessage('Sidecar: this sidecar version cannot compress conversations yet.');
      else throw e;
    } finally {
      status.setCompressing(false);
    }
  });

  register('sidecar.openChat', () => chat.reveal());

  register('sidecar.newSession', async () => {
    const r = await requireRunning().newSession();
    chat.model.reset();
    chat.model.setPins([]);
    chat.model.info(`New session ${r.sessionId.slice(0, 8)} started.`);
    await chat.reveal();
  });

  register('sidecar.resumeSession', async () => {
    const api = requireRunning();
    const sessions = await api.listSessions();
    if (!sessions.length) { void vscode.window.showInformationMessage('Sidecar: there are no saved sessions yet.'); return; }
    const pick = await pickSession(sessions, 'Resume Session', 'Pick a session to continue');
    if (!pick) return;
    const r = await api.resumeSession(pick.sessionId);
    await loadTranscript(r.sessionId);
    if (r.forked && r.message) {
      chat.model.info(r.message); // the session is open in another window: this one continues in a new branch
      void vscode.window.showWarningMessage(`Sidecar: ${r.message}`);
    } else {
      chat.model.info(`Resumed session “${pick.title || r.sessionId.slice(0, 8)}” (${plural(r.messageCount, 'message')}).`);
    }
    await chat.reveal();
  });

  /**
   * A quick pick of sessions with a rename and a delete button on each; resolves to the one picked (undefined when
   * dismissed). Renames and deletions happen in place and refresh the list.
   */
  async function pickSession(sessions: SessionSummary[], title: string, placeHolder: string): Promise<SessionSummary | undefined> {
    const api = requireRunning();
    const qp = vscode.window.createQuickPick<SessionPick>();
    Object.assign(qp, { title, placeholder: placeHolder, matchOnDescription: true, matchOnDetail: true });
    const show = (list: SessionSummary[]) => { qp.items = list.map((s) => sessionPickItem(s, conn.sessionId)); };
    show(sessions);
    return new Promise((resolve) => {
      let done = false;
      let acting = false; // a rename box or a delete confirmation hides the pick for a moment: not a dismissal
      const finish = (value: SessionSummary | undefined) => { if (!done) { done = true; resolve(value); qp.dispose(); } };
      qp.onDidAccept(() => finish(qp.selectedItems[0]?.session));
      qp.onDidHide(() => { if (!acting) finish(undefined); });
      qp.onDidTriggerItemButton(async ({ item, button }) => {
        acting = true;
        try {
          if (button === RENAME_BUTTON) {
            const title = await vscode.window.showInputBox({ title: 'Rename Session', value: item.session.title ?? '', ignoreFocusOut: true });
            if (title?.trim()) await api.renameSession(item.session.sessionId, title.trim());
          } else if (button === DELETE_BUTTON) {
            const ok = await vscode.window.showWarningMessage(
              `Delete session “${item.session.title || item.session.sessionId.slice(0, 8)}”? It goes to the trash for 30 days.`, { modal: true }, 'Delete');
            if (ok === 'Delete') void vscode.window.showInformationMessage((await api.deleteSession(item.session.sessionId)).message);
          }
        } catch (e) {
          void vscode.window.showErrorMessage(`Sidecar: ${errorMessage(e)}`);
        }
        if (done) return;
        try { show(await api.listSessions()); } finally { acting = false; }
        qp.show();
      });
      qp.show();
    });
  }

  register('sidecar.renameSession', async (sessionIdArg?: unknown) => {
    const api = requireRunning();
    const sessionId = typeof sessionIdArg === 'string' ? sessionIdArg : conn.sessionId;
    if (!sessionId) return;
    const current = (await api.listSessions()).find((s) => s.sessionId === sessionId);
    const title = await vscode.window.showInputBox({ title: 'Rename Session', value: current?.title ?? '', ignoreFocusOut: true });
    if (!title?.trim()) return;
    const r = await api.renameSession(sessionId, title.trim());
    void vscode.window.showInformationMessage(`Sidecar: session renamed to “${r.title}”.`);
  });

  register('sidecar.deleteSession', async () => {
    const api = requireRunning();
    const others = (await api.listSessions()).filter((s) => s.sessionId !== conn.sessionId);
    if (!others.length) { void vscode.window.showInformationMessage('Sidecar: no other saved session to delete (the live one cannot be).'); return; }
    const pick = await vscode.window.showQuickPick(others.map((s) => sessionPickItem(s, conn.sessionId)), { title: 'Delete Session', placeHolder: 'It goes to the trash for 30 days' });
    if (!pick) return;
    void vscode.window.showInformationMessage((await api.deleteSession(pick.session.sessionId)).message);
  });

  /** A user message of the live session: the argument, or picked from the transcript. */
  async function pickUserMessage(arg: unknown, title: string, withWhole: boolean): Promise<string | null | undefined> {
    if (typeof arg === 'string') return arg;
    const entries = (await requireRunning().getTranscript()).entries;
    const items: Array<vscode.QuickPickItem & { id: string | null }> = entries
      .filter((e) => e.type === 'message' && e.kind === 'user' && !e.rewound)
      .map((e) => ({ label: e.type === 'message' ? e.text.split('\n')[0].slice(0, 120) : '', description: e.id, id: e.id }));
    if (withWhole) items.unshift({ label: '$(repo-forked) The whole session', description: 'everything so far', id: null });
    if (!items.length) { void vscode.window.showInformationMessage('Sidecar: no message of yours in this session yet.'); return undefined; }
    const pick = await vscode.window.showQuickPick(items, { title, placeHolder: 'Pick one of your messages' });
    return pick === undefined ? undefined : pick.id;
  }

  register('sidecar.forkSession', async (messageIdArg?: unknown) => {
    const api = requireRunning();
    const messageId = await pickUserMessage(messageIdArg, 'Fork Session before…', true);
    if (messageId === undefined) return;
    const r = await api.forkSession(messageId ? { beforeMessageId: messageId } : {});
    await loadTranscript(r.sessionId);
    chat.model.info(`Forked into a new session ${r.sessionId.slice(0, 8)} (${r.messageCount} messages from ${r.parentSessionId.slice(0, 8)}, which is unchanged).`);
    await chat.reveal();
  });

  register('sidecar.rewind', async (messageIdArg?: unknown) => {
    const api = requireRunning();
    const messageId = await pickUserMessage(messageIdArg, 'Rewind to before…', false);
    if (!messageId) return;
    const r = await api.rewind(messageId);
    await loadTranscript();
    chat.model.info(r.message);
    chat.model.setDraft(r.text);
    await chat.reveal();
  });

  register('sidecar.pin', async (textArg?: unknown) => {
    const api = requireRunning();
    let text = typeof textArg === 'string' ? textArg : undefined;
    if (text === undefined) {
      const editor = vscode.window.activeTextEditor;
      const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
      text = await vscode.window.showInputBox({ title: 'Pin a Fact', prompt: 'Kept verbatim for the model through every compaction.', value: selected, ignoreFocusOut: true });
    }
    if (!text?.trim()) return;
    const r = await api.pin(text);
    await refreshPins();
    void vscode.window.showInformationMessage(r.warning ? `Sidecar: pinned, but ${r.warning}` : 'Sidecar: pinned; the model keeps it through every compaction.');
  });

  register('sidecar.unpin', async (pinIdArg?: unknown) => {
    const api = requireRunning();
    let pinId = typeof pinIdArg === 'string' ? pinIdArg : undefined;
    if (!pinId) {
      const { pins } = await api.listPins();
      const pick = await vscode.window.showQuickPick(pins.map((p) => ({ label: p.text.split('\n')[0].slice(0, 120), description: p.pinId, pinId: p.pinId })), { title: 'Unpin a Fact' });
      pinId = pick?.pinId;
    }
    if (!pinId) return;
    await api.unpin(pinId);
    await refreshPins();
  });

  register('sidecar.showPins', async () => {
    const { pins } = await requireRunning().listPins();
    await refreshPins();
    if (!pins.length) { void vscode.window.showInformationMessage('Sidecar: nothing is pinned in this session. “Sidecar: Pin a Fact” adds one.'); return; }
    const pick = await vscode.window.showQuickPick(pins.map((p) => ({ label: p.text.split('\n')[0].slice(0, 120), detail: p.text, pinId: p.pinId })), {
      title: `Pinned Facts (${pins.length})`, placeHolder: 'Pick one to unpin it',
    });
    if (pick) { await conn.api.unpin(pick.pinId); await refreshPins(); }
  });

  async function refreshPins(): Promise<void> {
    try { chat.model.setPins((await conn.api.listPins()).pins); } catch { chat.model.setPins([]); }
  }

  register('sidecar.undoCompaction', async () => {
    const r = await requireRunning().undoCompaction();
    if (r.restored) {
      status.setUndone();
      void vscode.window.showInformationMessage(r.message);
      await loadTranscript();
    } else {
      void vscode.window.showWarningMessage(r.message);
    }
  });

  // transcripts open as read-only Markdown documents (never "unsaved changes" on close); one document per
  // session: running the command again refreshes and shows the same tab
  const transcripts = new Map<string, string>();
  const transcriptChanged = new vscode.EventEmitter<vscode.Uri>();
  context.subscriptions.push(transcriptChanged, vscode.workspace.registerTextDocumentContentProvider(TRANSCRIPT_SCHEME, {
    onDidChange: transcriptChanged.event,
    provideTextDocumentContent: (uri) => transcripts.get(uri.toString()) ?? '',
  }));
  register('sidecar.showTranscript', async () => {
    const t = await requireRunning().getTranscript();
    const uri = vscode.Uri.from({ scheme: TRANSCRIPT_SCHEME, path: `/Sidecar transcript ${t.sessionId.slice(0, 8)}.md` });
    const known = transcripts.has(uri.toString());
    transcripts.set(uri.toString(), transcriptMarkdown(t));
    if (known) transcriptChanged.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  });

  register('sidecar.setApiKey', async () => {
    const has = await conn.hasApiKey();
    const key = await vscode.window.showInputBox({
      title: 'Sidecar: Gemini API key',
      prompt: has ? 'A key is stored. Enter a new key to replace it.' : 'Stored in VS Code’s secret storage, never in settings.json.',
      placeHolder: 'AIza…',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() && /\s/.test(v.trim()) ? 'An API key has no spaces' : undefined),
    });
    if (key === undefined || !key.trim()) return;
    await conn.setApiKey(key.trim()); // secrets.onDidChange pushes the settings
    void vscode.window.showInformationMessage('Sidecar: API key saved in the secret storage.');
  });

  register('sidecar.clearApiKey', async () => {
    await conn.setApiKey(undefined);
    void vscode.window.showInformationMessage('Sidecar: API key removed.');
  });

  context.subscriptions.push(registerDoctorCommands(conn));
  register('sidecar.showLog', () => conn.output.show(true));
  register('sidecar.restartServer', () => conn.start());
  register('sidecar.reinstallServer', () => conn.reinstall());

  async function loadTranscript(sessionId?: string) {
    try {
      const t = await conn.api.getTranscript(sessionId);
      chat.model.loadTranscript(t.entries);
    } catch (e) {
      chat.model.reset();
      conn.output.warn(`getTranscript: ${errorMessage(e)}`);
    }
    try { conn.acceptUsage(await conn.api.getTokenUsage()); } catch { /* a tokenUsage push follows anyway */ }
    await refreshPins();
  }

  status.setState('starting');
  await conn.start();
}

interface SessionPick extends vscode.QuickPickItem { session: SessionSummary }

const RENAME_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('edit'), tooltip: 'Rename' };
const DELETE_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete (to the trash for 30 days)' };

function sessionPickItem(s: SessionSummary, current: string | undefined): SessionPick {
  const updated = new Date(s.lastUpdated);
  const when = Number.isNaN(updated.getTime()) ? s.lastUpdated : updated.toLocaleString();
  const branch = s.parentSessionId ? ` · branch of ${s.parentSessionId.slice(0, 8)}` : '';
  return {
    label: `${s.sessionId === current ? '$(circle-filled) ' : ''}${s.parentSessionId ? '$(repo-forked) ' : ''}${s.title || '(untitled)'}`,
    description: `${sessionDescription(s)}${branch}`,
    detail: `Last used ${when}${s.sessionId === current ? ' · current session' : ''}`,
    buttons: s.sessionId === current ? [RENAME_BUTTON] : [RENAME_BUTTON, DELETE_BUTTON],
    session: s,
  };
}

export async function deactivate(): Promise<void> {
  await connection?.stop();
  connection = undefined;
}
