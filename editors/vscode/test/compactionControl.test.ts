import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatModel, itemsFromTranscript } from '../src/chatModel';
import { TranscriptEntry } from '../src/protocol';
import { transcriptMarkdown } from '../src/transcript';

const edited: TranscriptEntry = {
  type: 'compaction', id: 'c1', time: 't', trigger: 'manual', status: 'COMPRESSED', originalTokenCount: 9120, newTokenCount: 2310,
  undone: false, snapshot: '<state_snapshot>kept</state_snapshot>', edited: true, rating: 'lost', ratingNote: 'the file names',
};

describe('steering a compaction in the chat view', () => {
  it('keeps the recorded id, the edit and the rating on a compaction marker', () => {
    const [item] = itemsFromTranscript([edited]);
    assert.deepEqual(item.kind === 'compaction' && [item.compactionId, item.edited, item.rating], ['c1', true, 'lost']);
  });
  it('marks a compaction rated once the user rated it', () => {
    const m = new ChatModel();
    m.compaction({ sessionId: 's', status: 'COMPRESSED', originalTokenCount: 10, newTokenCount: 5, trigger: 'manual', message: 'ok', compactionId: 'c9', edited: false });
    m.rated('c9', 'good');
    const [item] = m.items;
    assert.deepEqual(item.kind === 'compaction' && [item.compactionId, item.rating], ['c9', 'good']);
  });
  it('says in the transcript document that the summary was edited and how it was rated', () => {
    const text = transcriptMarkdown({ sessionId: 's', entries: [edited] });
    assert.match(text, /your edited summary/);
    assert.match(text, /rated lost something: the file names/);
  });
});
