import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { editedUris, saveWaitMs, waitUntilSaved } from '../src/editSaves';
import { ServerNotices, clientErrorLogged, mcpFailureCause, mcpFailureText, mcpRestartedText, stateAfterFailedStart } from '../src/notices';
import { mcpPick } from '../src/status';

const ERROR = "MCP server 'broken' (from settings.json) failed: it could not be started: cannot open the database. Its last output on stderr:\nTraceback\nsqlite3.OperationalError: unable to open";

describe('MCP failure and restart notices', () => {
  it('says each failure once, naming the server once: the server\'s own warning is not shown', () => {
    const notices = new ServerNotices();
    assert.equal(notices.show(`Sidecar: ${ERROR}`), false);
    assert.equal(mcpFailureText({ name: 'broken', error: ERROR }).split('broken').length - 1, 1);
    assert.match(mcpFailureText({ name: 'broken', error: ERROR }), /^MCP server "broken" failed \(from settings.json\): it could not be started: cannot open the database/);
    assert.equal(mcpFailureText({ name: 'x', error: undefined }), 'MCP server "x" failed: no reason given');
  });
  it('says "restarted" only when the server runs again', () => {
    assert.equal(mcpRestartedText({ name: 'calc', status: 'ready', tools: ['a', 'b'] }), 'Sidecar: MCP server "calc" restarted: ready, 2 tools.');
    assert.equal(mcpRestartedText({ name: 'calc', status: 'failed', tools: [], error: ERROR }), undefined);
    assert.equal(mcpRestartedText(undefined), undefined);
  });
  it('shows the whole failure cause in the MCP pick, on one line, without repeating the name', () => {
    const detail = mcpPick({ name: 'broken', status: 'failed', tools: [], error: ERROR }).detail;
    assert.equal(detail, 'it could not be started: cannot open the database. Its last output on stderr: · Traceback · sqlite3.OperationalError: unable to open (from settings.json)');
    assert.equal(mcpFailureCause('exited at once: boom'), 'exited at once: boom');
  });
});

describe('the server\'s notices and the client\'s log lines', () => {
  it('tells about the embedded fake Gemini once per window, not after every restart', () => {
    const notices = new ServerNotices();
    const text = 'Sidecar: no Gemini backend set; the embedded offline fake Gemini answers. For Gemini, run Sidecar: Set API Key.';
    assert.deepEqual([notices.show(text), notices.show(text), notices.show(text)], [true, false, false]);
    assert.equal(notices.show('Sidecar: something else'), true);
    assert.equal(notices.show('Sidecar: something else'), true, 'other notices are not held back');
  });
  it('logs the real cause only, never "Connection to server got closed"', () => {
    assert.equal(clientErrorLogged('Connection to server got closed. Server will not be restarted.', true), false);
    assert.equal(clientErrorLogged('Connection to server got closed. Server will not be restarted.', false), false);
    assert.equal(clientErrorLogged("Stopping server failed", false), false);
    assert.equal(clientErrorLogged('Request sidecar/x failed.', true), true);
  });
  it('is stopped, not failed (error-red), after the user cancels the install', () => {
    assert.equal(stateAfterFailedStart(true), 'stopped');
    assert.equal(stateAfterFailedStart(false), 'failed');
  });
});

describe('an applied edit VS Code saves by itself', () => {
  it('names the documents of an edit', () => {
    assert.deepEqual(editedUris({ changes: { 'file:///a': [] }, documentChanges: [{ kind: 'create', uri: 'file:///b' }, { textDocument: { uri: 'file:///b' } }, { kind: 'rename', uri: 'file:///c', newUri: 'file:///d' }] }),
      ['file:///a', 'file:///b', 'file:///d']);
  });
  it('waits for the save when VS Code saves refactorings (the default) or saves after a short delay', () => {
    const settings = (v: Record<string, unknown>) => (k: string) => v[k];
    // the sidecar's edits are not marked as refactorings: files.refactoring.autoSave never saves them, so no wait
    assert.equal(saveWaitMs(settings({ 'files.refactoring.autoSave': true, 'files.autoSave': 'off' })), 0);
    assert.equal(saveWaitMs(settings({ 'files.refactoring.autoSave': false, 'files.autoSave': 'off' })), 0);
    assert.equal(saveWaitMs(settings({ 'files.autoSave': 'afterDelay', 'files.autoSaveDelay': 60_000 })), 0);
    assert.equal(saveWaitMs(settings({ 'files.refactoring.autoSave': false, 'files.autoSave': 'afterDelay', 'files.autoSaveDelay': 500 })), 1500);
  });
  it('answers once the document is saved, not before', async () => {
    let dirty = true;
    const listeners: Array<() => void> = [];
    let answered = false;
    const wait = waitUntilSaved(['file:///a'], () => dirty, (l) => { listeners.push(l); return { dispose: () => undefined }; }, 60_000)
      .then(() => { answered = true; });
    await new Promise((r) => setImmediate(r));
    assert.equal(answered, false);
    dirty = false;
    listeners.forEach((l) => l());
    await wait;
    assert.equal(answered, true);
    let asked = false;
    await waitUntilSaved(['file:///a'], () => false, () => { asked = true; return { dispose: () => undefined }; }, 60_000);
    assert.equal(asked, false, 'nothing dirty: no wait');
  });
});
