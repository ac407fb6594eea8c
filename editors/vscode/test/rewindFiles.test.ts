import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CHECKPOINTING_OFF, LIST_MAX, confirmFiles, rewindNote, filesDone, filesFromHere, planCounts, planLines, rewindChoices, rewoundFilesNote, shortPath,
  touchesFiles, withFileCount,
} from '../src/rewindFiles';

const ROOT = '/home/u/proj';
const plan = {
  restored: [`${ROOT}/src/app.py`, `${ROOT}/README.md`],
  removed: [`${ROOT}/notes.txt`],
  conflicts: [{ path: `${ROOT}/src/util.py`, reason: "changed since the agent's edit: 2 lines added" }],
  skipped: [{ path: `${ROOT}/data.bin`, reason: 'binary when the agent changed it' }],
};

describe('rewind with files: the choice', () => {
  it('offers the conversation only and the conversation and files, with what the files part does', () => {
    const items = rewindChoices(plan);
    assert.deepEqual(items.map((i) => i.mode), ['conversation', 'files']);
    assert.match(items[0].label, /Rewind conversation$/);
    assert.match(items[1].label, /Rewind conversation and files$/);
    assert.equal(items[1].detail, "Restores 2 files, removes 1 file the agent created; 1 file changed since the agent's edit (you choose next); 1 file it cannot restore. The files are listed before anything changes.");
  });
  it('asks only when the agent changed a file from that message on', () => {
    assert.equal(touchesFiles({ restored: [], removed: [], conflicts: [], skipped: [] }), false);
    assert.equal(touchesFiles(undefined), false);
    assert.equal(touchesFiles({ skipped: [{ path: 'a', reason: 'too large' }] }), true);
    assert.equal(planCounts({}), 'No file to restore');
  });
});

describe('rewind with files: the confirmation lists the files before anything changes', () => {
  it('groups the files, workspace-relative, with the reasons of those it leaves', () => {
    assert.deepEqual(planLines(plan, [ROOT]), [
      'Put back as they were before your message:', '  src/app.py', '  README.md', '',
      'Removed (the agent created them):', '  notes.txt', '',
      "Changed since the agent's edit (kept unless you overwrite them):", "  src/util.py — changed since the agent's edit: 2 lines added", '',
      'Cannot be restored:', '  data.bin — binary when the agent changed it',
    ]);
  });
  it('with conflicts: keep them or overwrite them (force)', () => {
    const c = confirmFiles(plan, [ROOT]);
    assert.match(c.message, /^1 file changed since the agent's edit\. Rewind the conversation and restore the files\?$/);
    assert.deepEqual(c.buttons, [
      { title: 'Restore others, keep conflicting files', force: false },
      { title: 'Overwrite my changes too', force: true },
    ]);
    assert.ok(c.detail.includes('src/util.py'));
  });
  it('without conflicts: one button, never force', () => {
    const c = confirmFiles({ restored: ['/x/a.py'], removed: ['/x/b.py'] }, ['/x']);
    assert.equal(c.message, 'Rewind the conversation and restore 2 files?');
    assert.deepEqual(c.buttons, [{ title: 'Rewind and Restore', force: false }]);
    const none = confirmFiles({ skipped: [{ path: '/x/big.log', reason: 'over 1 MB' }] }, ['/x']);
    assert.deepEqual(none.buttons.map((b) => b.force), [false]);
    assert.match(none.message, /No file can be restored/);
  });
  it('a long list is cut with “… and N more”', () => {
    const many = Array.from({ length: LIST_MAX + 3 }, (_, i) => `/w/f${i}.txt`);
    const lines = planLines({ restored: many }, ['/w']);
    assert.equal(lines.length, 1 + LIST_MAX + 1);
    assert.equal(lines[lines.length - 1], '  … and 3 more');
  });
  it('paths outside every workspace folder stay absolute; a folder prefix is not a parent', () => {
    assert.equal(shortPath('/home/u/proj2/a.py', [ROOT]), '/home/u/proj2/a.py');
    assert.equal(shortPath(`${ROOT}/a.py`, [`${ROOT}/`]), 'a.py');
  });
});

describe('rewind with files: the note after names what happened to each file', () => {
  it('restored, removed, kept and skipped, by name; the message by its words', () => {
    const note = rewoundFilesNote('Please refactor the parser', plan, [ROOT]);
    assert.match(note, /^Rewound to before your message “Please refactor the parser”: the model no longer sees it/);
    assert.ok(note.includes('Restored src/app.py, README.md.'), note);
    assert.ok(note.includes('Removed notes.txt (the agent had created it).'), note);
    assert.ok(note.includes("Kept src/util.py as you changed it since the agent's edit."), note);
    assert.ok(note.includes('Could not restore data.bin (binary when the agent changed it).'), note);
    assert.ok(!note.includes('were not touched'), 'not the conversation-only wording');
  });
  it('nothing to do says so; many files are counted', () => {
    assert.match(rewoundFilesNote('x', {}), /No file needed restoring\./);
    const many = Array.from({ length: 8 }, (_, i) => `/w/f${i}`);
    assert.equal(filesDone({ restored: many }, ['/w']), 'Restored f0, f1, f2, f3, f4 and 3 more.');
  });
});

describe('the Rewind pick shows the files changed from each message on', () => {
  it('counts distinct files from that message to the end', () => {
    const counts = filesFromHere([
      { messageId: 'm1', files: [{ path: '/a' }] },
      { messageId: 'm3', files: [] },
      { messageId: 'm5', files: [{ path: '/a' }, { path: '/b' }] },
      { messageId: 'm7', files: [] },
    ]);
    assert.deepEqual([...counts], [['m7', 0], ['m5', 2], ['m3', 2], ['m1', 2]]);
    assert.equal(withFileCount('10:02', 2), '10:02 · 2 files changed from here on');
    assert.equal(withFileCount('10:02', 0), '10:02');
    assert.equal(withFileCount('', 1), '1 file changed from here on');
  });
});

describe('the note after any rewind says when checkpointing is off', () => {
  it('conversation only: files not touched; with files: what happened; either: checkpointing off when it is', () => {
    assert.match(rewindNote('conversation', 'Fix it', {}, [], true), /Files the agent changed were not touched\.[^]*input box\.$/);
    assert.match(rewindNote('files', 'Fix it', { restored: ['/w/a'] }, ['/w'], undefined), /Restored a\. Its text is back in the input box\.$/);
    assert.ok(rewindNote('files', 'Fix it', {}, [], false).endsWith(` ${CHECKPOINTING_OFF}`));
    assert.ok(rewindNote('conversation', 'Fix it', {}, [], false).endsWith(` ${CHECKPOINTING_OFF}`));
    assert.match(CHECKPOINTING_OFF, /sidecar\.checkpointing/);
  });
});
