import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IdeContextParams } from '../src/protocol';
import { MAX_SELECTED_TEXT, OpenFilesTracker, TRUNCATED_MARK } from '../src/openFiles';

const file = (p: string) => ({ scheme: 'file', fsPath: p });

/** A tracker on a fake clock with manual timers. */
function setup() {
  let now = 1000;
  const timers: Array<{ fn: () => void; at: number; id: number }> = [];
  let nextId = 1;
  const sent: IdeContextParams[] = [];
  const tracker = new OpenFilesTracker({
    now: () => now,
    setTimer: (fn, ms) => { const id = nextId++; timers.push({ fn, at: now + ms, id }); return id; },
    clearTimer: (id) => { const i = timers.findIndex((t) => t.id === id); if (i >= 0) timers.splice(i, 1); },
  });
  tracker.onDidChange((s) => sent.push(s));
  const advance = (ms: number) => {
    now += ms;
    for (const t of timers.filter((x) => x.at <= now)) { timers.splice(timers.indexOf(t), 1); t.fn(); }
  };
  return { tracker, sent, advance, tick: (ms = 1) => { now += ms; } };
}

describe('open-files tracker', () => {
  it('puts the focused file first as active with a 1-based cursor and its selection', () => {
    const { tracker, sent, advance } = setup();
    tracker.focus(file('/w/a.py'), { line: 0, character: 0 });
    tracker.focus(file('/w/b.py'), { line: 4, character: 2 }, 'selected');
    advance(50);
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0].openFiles, [
      { path: '/w/b.py', timestamp: 1000, isActive: true, cursor: { line: 5, character: 3 }, selectedText: 'selected' },
      { path: '/w/a.py', timestamp: 1000, isActive: false },
    ]);
  });

  it('debounces bursts into one notification after 50 ms', () => {
    const { tracker, sent, advance } = setup();
    tracker.focus(file('/w/a.py'), { line: 0, character: 0 });
    for (let i = 0; i < 20; i++) { advance(10); tracker.select(file('/w/a.py'), { line: 0, character: i }, undefined); }
    assert.equal(sent.length, 0);
    advance(49);
    assert.equal(sent.length, 0);
    advance(1);
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0].openFiles[0].cursor, { line: 1, character: 20 });
  });

  it('keeps only file: URIs', () => {
    const { tracker, sent, advance } = setup();
    tracker.focus({ scheme: 'untitled', fsPath: 'Untitled-1' });
    tracker.focus({ scheme: 'git', fsPath: '/w/a.py' });
    tracker.focus({ scheme: 'output', fsPath: 'x' });
    advance(100);
    assert.equal(sent.length, 0);
    assert.deepEqual(tracker.state.openFiles, []);
  });

  it('keeps at most 10 files, most recent first', () => {
    const { tracker, tick } = setup();
    for (let i = 0; i < 12; i++) { tick(); tracker.focus(file(`/w/f${i}.ts`)); }
    const paths = tracker.state.openFiles.map((f) => f.path);
    assert.equal(paths.length, 10);
    assert.equal(paths[0], '/w/f11.ts');
    assert.equal(paths[9], '/w/f2.ts');
    assert.equal(tracker.state.openFiles.filter((f) => f.isActive).length, 1);
  });

  it('refocusing a file moves it to the front without duplicating it', () => {
    const { tracker, tick } = setup();
    tracker.focus(file('/w/a'));
    tick(); tracker.focus(file('/w/b'));
    tick(); tracker.focus(file('/w/a'));
    assert.deepEqual(tracker.state.openFiles.map((f) => [f.path, f.isActive, f.timestamp]), [['/w/a', true, 1002], ['/w/b', false, 1001]]);
  });

  it('cuts the selection at 16,384 characters', () => {
    const { tracker } = setup();
    tracker.focus(file('/w/a'), { line: 0, character: 0 }, 'x'.repeat(MAX_SELECTED_TEXT + 10));
    const text = tracker.state.openFiles[0].selectedText!;
    assert.equal(text.length, MAX_SELECTED_TEXT + TRUNCATED_MARK.length);
    assert.ok(text.endsWith(TRUNCATED_MARK));
    tracker.select(file('/w/a'), { line: 0, character: 0 }, 'x'.repeat(MAX_SELECTED_TEXT));
    assert.equal(tracker.state.openFiles[0].selectedText, 'x'.repeat(MAX_SELECTED_TEXT));
  });

  it('drops the selection when it becomes empty, and ignores selections in inactive files', () => {
    const { tracker } = setup();
    tracker.focus(file('/w/a'), { line: 1, character: 1 }, 'abc');
    tracker.select(file('/w/a'), { line: 2, character: 0 }, undefined);
    assert.equal(tracker.state.openFiles[0].selectedText, undefined);
    tracker.focus(file('/w/b'));
    tracker.select(file('/w/a'), { line: 9, character: 9 }, 'nope');
    const a = tracker.state.openFiles.find((f) => f.path === '/w/a')!;
    assert.equal(a.cursor, undefined);
    assert.equal(a.selectedText, undefined);
  });

  it('follows closes and deletes (also of folders)', () => {
    const { tracker } = setup();
    tracker.focus(file('/w/a'));
    tracker.focus(file('/w/dir/b'));
    tracker.focus(file('/w/dir/c'));
    tracker.remove(file('/w/a'));
    assert.deepEqual(tracker.state.openFiles.map((f) => f.path), ['/w/dir/c', '/w/dir/b']);
    tracker.remove(file('/w/dir'));
    assert.deepEqual(tracker.state.openFiles, []);
  });

  it('follows renames of files and folders; a rename away from file: removes', () => {
    const { tracker } = setup();
    tracker.focus(file('/w/a'));
    tracker.focus(file('/w/dir/b'), { line: 0, character: 0 }, 'sel');
    tracker.rename(file('/w/a'), file('/w/a2'));
    tracker.rename(file('/w/dir'), file('/w/dir2'));
    assert.deepEqual(tracker.state.openFiles.map((f) => f.path), ['/w/dir2/b', '/w/a2']);
    assert.equal(tracker.state.openFiles[0].selectedText, 'sel');
    tracker.rename(file('/w/a2'), { scheme: 'vscode-remote', fsPath: '/x' });
    assert.deepEqual(tracker.state.openFiles.map((f) => f.path), ['/w/dir2/b']);
  });

  it('reports workspace trust and sends at once on flush', () => {
    const { tracker, sent } = setup();
    tracker.setTrusted(false);
    tracker.focus(file('/w/a'));
    tracker.flush();
    assert.equal(sent.length, 1);
    assert.equal(sent[0].isTrusted, false);
    assert.equal(sent[0].openFiles.length, 1);
  });

  it('hands out copies: later changes do not alter sent state', () => {
    const { tracker, sent } = setup();
    tracker.focus(file('/w/a'), { line: 0, character: 0 });
    tracker.flush();
    tracker.select(file('/w/a'), { line: 5, character: 5 }, 'x');
    assert.deepEqual(sent[0].openFiles[0].cursor, { line: 1, character: 1 });
  });
});
