/**
 * The sidecar process and its vscode-languageclient connection: start, stop, restart, crash recovery
 * (restart + sidecar/resumeSession with the last sessionId seen in sidecar/tokenUsage), settings pushes,
 * and the server's notifications re-emitted as VS Code events.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import {
  CloseAction, CloseHandlerResult, ErrorAction, LanguageClient, LanguageClientOptions, ResponseError, State, StreamInfo,
} from 'vscode-languageclient/node';
import { SidecarApi, errorMessage } from './api';
import type { ConnectionState, ReadyEvent } from './connectionTypes';
import { ProgressBridge } from './progress';
import { protocolWarning } from './protocolVersion';
import {
  CompressedParams, McpStatusParams, MemoryInfo, ConfirmToolCallParams, ConfirmToolCallResult, IdeContextParams, MessageDeltaParams, Method, RetryParams, ToolOutputsMaskedParams,
  ServerNotifications, ServerRequests, TodosChangedParams, TokenUsage, ToolCallParams,
} from './protocol';
import { RestartPolicy, startErrorAction } from './restartPolicy';
import { isNewerUsage } from './status';
import { ServerCommand, displayCommand, resolveServerCommand, sameServerCommand } from './serverCommand';
import { venvHasSidecar } from './serverInstall';
import { ServerLogParser } from './serverLog';
import { InstallError, PrivateServer } from './serverSetup';
import { settingScope } from './settingScope';
import { SettingsWire, buildSettings, redacted } from './settings';
import { WireEdit, editedUris, saveWaitMs, waitUntilSaved } from './editSaves';
import { ServerNotices, clientErrorLogged, stateAfterFailedStart } from './notices';
import { startFailureCause } from './wording';


const SECRET_KEY = 'sidecar.apiKey';

/** The LanguageClient, but its errors go to the log only: the extension shows its own, clearer messages. */
class SidecarLanguageClient extends LanguageClient {
  /** set once the server answered `initialize`: stopping a client that never ran is not an error worth a trace */
  ran = false;
  override error(message: string, data?: unknown): void {
    // SidecarConnection logs why in words (no transport stack trace, no "Connection to server got closed")
    if (clientErrorLogged(message, this.ran)) super.error(message, data, false);
  }
}

export class SidecarConnection implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  private client: SidecarLanguageClient | undefined;
  private process: ChildProcess | undefined;
  private stderrTail = '';
  /** how the last server process ended ("code 1", "SIGKILL"), for a start that failed */
  private lastExit: string | undefined;
  private command: ServerCommand | undefined;
  private wasRunning = false;
  /** How many times the server got running (a start-error notification shown before the last run is stale). */
  private runs = 0;
  private resumeAfterRestart: string | undefined;
  private readonly restarts = new RestartPolicy();
  private readonly disposables: vscode.Disposable[] = [];
  private installError: InstallError | undefined;
  readonly privateServer: PrivateServer;
  private readonly notices = new ServerNotices();
  private confirmHandler: ((p: ConfirmToolCallParams, token: vscode.CancellationToken) => Promise<ConfirmToolCallResult>) | undefined;

  state: ConnectionState = 'stopped';
  lastError: string | undefined;
  lastUsage: TokenUsage | undefined;
  /** the session of the last sidecar/tokenUsage: what a restarted server resumes */
  sessionId: string | undefined;
  readonly progress: ProgressBridge;

  private readonly _onState = new vscode.EventEmitter<ConnectionState>();
  readonly onDidChangeState = this._onState.event;
  private readonly _onUsage = new vscode.EventEmitter<TokenUsage>();
  readonly onTokenUsage = this._onUsage.event;
  private readonly _onDelta = new vscode.EventEmitter<MessageDeltaParams>();
  readonly onMessageDelta = this._onDelta.event;
  private readonly _onCompressed = new vscode.EventEmitter<CompressedParams>();
  readonly onCompressed = this._onCompressed.event;
  private readonly _onMcpStatus = new vscode.EventEmitter<McpStatusParams>();
  /** sidecar/mcpStatus: every MCP server, whenever one's status or tools change */
  readonly onMcpStatus = this._onMcpStatus.event;
  private readonly _onMemoryChanged = new vscode.EventEmitter<MemoryInfo>();
  /** sidecar/memoryChanged: the context files loaded, whenever they change (start, refresh, add, an edit) */
  readonly onMemoryChanged = this._onMemoryChanged.event;
  private readonly _onTodosChanged = new vscode.EventEmitter<TodosChangedParams>();
  /** sidecar/todosChanged: the model's whole todo list, whenever it changes (write_todos, a clear, a switch) */
  readonly onTodosChanged = this._onTodosChanged.event;
  private readonly _onToolCall = new vscode.EventEmitter<ToolCallParams>();
  readonly onToolCall = this._onToolCall.event;
  private readonly _onRetry = new vscode.EventEmitter<RetryParams>();
  readonly onRetry = this._onRetry.event;
  private readonly _onToolOutputsMasked = new vscode.EventEmitter<ToolOutputsMaskedParams>();
  /** sidecar/toolOutputsMasked: old tool outputs were masked before a request (once per masking) */
  readonly onToolOutputsMasked = this._onToolOutputsMasked.event;
  /** fired after a (re)start once the server answers, with the session it was to continue and how that went */
  private readonly _onReady = new vscode.EventEmitter<ReadyEvent>();
  readonly onReady = this._onReady.event;
  /** The session the chat view shows (default: the last one seen): every restart, for whatever reason, resumes it. */
  shownSession: () => string | undefined = () => this.sessionId;
  /** sidecar.serverCommand as it was in effect when the server was last started */
  private startedServerCommand: unknown;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel('Sidecar', { log: true });
    this.progress = new ProgressBridge();
    this.privateServer = new PrivateServer(context, this.output);
    this.disposables.push(this.output, this._onState, this._onUsage, this._onDelta, this._onCompressed, this._onToolCall, this._onRetry, this._onToolOutputsMasked, this._onReady, this._onMcpStatus, this._onMemoryChanged, this._onTodosChanged);
  }

  get api(): SidecarApi {
    if (!this.client || this.state !== 'running') throw new Error(this.notRunningMessage());
    return new SidecarApi(this.client);
  }

  get isRunning(): boolean { return this.state === 'running'; }

  notRunningMessage(): string {
    switch (this.state) {
      case 'starting': return 'The sidecar is still starting.';
      case 'installing': return 'The sidecar server is being installed (see the progress notification).';
      case 'restarting': return 'The sidecar is restarting.';
      case 'failed': return `The sidecar is not running: ${this.lastError ?? 'it could not start'}.`;
      default: return 'The sidecar is not running.';
    }
  }

  setConfirmHandler(h: (p: ConfirmToolCallParams, token: vscode.CancellationToken) => Promise<ConfirmToolCallResult>): void {
    this.confirmHandler = h;
  }

  async settings(): Promise<SettingsWire> {
    const config = vscode.workspace.getConfiguration('sidecar');
    const key = await this.context.secrets.get(SECRET_KEY);
    return buildSettings((k) => config.inspect(k), key, vscode.workspace.isTrusted);
  }

  async setApiKey(key: string | undefined): Promise<void> {
    if (key) await this.context.secrets.store(SECRET_KEY, key); else await this.context.secrets.delete(SECRET_KEY);
  }

  async hasApiKey(): Promise<boolean> {
    return !!(await this.context.secrets.get(SECRET_KEY));
  }

  /** Send the current settings (after a configuration or API key change). */
  async pushSettings(): Promise<void> {
    const settings = await this.settings();
    this.initOptions = settings; // a restarted server starts with the current settings
    if (!this.client || this.state !== 'running') return;
    this.output.info(`settings changed: ${JSON.stringify(redacted(settings))}`);
    await this.client.sendNotification('workspace/didChangeConfiguration', { settings: { sidecar: settings } });
  }

  notifyIdeContext(params: IdeContextParams): void {
    if (!this.client || this.state !== 'running') return;
    this.client.sendNotification(Method.ideContext, params).catch((e) => this.output.warn(`ideContext: ${errorMessage(e)}`));
  }

  private setState(state: ConnectionState): void {
    if (this.state === state) return;
    this.state = state;
    this._onState.fire(state);
  }

  /** The command the server is started with (also what "Sidecar: Run Doctor" runs). */
  resolveCommand(): ServerCommand {
    const config = vscode.workspace.getConfiguration('sidecar');
    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
    return resolveServerCommand({
      setting: config.get('serverCommand'),
      workspaceFolder: folder,
      home: os.homedir(),
      platform: process.platform,
      trusted: vscode.workspace.isTrusted,
      exists: (p) => { try { return fs.statSync(p).isFile(); } catch { return false; } },
      venvHasSidecar: (f) => venvHasSidecar(f, process.platform, (d) => { try { return fs.readdirSync(d); } catch { return []; } }),
      privatePython: this.privateServer.python,
    });
  }

  /** Spawn the server ourselves: we keep its pid and the tail of its stderr for error messages. */
  /** Take a usage (pushed, or answered by getTokenUsage) unless a newer one of this server was seen already. */
  acceptUsage(u: TokenUsage): void {
    if (!isNewerUsage(this.lastUsage, u)) return;
    this.lastUsage = u;
    if (u.sessionId) this.sessionId = u.sessionId;
    this._onUsage.fire(u);
  }

  private async spawnServer(): Promise<StreamInfo> {
    this.lastUsage = undefined; // a new server process counts seq from 1 again
    // back off when a restarted server keeps dying: 0, 0.5, 1, 2, 4 s
    const attempt = this.wasRunning ? this.restarts.recent : 0;
    if (attempt > 1) await new Promise((r) => setTimeout(r, Math.min(4000, 500 * 2 ** (attempt - 2))));
    const cmd = this.resolveCommand();
    this.command = cmd;
    this.stderrTail = '';
    this.lastExit = undefined;
    if (cmd.source === 'private') {
      try {
        await this.privateServer.ensure(() => this.setState('installing'));
      } catch (e) {
        this.installError = e instanceof InstallError ? e : new InstallError(errorMessage(e));
        throw this.installError;
      } finally {
        if (this.state === 'installing') this.setState('starting');
      }
    }
    const cwd = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath ?? os.homedir();
    this.output.info(`starting ${displayCommand(cmd)} (from ${cmd.source}) in ${cwd}`);
    const env: NodeJS.ProcessEnv = { ...process.env, PYTHONUNBUFFERED: '1' };
    if (cmd.source === 'private') { delete env.PYTHONPATH; delete env.PYTHONHOME; env.PYTHONNOUSERSITE = '1'; } // only its own packages
    const child = spawn(cmd.command, cmd.args, { cwd, env, stdio: 'pipe' });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => reject(new Error(`cannot run ${displayCommand(cmd)}: ${err.message}`)));
    });
    child.stderr!.setEncoding('utf8');
    const parser = new ServerLogParser();
    const toLog = (lines: Array<[string, string]>) => {
      for (const [level, line] of lines) {
        if (level === 'error') this.output.error(line);
        else if (level === 'warn') this.output.warn(line);
        else if (level === 'debug') this.output.debug(line);
        else if (level === 'trace') this.output.trace(line);
        else this.output.info(line);
      }
    };
    child.stderr!.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4000);
      toLog(parser.push(chunk));
    });
    child.stderr!.on('end', () => toLog(parser.flush()));
    child.once('exit', (code, signal) => {
      this.lastExit = signal ?? `code ${code}`;
      this.output.info(`sidecar (pid ${child.pid}) exited with ${this.lastExit}`);
      if (this.process === child) this.process = undefined;
    });
    this.process = child;
    this.output.info(`sidecar started, pid ${child.pid}`);
    // streams, not the process: the client would log the server's stderr (its INFO lines) as errors
    return { reader: child.stdout!, writer: child.stdin!, detached: false };
  }

  get pid(): number | undefined { return this.process?.pid; }

  private createClient(): SidecarLanguageClient {
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.output,
      initializationOptions: () => this.initOptions,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: (): CloseHandlerResult => this.onClosed(),
      },
      initializationFailedHandler: () => false,
      // an applied edit VS Code saves by itself is answered once saved: the server tells the model what is true
      middleware: { workspace: { handleApplyEdit: async (params, next) => {
        const result = await next(params, new vscode.CancellationTokenSource().token);
        if (!(result instanceof ResponseError) && result.applied) await savedByVsCode(params.edit as WireEdit);
        return result;
      } } },
    };
    const client = new SidecarLanguageClient('sidecar', 'Sidecar', () => this.spawnServer(), clientOptions);
    client.registerFeature(this.progress.feature(client));
    // typed by the generated ServerNotifications / ServerRequests: a handler of the wrong shape does not compile
    const on = <M extends keyof ServerNotifications>(method: M, handler: (p: ServerNotifications[M]) => void) => client.onNotification(method, handler);
    on(Method.tokenUsage, (u) => this.acceptUsage(u));
    on(Method.messageDelta, (p) => this._onDelta.fire(p));
    on(Method.compressed, (p) => this._onCompressed.fire(p));
    on(Method.toolCall, (p) => this._onToolCall.fire(p));
    on(Method.retry, (p) => this._onRetry.fire(p));
    on(Method.toolOutputsMasked, (p) => this._onToolOutputsMasked.fire(p));
    on(Method.mcpStatus, (p) => this._onMcpStatus.fire(p));
    on(Method.memoryChanged, (p) => this._onMemoryChanged.fire(p));
    on(Method.todosChanged, (p) => this._onTodosChanged.fire(p));
    // the server's notices, less those the extension says itself or said already in this window
    client.onNotification('window/showMessage', (m: { type: number; message: string }) => {
      if (!this.notices.show(m.message)) { this.output.info(`(not shown again) ${m.message}`); return; }
      const show = m.type === 1 ? vscode.window.showErrorMessage : m.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      void show(m.message);
    });
    type Confirm = ServerRequests[typeof Method.confirmToolCall];
    client.onRequest(Method.confirmToolCall, async (p: Confirm['params'], token: vscode.CancellationToken): Promise<Confirm['result']> => {
      if (!this.confirmHandler) return { decision: 'deny' };
      return this.confirmHandler(p, token);
    });
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) void this.onRunning();
      else if (e.newState === State.Starting && this.wasRunning) this.setState('restarting');
    });
    return client;
  }

  private initOptions: SettingsWire | undefined;

  private onClosed(): CloseHandlerResult {
    if (!this.wasRunning) {
      // never got going: a wrong command, a missing module, a crash at import. Do not loop.
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const tail = lastLines(this.stderrTail, 3);
    if (this.restarts.shouldRestart()) {
      this.resumeAfterRestart = this.shownSession();
      this.output.warn(`the sidecar stopped unexpectedly; restarting (${this.restarts.recent}/${this.restarts.max} in 3 minutes)`); // its last words are in the log already
      this.setState('restarting');
      return { action: CloseAction.Restart, handled: true };
    }
    this.lastError = `it stopped ${this.restarts.max} times in 3 minutes${tail ? ` (${lastLine(tail)})` : ''}`;
    this.setState('failed');
    void this.showStartError(`The sidecar keeps stopping and was not restarted: ${this.lastError}`);
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private async onRunning(): Promise<void> {
    const crashed = this.wasRunning; // the client restarted the process after it died
    this.wasRunning = true;
    this.runs += 1;
    this.lastError = undefined;
    this.setState('running');
    const info = this.client?.initializeResult?.serverInfo;
    this.output.info(`connected to ${info ? `${info.name} ${info.version ?? ''}` : 'the sidecar'}`);
    const mismatch = protocolWarning(this.client?.initializeResult, String(this.context.extension.packageJSON.version), this.command?.source);
    if (mismatch) { this.output.warn(mismatch.message); void this.showStartError(mismatch.message, 'sidecar.serverCommand', mismatch.buttons); }
    let resumed: string | undefined;
    let resumeError: string | undefined;
    const target = this.resumeAfterRestart;
    this.resumeAfterRestart = undefined;
    if (this.client) this.client.ran = true;
    if (target) {
      try {
        const r = await this.api.resumeSession({ sessionId: target });
        resumed = r.sessionId;
        this.output.info(`resumed session ${r.sessionId} (${r.messageCount} messages) after the restart`);
        if (r.forked && r.message) this.output.warn(r.message); // the server tells the user too
      } catch (e) {
        resumeError = errorMessage(e);
        this.output.warn(`could not resume session ${target} after the restart: ${resumeError}`);
      }
    }
    this._onReady.fire({ crashed, target, resumed, resumeError });
  }

  /** Start the server, or restart it: a restart (Restart/Reinstall Server, a new server command, Retry) resumes the
   * session the chat view shows, so the conversation on screen is the one the model sees. */
  async start(): Promise<void> {
    const resume = this.shownSession();
    if (this.client) await this.stop();
    this.resumeAfterRestart = resume;
    this.startedServerCommand = this.serverCommandSetting();
    this.wasRunning = false;
    this.restarts.reset();
    this.setState('starting');
    this.installError = undefined;
    this.initOptions = await this.settings();
    this.output.info(`settings: ${JSON.stringify(redacted(this.initOptions))}`);
    const client = this.createClient();
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      if (this.client !== client) return;
      const tail = lastLines(this.stderrTail, 4);
      const cmd = this.command ? displayCommand(this.command) : 'the sidecar';
      this.client = undefined;
      void client.dispose().catch(() => undefined); // never ran: its "Stopping server failed" is not logged
      void this.killProcess();
      const install = this.installError as InstallError | undefined; // set by spawnServer meanwhile
      if (install?.cancelled) { // the user's choice, not an error
        this.output.info(install.message);
        this.lastError = 'installing the server was cancelled';
        this.setState(stateAfterFailedStart(true)); // stopped, not error-red: the user chose it
        void vscode.window.showInformationMessage(install.message, 'Reinstall').then((c) => { if (c === 'Reinstall') void this.reinstall(); });
        return;
      }
      if (install) {
        this.output.error(install.message);
        this.lastError = install.message.replace(/\.$/, '');
        this.setState('failed');
        void this.showStartError(install.message, 'sidecar.pythonPath', ['Show log', 'Reinstall', 'Open Settings']);
        return;
      }
      // the server's own last words say why, if it said any (its stderr is in the log already, at its levels)
      this.lastError = startFailureCause(lastLine(tail), errorMessage(e), this.lastExit);
      this.output.error(`could not start ${cmd}: ${this.lastError}`);
      this.setState('failed');
      const scope = this.serverCommandScope();
      const hint = this.command?.source === 'setting'
        ? `Check the sidecar.serverCommand setting (it takes effect from your ${scope.label}).`
        : this.command?.source === 'private'
          ? 'Run Sidecar: Reinstall Server, or set sidecar.serverCommand to a sidecar you installed yourself.'
          : `The workspace's .venv has the sidecar but it does not start: fix that environment, or set sidecar.serverCommand (${scope.label}).`;
      void this.showStartError(`Sidecar could not start (${cmd}): ${this.lastError}. ${hint}`, 'sidecar.serverCommand');
    }
  }

  private serverCommandSetting(): unknown {
    return vscode.workspace.getConfiguration('sidecar').get('serverCommand');
  }

  /** Whether sidecar.serverCommand, as in effect in this window, differs from what the server was started with
   * (a User value a remote window ignores changes nothing). */
  serverCommandChanged(): boolean {
    return !sameServerCommand(this.startedServerCommand, this.serverCommandSetting());
  }

  /** Where sidecar.serverCommand takes effect in this window (remote windows ignore the User value). */
  serverCommandScope(): ReturnType<typeof settingScope> {
    return settingScope(vscode.workspace.getConfiguration('sidecar').inspect('serverCommand'), vscode.env.remoteName, vscode.workspace.isTrusted);
  }

  async showStartError(message: string, setting = 'sidecar.serverCommand', buttons = ['Show log', 'Open Settings', 'Retry']): Promise<void> {
    const shownAfter = this.runs;
    const choice = startErrorAction(await vscode.window.showErrorMessage(message, ...buttons), this.runs !== shownAfter);
    if (choice === 'already running') void vscode.window.showInformationMessage('Sidecar: the server is running again; nothing to retry.');
    else if (choice === 'Show log') this.output.show(true);
    else if (choice === 'Open Settings') {
      const scope = setting === 'sidecar.serverCommand' ? this.serverCommandScope() : settingScope(undefined, undefined, true);
      this.output.info(`opening ${scope.label} at ${setting}`);
      void vscode.commands.executeCommand(scope.command, { query: setting });
    } else if (choice === 'Retry') void this.start();
    else if (choice === 'Reinstall') void this.reinstall();
  }

  /** "Sidecar: Reinstall Server": stop, remove the private environment, start (which installs it again). */
  async reinstall(): Promise<void> {
    await this.stop();
    await this.privateServer.remove();
    this.output.info(`removed the private environment ${this.privateServer.dir}`);
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        if (client.state === State.Running) await client.stop(3000);
        else if (client.ran) await client.dispose(1000);
      } catch (e) {
        this.output.warn(`stopping the sidecar: ${errorMessage(e)}`);
      }
    }
    await this.killProcess(1000);
    this.setState('stopped');
  }

  /** Wait up to `graceMs` for the process to exit on its own (after `exit`), then SIGTERM, then SIGKILL. */
  private async killProcess(graceMs = 0): Promise<void> {
    const child = this.process;
    const alive = () => !!child && child.exitCode === null && child.signalCode === null;
    if (!child || !alive()) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const wait = (ms: number) => Promise.race([exited, new Promise<void>((r) => setTimeout(r, ms))]);
    if (graceMs > 0) await wait(graceMs);
    if (alive()) { child.kill('SIGTERM'); await wait(2000); }
    if (alive()) child.kill('SIGKILL');
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) d.dispose();
  }
}

/** Wait (briefly) until VS Code has saved the documents of an applied edit, when its auto save will. */
function savedByVsCode(edit: WireEdit): Promise<void> {
  const dirty = (uri: string) => vscode.workspace.textDocuments.some((d) => d.uri.toString() === vscode.Uri.parse(uri).toString() && d.isDirty);
  const setting = (key: string) => vscode.workspace.getConfiguration().get(key);
  return waitUntilSaved(editedUris(edit), dirty, (l) => vscode.workspace.onDidSaveTextDocument(l), saveWaitMs(setting));
}

function lastLines(text: string, n: number): string {
  return text.trim().split(/\r?\n/).filter((l) => l.trim()).slice(-n).join('\n');
}

/** The last non-empty line (a Python traceback ends with the reason). */
function lastLine(text: string): string {
  const lines = text.trim().split(/\r?\n/).filter((l) => l.trim());
  return (lines.length ? lines[lines.length - 1] : '').slice(0, 300);
}
