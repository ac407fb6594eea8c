import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contextBody, contextHeader, htmlEscape, modelPickItem, rowAction, share } from '../src/contextView';
import { ContextBreakdown, TokenUsage } from '../src/protocol';
import { statusText, statusTooltip } from '../src/status';

const breakdown = (over: Partial<ContextBreakdown> = {}): ContextBreakdown => ({
  sessionId: 's', model: 'gemini-2.5-flash', compressionModel: 'gemini-2.5-flash-lite', tokenLimit: 1_000_000,
  compressionThreshold: 0.5, thresholdTokens: 500_000, promptTokens: 12_000, source: 'api', measuredTokens: 12_000,
  apiPromptTokens: 11_900,
  rows: [
    { category: 'systemPrompt', label: 'System prompt', tokens: 3_000, source: 'estimate' },
    { category: 'mcpTools', label: 'MCP: calc', tokens: 500, source: 'estimate', target: 'calc' },
    { category: 'memoryFile', label: 'GEMINI.md (project)', tokens: 1_000, source: 'estimate', target: '/w/GEMINI.md' },
    { category: 'messages', label: 'Messages <b>', tokens: 7_500, source: 'estimate' },
    { category: 'freeToThreshold', label: 'Free until compaction', tokens: 488_000, source: 'api' },
  ],
  ...over,
});

describe('context view', () => {
  it('names the total, its source, the model and the summary model', () => {
    assert.equal(contextHeader(breakdown()), '12,000 of 1,000,000 tokens (1.2%, counted by the API) · model gemini-2.5-flash · summaries by gemini-2.5-flash-lite · compaction at 500,000 tokens');
  });
  it('has a row per category with its share; a memory file and an MCP server are links, the rest text', () => {
    const body = contextBody(breakdown());
    assert.equal((body.match(/<tr class="row/g) ?? []).length, 5);
    assert.match(body, /<a href="#" data-row="1">MCP: calc<\/a>/);
    assert.match(body, /<a href="#" data-row="2">GEMINI\.md \(project\)<\/a>/);
    assert.match(body, /<td class="label">Messages &lt;b&gt;<\/td>/, 'labels are escaped');
    assert.match(body, /<tr class="row freeToThreshold free"/);
    assert.doesNotMatch(body, /data-action="postpone"/, 'nothing to postpone');
    assert.match(contextBody(breakdown({ compactsAtNextMessage: true })), /data-action="postpone"/);
    assert.equal(share(7_500, 1_000_000), 0.8);
  });
  it('a row opens a memory file or the MCP servers', () => {
    const rows = breakdown().rows;
    assert.deepEqual(rowAction(rows[2]), { kind: 'file', target: '/w/GEMINI.md' });
    assert.deepEqual(rowAction(rows[1]), { kind: 'mcp', target: 'calc' });
    assert.equal(rowAction(rows[0]), undefined);
    assert.equal(htmlEscape(`a"<'&`), 'a&quot;&lt;&#39;&amp;');
  });
  it('a model pick row names the window and marks the current model', () => {
    assert.deepEqual(modelPickItem({ id: 'gemma-4-31b-it', name: 'Gemma 4 31B', tokenLimit: 256_000 }, 'gemma-4-31b-it'),
      { label: '$(check) gemma-4-31b-it', description: 'Gemma 4 31B · 256,000-token window', id: 'gemma-4-31b-it' });
  });
});

describe('status bar: the next message compacts', () => {
  const usage: TokenUsage = {
    seq: 1, sessionId: 's', model: 'm', promptTokenCount: 600_000, tokenLimit: 1_048_576, percentUsed: 57.2,
    compressionThreshold: 0.5, source: 'api', compactsAtNextMessage: true,
  };
  it('says so in the text and offers compress now / postpone once in the tooltip', () => {
    assert.equal(statusText(usage), '$(pulse) 57% · 600K/1M · compacts at next message');
    const tip = statusTooltip(usage);
    assert.match(tip, /\*\*Compacts at the next message\*\* — \[compress now\]\(command:sidecar\.compress\) · \[postpone once\]\(command:sidecar\.postponeCompaction\)/);
    assert.match(tip, /\[Show context\]\(command:sidecar\.showContext\) · \[Select model\]\(command:sidecar\.selectModel\)/);
    assert.equal(statusText({ ...usage, compactsAtNextMessage: false }), '$(pulse) 57% · 600K/1M');
  });
});
