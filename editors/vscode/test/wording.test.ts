import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sameServerCommand } from '../src/serverCommand';
import { backendNote, branchNote, deletedPick, firstWords, pinPick, restartNote, rewoundNote, sessionTitle, startFailureCause, userMessagePick } from '../src/wording';

describe('restart note (every restart resumes the session on screen)', () => {
  it('says whether the session on screen was resumed, for a crash and for a restart the user asked for', () => {
    assert.equal(restartNote({ crashed: true, target: 's1', resumed: 's1' }), 'The sidecar restarted after a crash; the session was resumed.');
    assert.equal(restartNote({ crashed: false, target: 's1', resumed: 's1' }), 'The sidecar restarted; the session was resumed.');
    assert.match(restartNote({ crashed: false, target: 's1', resumeError: 'no such session' }) ?? '', /could not resume the session on screen \(no such session\); this is a new, empty session/);
    assert.equal(restartNote({ crashed: true }), 'The sidecar restarted after a crash.');
    assert.equal(restartNote({ crashed: false }), undefined, 'a first start says nothing');
  });
});

describe('server command in effect', () => {
  it('unset, [] and "" are the same default; a string is split as resolveServerCommand does', () => {
    assert.ok(sameServerCommand(undefined, []));
    assert.ok(sameServerCommand('', []));
    assert.ok(sameServerCommand(' py  -m sidecar', ['py', '-m', 'sidecar']));
    assert.ok(!sameServerCommand(['py', '-m', 'sidecar'], ['py', '-m', 'sidecar', '--log-level', 'DEBUG']));
    assert.ok(!sameServerCommand(undefined, ['py']));
  });
});

describe('no internal ids in what the user reads', () => {
  it('a user message in a pick is its first words and its time, not its id', () => {
    const item = userMessagePick({ id: 'm10', text: 'Refactor the parser\nso that it streams', time: '2026-11-25T03:00:00Z' });
    assert.equal(item.label, 'Refactor the parser so that it streams');
    assert.ok(!JSON.stringify({ label: item.label, description: item.description }).includes('m10'));
    assert.ok(item.description.length > 0, 'the time');
    assert.equal(item.id, 'm10', 'the id stays data, for the request');
  });
  it('the rewind note quotes the message; the branch note shows 8 characters of the new session', () => {
    assert.match(rewoundNote('Please rename the module'), /^Rewound to before your message “Please rename the module”/);
    const note = branchNote('Parser work', '0123456789abcdef-0123-4567');
    assert.match(note, /“Parser work” is open in another window; this window continues in a new branch \(01234567\)/);
    assert.ok(!note.includes('0123456789abcdef'));
  });
  it('long text is cut at a word with an ellipsis', () => {
    assert.equal(firstWords('one two three four five', 12), 'one two…');
    assert.equal(firstWords('short'), 'short');
  });
  it('one wording for a session without a title', () => {
    assert.equal(sessionTitle(null), '(no title)');
    assert.equal(sessionTitle('  '), '(no title)');
  });
});

describe('pins in a pick', () => {
  it('a short pin is its label only; a long one continues in the detail, never repeated', () => {
    assert.deepEqual(pinPick({ pinId: 'p1', text: 'Use tabs' }), { label: 'Use tabs', pinId: 'p1' });
    const text = `Keep the public API stable. ${'Every exported name stays. '.repeat(10)}The end.`;
    const pick = pinPick({ pinId: 'p2', text });
    assert.ok(pick.detail, 'the rest of the text');
    assert.equal(`${pick.label.slice(0, -1)} ${pick.detail!.slice(1)}`, text.trim());
    assert.equal((pick.label + pick.detail).split('Keep the public API').length - 1, 1);
  });
});

describe('start failure cause', () => {
  it("the server's last words, else the exit in words, never only the transport symptom", () => {
    assert.equal(startFailureCause('No module named nope', 'Pending response rejected since connection got disposed'), 'No module named nope');
    assert.equal(startFailureCause('', 'Pending response rejected since connection got disposed', 'code 1'), 'the server exited before it answered (code 1), and printed nothing');
    assert.equal(startFailureCause('', 'cannot run /x: ENOENT'), 'cannot run /x: ENOENT');
  });
});

describe('Restore Deleted Session', () => {
  it('a deleted session in the pick is its title, when it was deleted and its size; 8 id characters at most', () => {
    const item = deletedPick({ sessionId: '0123456789abcdef-rest', title: 'Old parser work', deletedAt: '2026-11-25T03:00:00Z', messageCount: 12 });
    assert.equal(item.label, 'Old parser work');
    assert.match(item.description, /^deleted .+ · 12 messages · 01234567$/);
    assert.ok(!item.description.includes('0123456789'), 'never the whole id');
    assert.equal(item.sessionId, '0123456789abcdef-rest');
    const branch = deletedPick({ sessionId: 'b', title: null, deletedAt: 'x', messageCount: 1, parentSessionId: 'p' });
    assert.equal(branch.label, '$(repo-forked) (no title)');
    assert.equal(branch.description, '1 message · b');
  });
});

describe('the backend in the chat\'s empty state', () => {
  it('names the backend before the first reply, and how to leave the fake', () => {
    assert.equal(backendNote(undefined), '');
    assert.equal(backendNote(''), '');
    assert.equal(backendNote('Gemini API'), 'Replies come from Gemini API.');
    assert.match(backendNote('embedded fake Gemini'), /embedded fake Gemini \(offline, no API key\)\. Run Sidecar: Set API Key/);
    assert.ok(!backendNote('embedded fake Gemini').includes('sidecar.apiKey'));
  });
});
