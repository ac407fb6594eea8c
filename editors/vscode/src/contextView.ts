/**
 * What the "Sidecar: Show Context" view shows (a bar per category of the next request, then the free space) and the
 * "Sidecar: Select Model" pick's rows. Pure functions of sidecar/getContextBreakdown and sidecar/listModels (no vscode
 * import: unit-tested under Node).
 */
import { ContextBreakdown, ContextRow, ModelInfo } from './protocol';

export function htmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c] as string));
}

function exact(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** A row's share of the window in percent, one decimal. */
export function share(tokens: number, limit: number): number {
  return Math.round((1000 * tokens) / Math.max(limit, 1)) / 10;
}

/** What clicking a row does: open a memory file, manage an MCP server, nothing. */
export function rowAction(row: ContextRow): { kind: 'file' | 'mcp'; target: string } | undefined {
  if (row.category === 'memoryFile' && row.target) return { kind: 'file', target: row.target };
  if (row.category === 'mcpTools' && row.target) return { kind: 'mcp', target: row.target };
  return undefined;
}

/** The header line: total, source, model, summary model, threshold. */
export function contextHeader(b: ContextBreakdown): string {
  const how = b.source === 'api' ? 'counted by the API' : 'estimated';
  return `${exact(b.promptTokens)} of ${exact(b.tokenLimit)} tokens (${share(b.promptTokens, b.tokenLimit)}%, ${how}) · model ${b.model} · summaries by ${b.compressionModel} · compaction at ${exact(b.thresholdTokens)} tokens`;
}

/** The body of the view: the header, a row per category with its bar, the actions. `nonce` for the script. */
export function contextBody(b: ContextBreakdown): string {
  const rows = b.rows.map((row, i) => {
    const action = rowAction(row);
    const pct = share(row.tokens, b.tokenLimit);
    const free = row.category === 'freeToThreshold' || row.category === 'freeToWindow';
    const label = action ? `<a href="#" data-row="${i}">${htmlEscape(row.label)}</a>` : htmlEscape(row.label);
    return `<tr class="row ${htmlEscape(row.category)}${free ? ' free' : ''}" data-category="${htmlEscape(row.category)}">`
      + `<td class="label">${label}</td><td class="tokens">${exact(row.tokens)}</td><td class="pct">${pct}%</td>`
      + `<td class="bar"><div style="width:${Math.min(pct, 100)}%"></div></td><td class="source">${row.source}</td></tr>`;
  }).join('\n');
  const due = b.compactsAtNextMessage
    ? '<p class="due">The next message compacts the conversation first.</p>'
    : b.compactionPostponed ? '<p class="due">The automatic compaction is postponed for the next message.</p>' : '';
  return `<h2>Context window</h2>
<p id="header">${htmlEscape(contextHeader(b))}</p>
${due}
<table id="context-rows"><thead><tr><th>what</th><th>tokens</th><th>%</th><th></th><th>source</th></tr></thead><tbody>
${rows}
</tbody></table>
<p class="actions"><button data-action="compress">Compress now</button> <button data-action="focus">Compress with a focus…</button>${b.compactsAtNextMessage ? ' <button data-action="postpone">Postpone once</button>' : ''} <button data-action="model">Select model…</button> <button data-action="refresh">Refresh</button></p>`;
}

/** The whole page of the webview: a strict CSP, the body, a script that posts the clicks to the extension. */
export function contextHtml(b: ContextBreakdown, nonce: string, cspSource: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}'">
<style nonce="${nonce}">
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); }
table { border-collapse: collapse; width: 100%; } td, th { padding: 2px 8px; text-align: left; }
td.tokens, td.pct { text-align: right; font-variant-numeric: tabular-nums; }
td.bar { width: 40%; } td.bar div { height: 10px; background: var(--vscode-charts-blue); min-width: 1px; }
tr.free td.bar div { background: var(--vscode-charts-green); } td.source { opacity: 0.7; }
p.due { color: var(--vscode-editorWarning-foreground); }
</style></head><body>
${contextBody(b)}
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
document.addEventListener('click', (e) => {
  const a = e.target.closest('[data-row]');
  if (a) { e.preventDefault(); vscode.postMessage({ type: 'row', index: Number(a.dataset.row) }); return; }
  const b = e.target.closest('[data-action]');
  if (b) vscode.postMessage({ type: b.dataset.action });
});
</script></body></html>`;
}

/** A model in the Select Model pick. */
export function modelPickItem(m: ModelInfo, current: string): { label: string; description: string; id: string } {
  return {
    label: `${m.id === current ? '$(check) ' : ''}${m.id}`,
    description: `${m.name} · ${exact(m.tokenLimit)}-token window`,
    id: m.id,
  };
}
