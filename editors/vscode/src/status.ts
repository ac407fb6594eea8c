/**
 * What the status bar item shows: text, colour level and tooltip. Pure functions of the last
 * sidecar/tokenUsage and sidecar/compressed notifications (no vscode import: unit-tested under Node).
 */
import { CompressedParams, CompressionStatus, McpServerInfo, TokenUsage } from './protocol';
import { mcpFailureCause } from './notices';

/** True when a compression status means the history got smaller. */
export function compressionSucceeded(status: CompressionStatus): boolean {
  return status === 'COMPRESSED' || status === 'CONTENT_TRUNCATED';
}

/** At or above this percentage the item turns to the error colour, whatever the threshold. */
export const ERROR_PERCENT = 95;

export type StatusLevel = 'normal' | 'warning' | 'error';

/** The last compaction, as remembered for the tooltip. */
export interface LastCompaction {
  status: CompressionStatus;
  trigger: 'auto' | 'manual';
  originalTokenCount: number;
  newTokenCount: number;
  at: Date;
  /** "Undo Last Compaction" restored the history from before it */
  undone?: boolean;
}

export function lastCompactionFrom(params: CompressedParams, at: Date = new Date()): LastCompaction {
  return {
    status: params.status,
    trigger: params.trigger,
    originalTokenCount: params.originalTokenCount,
    newTokenCount: params.newTokenCount,
    at,
  };
}

/** 950 → "950", 9,120 → "9.1K", 471,234 → "471K", 1,048,576 → "1M", 2,097,152 → "2.1M". */
export function compactTokens(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '?';
  if (n < 1000) return String(Math.round(n));
  if (n < 10_000) return `${trim1(Math.floor(n / 100) / 10)}K`;
  const k = Math.round(n / 1000);
  if (k < 1000) return `${k}K`;
  return `${trim1(Math.round(n / 100_000) / 10)}M`;
}

/** Percentages shown in the bar never round up across a colour boundary: 94.96 → "94%", 0.46 → "0.4%". */
export function compactPercent(p: number): string {
  if (!Number.isFinite(p)) return '?%';
  const clamped = Math.max(0, p);
  if (clamped < 10) return `${trim1(Math.floor(clamped * 10) / 10)}%`;
  return `${Math.floor(clamped)}%`;
}

function trim1(x: number): string {
  return x.toFixed(1).replace(/\.0$/, '');
}

/** The threshold as a percentage with one decimal (0.7 → 70, not 70.00000000000001). */
export function thresholdPercent(compressionThreshold: number): number {
  return Math.round(compressionThreshold * 1000) / 10;
}

/** Whether `next` should replace `current`: pushes can be overtaken by an answer (or the other way round). */
export function isNewerUsage(current: Pick<TokenUsage, 'seq'> | undefined, next: Pick<TokenUsage, 'seq'>): boolean {
  return current === undefined || typeof next.seq !== 'number' || next.seq > current.seq;
}

export function statusLevel(usage: Pick<TokenUsage, 'percentUsed' | 'compressionThreshold'>): StatusLevel {
  if (usage.percentUsed >= ERROR_PERCENT) return 'error';
  if (usage.percentUsed >= thresholdPercent(usage.compressionThreshold)) return 'warning';
  return 'normal';
}

/** `$(pulse) 45% · 471K/1M`, and ` · compacts at next message` when the next message compacts first. */
export function statusText(usage: Pick<TokenUsage, 'percentUsed' | 'promptTokenCount' | 'tokenLimit' | 'compactsAtNextMessage'>): string {
  const due = usage.compactsAtNextMessage ? ' · compacts at next message' : '';
  return `$(pulse) ${compactPercent(usage.percentUsed)} · ${compactTokens(usage.promptTokenCount)}/${compactTokens(usage.tokenLimit)}${due}`;
}

/** The commands the tooltip's links run (a MarkdownString runs only the commands it names). */
export const TOOLTIP_COMMANDS = ['sidecar.showContext', 'sidecar.selectModel', 'sidecar.compress', 'sidecar.postponeCompaction'];

export function exact(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function mdEscape(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, (c) => `\\${c}`);
}

function clock(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function describeCompaction(c: LastCompaction): string {
  const what = compressionSucceeded(c.status)
    ? `${exact(c.originalTokenCount)} → ${exact(c.newTokenCount)} tokens`
    : `${statusLabel(c.status)} (${exact(c.originalTokenCount)} tokens kept)`;
  return `${what}, ${c.trigger}, at ${clock(c.at)}${c.undone ? ' — undone (the history from before it is back)' : ''}`;
}

export function statusLabel(status: CompressionStatus): string {
  switch (status) {
    case 'COMPRESSED': return 'compressed';
    case 'CONTENT_TRUNCATED': return 'truncated';
    case 'NOOP': return 'nothing to compress';
    case 'COMPRESSION_FAILED_INFLATED_TOKEN_COUNT': return 'not beneficial: the summary was not smaller';
    case 'COMPRESSION_FAILED_INSUFFICIENT_REDUCTION': return 'not kept: it saved too little';
    case 'COMPRESSION_FAILED_TOKEN_COUNT_ERROR': return 'failed: could not count tokens';
    case 'COMPRESSION_FAILED_EMPTY_SUMMARY': return 'failed: empty summary';
    default: return String(status);
  }
}

/** Markdown tooltip: exact counts, model, threshold, source, the last compaction, memory (`memoryLine`) and MCP. */
export function statusTooltip(usage: TokenUsage, last?: LastCompaction, mcp?: readonly McpServerInfo[], memoryLine?: string): string {
  const threshold = thresholdPercent(usage.compressionThreshold);
  const thresholdTokens = Math.floor(usage.tokenLimit * usage.compressionThreshold);
  const source = sourceText(usage);
  const lines = [
    `**Sidecar** — ${usage.percentUsed.toFixed(1)}% of the context window`,
    '',
    `Tokens: ${exact(usage.promptTokenCount)} / ${exact(usage.tokenLimit)}`,
    `Model: ${mdEscape(usage.model)}`,
    `Backend: ${mdEscape(usage.backend || 'unknown')}`,
    ...(typeof usage.cachedTokenCount === 'number' && usage.cachedTokenCount > 0
      ? [`Cached: ${exact(usage.cachedTokenCount)} tokens of the last prompt`]
      : []),
    `Auto-compress at: ${threshold}% (${exact(thresholdTokens)} tokens)`,
    `Source: ${source}`,
    ...preparationLine(usage),
    ...pauseLine(usage),
    ...(usage.compactsAtNextMessage
      ? ['**Compacts at the next message** — [compress now](command:sidecar.compress) · [postpone once](command:sidecar.postponeCompaction)']
      : usage.compactionPostponed ? ['Automatic compaction postponed for the next message'] : []),
    `Last compaction: ${last ? describeCompaction(last) : 'none in this session'}`,
    ...(memoryLine ? [memoryLine] : []),
    ...(mcp && mcp.length ? [mcpSummary(mcp)] : []),
    '',
    '[Show context](command:sidecar.showContext) · [Select model](command:sidecar.selectModel)',
    '',
    'Click to compress the conversation.',
  ];
  return lines.join('  \n');
}

/** After Undo Last Compaction: until when automatic compaction holds off. */
function pauseLine(usage: TokenUsage): string[] {
  const until = usage.autoCompactionPausedUntil;
  if (typeof until !== 'number') return [];
  const pct = Math.floor((100 * until) / usage.tokenLimit);
  return [`Auto-compaction paused after undo until ${pct}% (${exact(until)} tokens), or until you compress`];
}

/** Background compaction's state, when there is one to tell: never a popup, only this line. */
function preparationLine(usage: TokenUsage): string[] {
  switch (usage.summaryPreparation) {
    case 'preparing': return ['Next compaction: preparing summary in the background'];
    case 'ready': return ['Next compaction: summary ready (applied at the threshold without waiting)'];
    default: return [];
  }
}

/** What the count is: Gemini's report of the last request, or which local estimate. */
export function sourceText(usage: Pick<TokenUsage, 'source' | 'estimateReason'>): string {
  if (usage.source === 'api') return 'api (reported by Gemini for the last request)';
  switch (usage.estimateReason) {
    case 'newSession': return 'estimate of the empty conversation (system prompt and tools; nothing sent yet)';
    case 'undo': return 'estimate of the restored history after the undo (system prompt and tools included; Gemini reports the exact count with the next reply)';
    case 'resume': return 'estimate of the resumed history (system prompt and tools included)';
    default: return 'estimate (the history changed since the last reply)';
  }
}

/** The session picker's description: "12 messages · 1 compaction". */
export function sessionDescription(s: { messageCount: number; compactionCount: number }): string {
  return `${plural(s.messageCount, 'message')}${s.compactionCount ? ` · ${plural(s.compactionCount, 'compaction')}` : ''}`;
}

/**
 * A session's row in the Resume and Delete picks. Sessions with the same title are told apart by their message
 * count, when they were last used (date and time) and the start of their id.
 */
export function sessionPickText(
  s: { sessionId: string; title?: string | null; messageCount: number; compactionCount: number; lastUpdated: string; parentSessionId?: string | null },
  current: string | undefined, title: string,
): { label: string; description: string; detail: string } {
  const updated = new Date(s.lastUpdated);
  const when = Number.isNaN(updated.getTime()) ? s.lastUpdated : updated.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  const branch = s.parentSessionId ? ` · branch of ${s.parentSessionId.slice(0, 8)}` : '';
  return {
    label: `${s.sessionId === current ? '$(circle-filled) ' : ''}${s.parentSessionId ? '$(repo-forked) ' : ''}${title}`,
    description: `${sessionDescription(s)}${branch} · id ${s.sessionId.slice(0, 8)}`,
    detail: `Last used ${when}${s.sessionId === current ? ' · current session' : ''}`,
  };
}

/** "1 compaction", "2 compactions". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Information for successes and no-ops, a warning for failed compactions. */
export function compressedMessageLevel(status: CompressionStatus): 'info' | 'warning' {
  return compressionSucceeded(status) || status === 'NOOP' ? 'info' : 'warning';
}

const MCP_ORDER: McpServerInfo['status'][] = ['ready', 'starting', 'failed', 'disabled'];

/** The MCP servers in one line, a count per status: "MCP: 2 ready, 1 failed". */
export function mcpSummary(servers: readonly McpServerInfo[]): string {
  const parts = MCP_ORDER.map((st) => [st, servers.filter((s) => s.status === st).length] as const)
    .filter(([, n]) => n > 0).map(([st, n]) => `${n} ${st}`);
  return `MCP: ${parts.length ? parts.join(', ') : 'no servers'}`;
}

/**
 * The failures to tell about, once each: servers failed now that were not failed in `told` (the names told before).
 * Returns them and the new set of names told (a server that recovers leaves the set, so its next failure is told).
 */
export function newMcpFailures(told: ReadonlySet<string>, servers: readonly McpServerInfo[]): { fresh: McpServerInfo[]; told: Set<string> } {
  const failed = servers.filter((s) => s.status === 'failed');
  return { fresh: failed.filter((s) => !told.has(s.name)), told: new Set(failed.map((s) => s.name)) };
}

/** One server in the MCP quick pick: its status and tools, or why it failed. */
export function mcpPick(s: McpServerInfo): { label: string; description: string; detail: string } {
  const icon = s.status === 'ready' ? '$(check)' : s.status === 'failed' ? '$(error)' : s.status === 'starting' ? '$(sync~spin)' : '$(circle-slash)';
  return {
    label: `${icon} ${s.name}`,
    description: `${s.status} · ${plural(s.tools.length, 'tool')}`,
    detail: s.error ? mcpFailureCause(s.error) : (s.tools.length ? s.tools.join(', ') : 'no tools'),
  };
}
