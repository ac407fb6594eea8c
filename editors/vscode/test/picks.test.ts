import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatModel, cardText } from '../src/chatModel';
import { newestFirst } from '../src/rewindFiles';
import { sessionPickText } from '../src/status';

describe('pickers', () => {
  it('tells same-titled sessions apart: message count, date and time, the start of the id', () => {
    const a = sessionPickText({ sessionId: 'aaaa1111-x', title: 'Fix the build', messageCount: 4, compactionCount: 0, lastUpdated: '2026-11-27T10:00:00Z' }, undefined, 'Fix the build');
    const b = sessionPickText({ sessionId: 'bbbb2222-y', title: 'Fix the build', messageCount: 4, compactionCount: 0, lastUpdated: '2026-11-27T10:00:00Z' }, undefined, 'Fix the build');
    assert.equal(a.label, b.label);
    assert.notEqual(`${a.description} ${a.detail}`, `${b.description} ${b.detail}`);
    assert.match(a.description, /^4 messages · id aaaa1111$/);
    assert.match(a.detail, /^Last used .*\d{1,2}:\d{2}/, 'a time, not only a date');
  });
  it('lists the Rewind pick newest first (the pre-selected row is the last message sent)', () => {
    assert.deepEqual(newestFirst(['first', 'second', 'third']), ['third', 'second', 'first']);
  });
});

describe('tool cards', () => {
  it('says where a command runs in words, never "in ."', () => {
    assert.equal(cardText('Run `ls -la` in .'), 'Run `ls -la` in the workspace folder');
    assert.equal(cardText('Run `make` in src'), 'Run `make` in src');
    const m = new ChatModel();
    m.confirmRequest({ turnId: 't', callId: 'c', toolName: 'run_shell_command', args: { command: 'ls' }, description: 'Run `ls` in .' });
    assert.equal(m.items[0].kind === 'tool' && m.items[0].confirm?.description, 'Run `ls` in the workspace folder');
  });
});
