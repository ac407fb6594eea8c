import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sameServerCommand } from '../src/serverCommand';
import { restartNote } from '../src/wording';

describe('restart note (issue 25.1: every restart resumes the session on screen)', () => {
  it('says whether the session on screen was resumed, for a crash and for a restart the user asked for', () => {
    assert.equal(restartNote({ crashed: true, target: 's1', resumed: 's1' }), 'The sidecar restarted after a crash; the session was resumed.');
    assert.equal(restartNote({ crashed: false, target: 's1', resumed: 's1' }), 'The sidecar restarted; the session was resumed.');
    assert.match(restartNote({ crashed: false, target: 's1', resumeError: 'no such session' }) ?? '', /could not resume the session on screen \(no such session\); this is a new, empty session/);
    assert.equal(restartNote({ crashed: true }), 'The sidecar restarted after a crash.');
    assert.equal(restartNote({ crashed: false }), undefined, 'a first start says nothing');
  });
});

describe('server command in effect (issue 25.3)', () => {
  it('unset, [] and "" are the same default; a string is split as resolveServerCommand does', () => {
    assert.ok(sameServerCommand(undefined, []));
    assert.ok(sameServerCommand('', []));
    assert.ok(sameServerCommand(' py  -m sidecar', ['py', '-m', 'sidecar']));
    assert.ok(!sameServerCommand(['py', '-m', 'sidecar'], ['py', '-m', 'sidecar', '--log-level', 'DEBUG']));
    assert.ok(!sameServerCommand(undefined, ['py']));
  });
});
