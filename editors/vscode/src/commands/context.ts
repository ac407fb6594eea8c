/**
 * What every command works with (rust-analyzer's `Ctx` style): the connection, the chat view, the status bar and the
 * few helpers several commands share. Each command is a factory `(ctx) => handler` in a file of this folder.
 */
import * as vscode from 'vscode';
import { errorMessage } from '../api';
import { ChatViewProvider } from '../chatView';
import { SidecarConnection } from '../connection';
import { CompressionStatus, SidecarApi } from '../protocol';
import { compressedMessageLevel } from '../status';
import { UsageStatusBar } from '../statusBar';

export type Cmd = (...args: unknown[]) => unknown;
export type CommandFactory = (ctx: Ctx) => Cmd;

export class Ctx {
  /** sidecar/compressed notifications seen so far: a manual compress shows its result only when none came */
  compressedSeen = 0;

  constructor(
    readonly extension: vscode.ExtensionContext,
    readonly conn: SidecarConnection,
    readonly chat: ChatViewProvider,
    readonly status: UsageStatusBar,
  ) {}

  /** The running server's API; throws the reason it is not running (the command wrapper shows it). */
  api(): SidecarApi {
    if (!this.conn.isRunning) throw new Error(this.conn.notRunningMessage());
    return this.conn.api;
  }

  /** Dispose `d` with the extension. */
  own(d: vscode.Disposable): void {
    this.extension.subscriptions.push(d);
  }

  /** Show a compaction outcome: information when it went well (or was not needed), a warning otherwise. */
  showOutcome(status: CompressionStatus, message: string): void {
    if (compressedMessageLevel(status) === 'info') void vscode.window.showInformationMessage(message);
    else void vscode.window.showWarningMessage(message);
  }

  /** Rebuild the chat view from a session's transcript (default: the live one), with its usage and pins. */
  async loadTranscript(sessionId?: string): Promise<void> {
    try {
      const t = await this.conn.api.getTranscript(sessionId ? { sessionId } : {});
      this.chat.model.loadTranscript(t.entries);
    } catch (e) {
      this.chat.model.reset();
      this.conn.output.warn(`getTranscript: ${errorMessage(e)}`);
    }
    try { this.conn.acceptUsage(await this.conn.api.getTokenUsage()); } catch { /* a tokenUsage push follows anyway */ }
    await this.refreshPins();
    await this.refreshTodos();
  }

  /** The model's todo list of the live session, for the Plan section. */
  async refreshTodos(): Promise<void> {
    try { this.chat.model.setTodos((await this.conn.api.getTodos()).items); } catch { this.chat.model.setTodos([]); }
  }

  async refreshPins(): Promise<void> {
    try { this.chat.model.setPins((await this.conn.api.listPins()).pins); } catch { this.chat.model.setPins([]); }
  }
}
