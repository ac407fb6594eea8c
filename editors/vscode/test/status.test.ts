import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenUsage } from '../src/protocol';
import {
  compactPercent, compactTokens, compressedMessageLevel, isNewerUsage, mcpPick, mcpSummary, newMcpFailures, statusLevel, statusText,
  statusTooltip, thresholdPercent,
} from '../src/status';
import { McpServerInfo } from '../src/protocol';

const usage = (over: Partial<TokenUsage> = {}): TokenUsage => ({
  seq: 1, sessionId: 's-1', model: 'gemini-2.5-flash', promptTokenCount: 471_234, tokenLimit: 1_048_576,
  percentUsed: 44.9, compressionThreshold: 0.5, source: 'api', ...over,
});

describe('status text', () => {
  it('matches the documented example', () => {
    assert.equal(statusText(usage({ percentUsed: 45 })), '$(pulse) 45% · 471K/1M');
  });
  it('compacts token counts', () => {
    assert.equal(compactTokens(0), '0');
    assert.equal(compactTokens(950), '950');
    assert.equal(compactTokens(1000), '1K');
    assert.equal(compactTokens(9_120), '9.1K');
    assert.equal(compactTokens(45_000), '45K');
    assert.equal(compactTokens(471_234), '471K');
    assert.equal(compactTokens(999_600), '1M');
    assert.equal(compactTokens(1_048_576), '1M');
    assert.equal(compactTokens(2_097_152), '2.1M');
    assert.equal(compactTokens(256_000), '256K');
    assert.equal(compactTokens(-1), '?');
  });
  it('never rounds a percentage up across a colour boundary', () => {
    assert.equal(compactPercent(94.96), '94%');
    assert.equal(compactPercent(49.99), '49%');
    assert.equal(compactPercent(0.46), '0.4%');
    assert.equal(compactPercent(0), '0%');
    assert.equal(compactPercent(3), '3%');
    assert.equal(compactPercent(100), '100%');
  });
});

describe('usage order', () => {
  it('keeps the highest seq: a late, older push or answer is dropped, a repeat too', () => {
    assert.equal(isNewerUsage(undefined, usage({ seq: 5 })), true);
    assert.equal(isNewerUsage(usage({ seq: 5 }), usage({ seq: 6 })), true);
    assert.equal(isNewerUsage(usage({ seq: 6 }), usage({ seq: 5 })), false);
    assert.equal(isNewerUsage(usage({ seq: 6 }), usage({ seq: 6 })), false);
  });
});

describe('status colour', () => {
  it('is normal below the threshold', () => {
    assert.equal(statusLevel(usage({ percentUsed: 49.9 })), 'normal');
  });
  it('warns at the threshold', () => {
    assert.equal(statusLevel(usage({ percentUsed: 50 })), 'warning');
    assert.equal(statusLevel(usage({ percentUsed: 94.9 })), 'warning');
  });
  it('is an error at 95% whatever the threshold', () => {
    assert.equal(statusLevel(usage({ percentUsed: 95 })), 'error');
    assert.equal(statusLevel(usage({ percentUsed: 99, compressionThreshold: 1 })), 'error');
  });
  it('compares thresholds without float noise (0.7 * 100 = 70.00000000000001)', () => {
    assert.equal(thresholdPercent(0.7), 70);
    assert.equal(statusLevel(usage({ percentUsed: 70, compressionThreshold: 0.7 })), 'warning');
    assert.equal(statusLevel(usage({ percentUsed: 69.9, compressionThreshold: 0.7 })), 'normal');
  });
});

describe('tooltip', () => {
  it('has exact counts, model, threshold, source and the last compaction', () => {
    const md = statusTooltip(usage(), {
      status: 'COMPRESSED', trigger: 'manual', originalTokenCount: 9_120, newTokenCount: 2_310, at: new Date(2025, 0, 1, 12, 3, 4),
    });
    assert.match(md, /471,234 \/ 1,048,576/);
    assert.match(md, /gemini\\-2\\\.5\\-flash/);
    assert.match(md, /Auto-compress at: 50% \(524,288 tokens\)/);
    assert.match(md, /Source: api/);
    assert.match(md, /Last compaction: 9,120 → 2,310 tokens, manual, at 12:03:04/);
  });
  it('names the backend and the cached tokens when the API reports them', () => {
    const md = statusTooltip(usage({ backend: 'Vertex AI (my-proj, us-central1)', cachedTokenCount: 400_000 }));
    assert.match(md, /Backend: Vertex AI \\\(my\\-proj, us\\-central1\\\)/);
    assert.match(md, /Cached: 400,000 tokens of the last prompt/);
    const fake = statusTooltip(usage({ backend: 'embedded fake Gemini', cachedTokenCount: null }));
    assert.match(fake, /Backend: embedded fake Gemini/);
    assert.doesNotMatch(fake, /Cached/);
  });
  it('says when there was no compaction and when the count is an estimate', () => {
    const md = statusTooltip(usage({ source: 'estimate' }));
    assert.match(md, /Source: estimate/);
    assert.match(md, /Last compaction: none/);
  });
  it('says when a summary is being prepared or is ready, and nothing otherwise', () => {
    assert.match(statusTooltip(usage({ summaryPreparation: 'preparing' })), /Next compaction: preparing summary/);
    assert.match(statusTooltip(usage({ summaryPreparation: 'ready' })), /Next compaction: summary ready/);
    assert.doesNotMatch(statusTooltip(usage({ summaryPreparation: 'none' })), /Next compaction/);
    assert.doesNotMatch(statusTooltip(usage()), /Next compaction/);
  });
  it('says until when automatic compaction is paused after an undo', () => {
    assert.match(statusTooltip(usage({ autoCompactionPausedUntil: 681_575 })), /Auto-compaction paused after undo until 65% \(681,575 tokens\), or until you compress/);
    assert.doesNotMatch(statusTooltip(usage({ autoCompactionPausedUntil: null })), /paused/);
    assert.doesNotMatch(statusTooltip(usage()), /paused/);
  });
  it('describes failed compactions', () => {
    const md = statusTooltip(usage(), { status: 'COMPRESSION_FAILED_INFLATED_TOKEN_COUNT', trigger: 'auto', originalTokenCount: 100, newTokenCount: 120, at: new Date() });
    assert.match(md, /not beneficial: the summary was not smaller/);
  });
});

describe('compressed message level', () => {
  it('informs on success and no-op, warns on failure', () => {
    assert.equal(compressedMessageLevel('COMPRESSED'), 'info');
    assert.equal(compressedMessageLevel('NOOP'), 'info');
    assert.equal(compressedMessageLevel('CONTENT_TRUNCATED'), 'info');
    assert.equal(compressedMessageLevel('COMPRESSION_FAILED_EMPTY_SUMMARY'), 'warning');
  });
});

describe('MCP servers', () => {
  const servers: McpServerInfo[] = [
    { name: 'calc', status: 'ready', tools: ['mcp_calc_add', 'mcp_calc_mul'] },
    { name: 'docs', status: 'ready', tools: [] },
    { name: 'bad', status: 'failed', tools: [], error: 'exited at once: boom' },
  ];
  it('has a tooltip line "MCP: 2 ready, 1 failed" and keeps the other lines', () => {
    const without = statusTooltip(usage());
    const withMcp = statusTooltip(usage(), undefined, servers);
    assert.ok(withMcp.includes('MCP: 2 ready, 1 failed'));
    assert.ok(!without.includes('MCP:'), 'no line without servers');
    assert.equal(withMcp.replace('MCP: 2 ready, 1 failed  \n', ''), without, 'every other line kept');
    assert.equal(statusTooltip(usage(), undefined, []), without);
  });
  it('tells each failure once, and again after the server recovered and failed anew', () => {
    let r = newMcpFailures(new Set(), servers);
    assert.deepEqual(r.fresh.map((s) => s.name), ['bad']);
    r = newMcpFailures(r.told, servers);
    assert.deepEqual(r.fresh, [], 'the same failure is not told twice');
    r = newMcpFailures(r.told, [{ name: 'bad', status: 'starting', tools: [] }]);
    assert.deepEqual(r.fresh, []);
    r = newMcpFailures(r.told, servers);
    assert.deepEqual(r.fresh.map((s) => s.name), ['bad'], 'a new failure after a restart is told');
  });
  it('shows status and tools in the quick pick, the reason for a failed one', () => {
    assert.deepEqual(mcpPick(servers[0]), { label: '$(check) calc', description: 'ready · 2 tools', detail: 'mcp_calc_add, mcp_calc_mul' });
    assert.deepEqual(mcpPick(servers[2]), { label: '$(error) bad', description: 'failed · 0 tools', detail: 'exited at once: boom' });
    assert.equal(mcpSummary([]), 'MCP: no servers');
  });
});
