import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addedMessage, addScopeItems, contentsByPath, memoryMarkdown, memorySummary, skippedNotice, skippedText } from '../src/memory';
import { MemoryInfo, TokenUsage } from '../src/protocol';
import { statusTooltip } from '../src/status';

const wrap = (p: string, body: string) => `--- Context from: ${p} ---\n${body}\n--- End of Context from: ${p} ---`;
const GLOBAL = '/home/u/.gemini/GEMINI.md';
const PROJECT = '/w/GEMINI.md';
const AGENTS = '/w/AGENTS.md';
const info = (over: Partial<MemoryInfo> = {}): MemoryInfo => ({
  files: [
    { path: GLOBAL, scope: 'global', tokens: 12 },
    { path: PROJECT, scope: 'project', tokens: 1_200 },
    { path: AGENTS, scope: 'project', tokens: 22 },
  ],
  text: [wrap(GLOBAL, 'Answer in English.'), wrap(PROJECT, '# Project\n\nUse ```tabs```.\n@./docs/style.md'), wrap(AGENTS, 'Run make test.')].join('\n\n'),
  tokens: 1_234,
  skippedProjectFiles: 0,
  ...over,
});
const usage: TokenUsage = {
  seq: 1, sessionId: 's-1', model: 'gemini-2.5-flash', promptTokenCount: 4_000, tokenLimit: 1_048_576,
  percentUsed: 0.4, compressionThreshold: 0.5, source: 'api',
};

describe('memory: the tooltip line', () => {
  it('says "Memory: N files (X tokens)"', () => {
    assert.equal(memorySummary(info()), 'Memory: 3 files (1,234 tokens)');
    assert.equal(memorySummary(info({ files: [{ path: GLOBAL, scope: 'global', tokens: 5 }], tokens: 5 })), 'Memory: 1 file (5 tokens)');
    assert.equal(memorySummary(info({ files: [], text: '', tokens: 0 })), 'Memory: no context files');
  });
  it('counts the project files an untrusted workspace did not load', () => {
    const m = info({ files: [{ path: GLOBAL, scope: 'global', tokens: 12 }], tokens: 12, skippedProjectFiles: 2, skippedReason: 'the workspace is not trusted' });
    assert.equal(memorySummary(m), 'Memory: 1 file (12 tokens); 2 project files not loaded');
  });
  it('is a line of the status tooltip, before MCP, every other line kept', () => {
    const without = statusTooltip(usage);
    const withLine = statusTooltip(usage, undefined, undefined, memorySummary(info()));
    assert.ok(withLine.includes('Memory: 3 files (1,234 tokens)'));
    assert.ok(!without.includes('Memory:'));
    assert.equal(withLine.replace('Memory: 3 files (1,234 tokens)  \n', ''), without);
    const both = statusTooltip(usage, undefined, [{ name: 'calc', status: 'ready', tools: [] }], memorySummary(info()));
    assert.ok(both.indexOf('Memory:') < both.indexOf('MCP: 1 ready'), 'memory before MCP');
  });
});

describe('memory: Show Memory', () => {
  it('splits the wrapped text into each file\'s content', () => {
    const c = contentsByPath(info().text);
    assert.deepEqual([...c.keys()], [GLOBAL, PROJECT, AGENTS]);
    assert.equal(c.get(PROJECT), '# Project\n\nUse ```tabs```.\n@./docs/style.md');
    assert.equal(c.get(AGENTS), 'Run make test.');
    assert.equal(contentsByPath(`${wrap('/a', '')}\n\n${wrap('/b', 'x')}`).get('/a'), '', 'an empty body');
    assert.equal(contentsByPath('--- Context from: /a ---\nno end').size, 0, 'no end marker: not guessed');
  });
  it('lists each file with path, scope and tokens, then its content, in order', () => {
    const md = memoryMarkdown(info());
    assert.ok(md.startsWith('# Sidecar memory\n'));
    assert.ok(md.includes('3 context files, 1,234 tokens'));
    assert.ok(md.includes(`| 1 | \`${GLOBAL}\` | global | 12 |`));
    assert.ok(md.includes(`| 2 | \`${PROJECT}\` | project | 1,200 |`));
    const g = md.indexOf(`## 1. ${GLOBAL}`), p = md.indexOf(`## 2. ${PROJECT}`), a = md.indexOf(`## 3. ${AGENTS}`);
    assert.ok(g > 0 && g < p && p < a, 'sections in the model\'s order');
    assert.ok(md.includes('_project · 1,200 tokens_'));
    // the content is fenced with more backticks than it holds, so its own fences and headings stay text
    assert.ok(md.includes('````\n# Project\n\nUse ```tabs```.\n@./docs/style.md\n````'));
    assert.ok(!md.includes('The text the model gets'), 'every file found: no duplicate full text');
  });
  it('shows the whole text when a file\'s markers are not found', () => {
    const md = memoryMarkdown(info({ text: 'something else' }));
    assert.ok(md.includes('## The text the model gets'));
    assert.ok(md.includes('something else'));
  });
  it('says what to do when there is no file, and why project files are missing', () => {
    const md = memoryMarkdown(info({ files: [], text: '', tokens: 0, skippedProjectFiles: 1, skippedReason: 'the workspace is not trusted.' }));
    assert.ok(md.includes('No context files are loaded'));
    assert.ok(md.includes('Sidecar: Add to Memory'));
    assert.ok(md.includes('> **Not loaded:** 1 project memory file was not loaded: the workspace is not trusted.\n'));
  });
});

describe('memory: the untrusted-workspace notice', () => {
  const skipped = info({ files: [{ path: GLOBAL, scope: 'global', tokens: 12 }], tokens: 12, skippedProjectFiles: 2, skippedReason: 'untrusted workspace' });
  it('says how many, why and how to load them', () => {
    assert.equal(skippedText(skipped), '2 project memory files were not loaded: untrusted workspace.');
    assert.equal(skippedText({ ...skipped, skippedProjectFiles: 1, skippedReason: undefined }),
      '1 project memory file was not loaded: the workspace is not trusted, and they are instructions written by whoever wrote the repository.');
    assert.equal(skippedText(info()), undefined);
    assert.equal(skippedNotice(false, skipped).notice, 'Sidecar: 2 project memory files were not loaded: untrusted workspace. Trust the workspace to load them.');
  });
  it('is told once, and again only after the files loaded in between', () => {
    let s = skippedNotice(false, skipped);
    assert.ok(s.notice?.startsWith('Sidecar: 2 project memory files'));
    s = skippedNotice(s.told, skipped);
    assert.equal(s.notice, undefined, 'a second memoryChanged: not told again');
    s = skippedNotice(s.told, { ...skipped, skippedProjectFiles: 3 });
    assert.equal(s.notice, undefined, 'nor when the count changes');
    s = skippedNotice(s.told, info());
    assert.deepEqual(s, { told: false }, 'trusted: nothing skipped');
    assert.ok(skippedNotice(s.told, skipped).notice, 'untrusted again: told again');
  });
});

describe('memory: Add to Memory', () => {
  it('offers global and project; global only in an untrusted workspace (its project memory is not loaded)', () => {
    assert.deepEqual(addScopeItems().map((i) => [i.label, i.scope]), [['Global', 'global'], ['Project', 'project']]);
    assert.deepEqual(addScopeItems(false).map((i) => i.scope), ['global']);
  });
  it('names the file the fact went to and the new totals', () => {
    assert.equal(addedMessage('project', info()), `Sidecar: added to project memory (${PROJECT}). Memory: 3 files (1,234 tokens).`);
    assert.equal(addedMessage('global', info()), `Sidecar: added to global memory (${GLOBAL}). Memory: 3 files (1,234 tokens).`);
    assert.equal(addedMessage('global', info({ files: [], tokens: 0 })), 'Sidecar: added to global memory (~/.gemini/GEMINI.md). Memory: no context files.');
  });
});
