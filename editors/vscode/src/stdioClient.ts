/**
 * A small sidecar client for plain Node (no VS Code): spawns the server, speaks JSON-RPC with LSP framing
 * over its stdio through vscode-jsonrpc, runs the LSP lifecycle and exposes the typed SidecarApi.
 * Used by the protocol round-trip test; handy for scripts too.
 */
import { ChildProcess, spawn } from 'child_process';
import {
  CancellationTokenSource, MessageConnection, StreamMessageReader, StreamMessageWriter, createMessageConnection,
} from 'vscode-languageserver-protocol/node';
import { SidecarApi } from './api';
import { SidecarSettings } from './protocol';

export interface StdioClientOptions {
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  settings: SidecarSettings;
  /** announce window.workDoneProgress (the server then asks window/workDoneProgress/create) */
  workDoneProgress?: boolean;
  onStderr?: (chunk: string) => void;
}

export class StdioSidecarClient {
  readonly api: SidecarApi;
  private exited: Promise<number | null>;

  private constructor(readonly process: ChildProcess, readonly connection: MessageConnection) {
    this.api = new SidecarApi(connection);
    this.exited = new Promise((resolve) => process.once('exit', (code) => resolve(code)));
  }

  initializeResult: unknown;

  static async start(options: StdioClientOptions): Promise<StdioSidecarClient> {
    const child = spawn(options.command, options.args, {
      cwd: options.cwd, env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => options.onStderr?.(chunk));
    const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const client = new StdioSidecarClient(child, connection);
    // answer progress creation so the server can report work-done progress
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.onNotification('window/showMessage', () => undefined);
    connection.onNotification('window/logMessage', () => undefined);
    connection.listen();
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve());
    });
    await spawned;
    client.initializeResult = await connection.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'sidecar-node-client' },
      rootUri: null,
      capabilities: { window: { workDoneProgress: options.workDoneProgress ?? true } },
      initializationOptions: options.settings,
    });
    await connection.sendNotification('initialized', {});
    return client;
  }

  cancellation(): CancellationTokenSource {
    return new CancellationTokenSource();
  }

  /** shutdown + exit; kills the process if it does not exit within `graceMs`. Answers the exit code. */
  async stop(graceMs = 5000): Promise<number | null> {
    try {
      await withTimeout(this.connection.sendRequest('shutdown'), graceMs);
      await this.connection.sendNotification('exit');
    } catch {
      // the process is gone or stuck: fall through to the kill below
    }
    const code = await withTimeout(this.exited, graceMs).catch(() => {
      this.process.kill('SIGKILL');
      return this.exited;
    });
    this.connection.dispose();
    return code;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}
