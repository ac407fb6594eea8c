import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatModel, itemsFromTranscript, splitToolCallEntry } from '../src/chatModel';
import { TranscriptEntry } from '../src/protocol';

describe('a streamed turn with tool calls', () => {
  it('puts the words after a tool call in a new message below its card', () => {
    const m = new ChatModel();
    m.addUser('write a helper');
    m.setBusy(true);
    m.delta('t1', 'I will write the ');
    m.delta('t1', 'helper.');
    m.toolCall({ turnId: 't1', callId: 'c1', name: 'write_file', args: { file_path: 'h.py' }, status: 'pending', summary: 'Write h.py' });
    m.confirmRequest({ turnId: 't1', callId: 'c1', toolName: 'write_file', args: { file_path: 'h.py' }, description: 'Write h.py' });
    m.toolCall({ turnId: 't1', callId: 'c1', name: 'write_file', args: { file_path: 'h.py' }, status: 'done', summary: 'wrote 2 lines' });
    m.delta('t1', 'Done: the helper ');
    m.delta('t1', 'is written.');
    m.finish('t1', 'I will write the helper.Done: the helper is written.');
    m.setBusy(false);
    assert.deepEqual(m.items.map((i) => [i.kind, 'text' in i ? i.text : i.kind === 'tool' ? i.name : '']), [
      ['user', 'write a helper'],
      ['model', 'I will write the helper.'],
      ['tool', 'write_file'],
      ['model', 'Done: the helper is written.'],
    ]);
    assert.ok(m.items.every((i) => i.kind !== 'model' || !i.streaming), 'nothing is left streaming');
  });
  it('shows a final reply that arrived without chunks below the tool cards', () => {
    const m = new ChatModel();
    m.delta('t1', 'Looking.');
    m.toolCall({ turnId: 't1', callId: 'c1', name: 'read_file', args: {}, status: 'done', summary: 'read' });
    m.finish('t1', 'Looking.It is fine.');
    assert.deepEqual(m.items.map((i) => i.kind === 'model' ? i.text : i.kind), ['Looking.', 'tool', 'It is fine.']);
  });
  it('keeps the words before a tool call when a later round is retried', () => {
    const m = new ChatModel();
    m.delta('t1', 'First.');
    m.toolCall({ turnId: 't1', callId: 'c1', name: 'read_file', args: {}, status: 'done', summary: 'read' });
    m.delta('t1', 'Half');
    m.retry({ turnId: 't1', attempt: 2, maxAttempts: 4, reason: 'stream', message: 'cut', delayMs: 1, text: 'First.' });
    m.delta('t1', 'Whole.');
    m.finish('t1', 'First.Whole.');
    assert.deepEqual(m.items.filter((i) => i.kind === 'model').map((i) => i.kind === 'model' && i.text), ['First.', 'Whole.']);
  });
});

describe('the chat rebuilt from a transcript', () => {
  const content = 'line one\nline two\n→ not a call\nline four';
  const entries: TranscriptEntry[] = [
    { type: 'message', id: 'u1', time: 't', role: 'user', kind: 'user', text: 'write it', rewound: true },
    {
      type: 'message', id: 'c1', time: 't', role: 'model', kind: 'toolCall', rewound: true,
      text: `I will write notes.txt.\n→ write_file(${content})\n→ read_file({"file_path":"a"})`,
      toolCalls: [{ name: 'write_file', args: { file_path: 'notes.txt', content } }, { name: 'read_file', args: { file_path: 'a' } }],
    },
    { type: 'message', id: 'r1', time: 't', role: 'user', kind: 'toolResult', text: '← write_file: ok', rewound: true },
    { type: 'message', id: 'm1', time: 't', role: 'model', kind: 'model', text: 'Written.', rewound: true },
  ];
  it('builds tool cards from the calls as data: no line of a written file shows as the model\'s words', () => {
    const items = itemsFromTranscript(entries);
    assert.deepEqual(items.map((i) => i.kind), ['user', 'model', 'tool', 'tool', 'model']);
    assert.equal(items[1].kind === 'model' && items[1].text, 'I will write notes.txt.');
    assert.deepEqual(items[2].kind === 'tool' && [items[2].name, items[2].args], ['write_file', { file_path: 'notes.txt', content }]);
    assert.equal(items[3].kind === 'tool' && items[3].name, 'read_file');
  });
  it('marks the rewound turn\'s words before its calls and its tool cards rewound', () => {
    const items = itemsFromTranscript(entries);
    assert.ok(items.every((i) => 'rewound' in i && i.rewound === true), JSON.stringify(items));
  });
  it('shows no words for a call without any, and still reads an older server\'s call lines', () => {
    assert.deepEqual(splitToolCallEntry({ text: `→ write_file(${content})`, toolCalls: [{ name: 'write_file', args: { content } }] }).prose, '');
    const old = splitToolCallEntry({ text: 'Hm.\n→ read_file(a)' });
    assert.deepEqual([old.prose, old.calls.map((c) => c.name)], ['Hm.', ['read_file']]);
  });
});
