/** The status bar item: token usage from sidecar/tokenUsage; click to compress. */
import * as vscode from 'vscode';
import type { ConnectionState } from './connectionTypes';
import { CompressedParams, McpServerInfo, TokenUsage } from './protocol';
import { LastCompaction, TOOLTIP_COMMANDS, exact, lastCompactionFrom, statusLevel, statusText, statusTooltip } from './status';

export class UsageStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private usage: TokenUsage | undefined;
  private last: LastCompaction | undefined;
  private state: ConnectionState = 'stopped';
  private error: string | undefined;
  private compressing = false;
  private mcp: McpServerInfo[] = [];
  private memory: string | undefined;

  constructor() {
    this.item = vscode.window.createStatusBarItem('sidecar.usage', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Sidecar Token Usage';
    this.render();
    this.item.show();
  }

  setState(state: ConnectionState, error?: string): void {
    this.state = state;
    this.error = error;
    this.render();
  }

  setUsage(usage: TokenUsage): void {
    if (this.usage && this.usage.sessionId !== usage.sessionId) this.last = undefined; // another session
    this.usage = usage;
    this.render();
  }

  setCompressed(p: CompressedParams): void {
    this.last = lastCompactionFrom(p);
    this.render();
  }

  /** The last compaction was undone (the tooltip says so until the next one). */
  setUndone(): void {
    if (this.last) { this.last = { ...this.last, undone: true }; this.render(); }
  }

  /** The MCP servers of the last sidecar/mcpStatus (a line of the tooltip). */
  setMcp(servers: McpServerInfo[]): void {
    this.mcp = servers;
    this.render();
  }

  /** The tooltip's memory line ("Memory: 2 files (1,234 tokens)", src/memory.ts), from sidecar/memoryChanged. */
  setMemory(line: string | undefined): void {
    this.memory = line;
    this.render();
  }

  setCompressing(on: boolean): void {
    this.compressing = on;
    this.render();
  }

  /** The text the item shows now (the e2e test reads the same from the DOM). */
  get text(): string { return this.item.text; }

  private render(): void {
    const item = this.item;
    item.backgroundColor = undefined;
    item.color = undefined;
    if (this.state === 'failed') {
      item.text = '$(error) Sidecar';
      item.tooltip = new vscode.MarkdownString(`**Sidecar is not running**\n\n${this.error ?? ''}\n\nClick to show the log.`);
      item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      item.command = 'sidecar.showLog';
      item.accessibilityInformation = { label: 'Sidecar is not running. Show the log.' };
      return;
    }
    if (this.state === 'installing') {
      item.text = '$(sync~spin) Sidecar: installing server';
      item.tooltip = 'Installing the sidecar server into the extension\'s private environment (first start, or a new version). Click to show the log.';
      item.command = 'sidecar.showLog';
      item.accessibilityInformation = { label: 'Sidecar: installing the server' };
      return;
    }
    if (this.state === 'starting' || this.state === 'restarting' || (this.state === 'running' && !this.usage)) {
      item.text = this.state === 'restarting' ? '$(sync~spin) Sidecar restarting' : '$(sync~spin) Sidecar';
      item.tooltip = this.state === 'restarting' ? 'The sidecar stopped unexpectedly and is restarting' : 'Starting the sidecar…';
      item.command = 'sidecar.showLog';
      item.accessibilityInformation = { label: item.tooltip };
      return;
    }
    if (this.state === 'stopped' || !this.usage) {
      item.text = '$(circle-slash) Sidecar';
      item.tooltip = 'The sidecar is stopped. Click to restart it.';
      item.command = 'sidecar.restartServer';
      item.accessibilityInformation = { label: item.tooltip };
      return;
    }
    const u = this.usage;
    item.text = this.compressing ? statusText(u).replace('$(pulse)', '$(sync~spin)') : statusText(u);
    const md = new vscode.MarkdownString(statusTooltip(u, this.last, this.mcp, this.memory) + (this.compressing ? '  \n\n$(sync~spin) Compressing…' : ''), true);
    md.isTrusted = { enabledCommands: TOOLTIP_COMMANDS }; // the tooltip's links: Show context, Select model, …
    item.tooltip = md;
    const level = statusLevel(u);
    if (level === 'error') item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
    else if (level === 'warning') item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    item.command = { title: 'Compress Conversation', command: 'sidecar.compress' };
    item.accessibilityInformation = {
      label: `Sidecar: ${u.percentUsed.toFixed(1)} percent of the context used, ${exact(u.promptTokenCount)} of ${exact(u.tokenLimit)} tokens. Activate to compress the conversation.`,
    };
  }

  dispose(): void { this.item.dispose(); }
}
