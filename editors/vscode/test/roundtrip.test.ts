/**
 * Protocol round trip against the REAL sidecar over stdio (LSP framing, vscode-jsonrpc), with the fake Gemini.
 * It exercises the same typed SidecarApi the extension uses.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it, TestContext } from 'node:test';
import { errorCode, listAllSessions } from '../src/api';
import { ErrorCode, Method, MessageDeltaParams, ProgressTitle, TokenUsage, CompressedParams } from '../src/protocol';
import { StdioSidecarClient } from '../src/stdioClient';
import { FakeGemini, REPO, projectPython, requestText, startFakeGemini, tempHome } from './support/sidecar';

const IDE_HEADER = "Here is the user's editor context as a JSON object.";

/** Runs a feature's assertions; a failure names the feature (every feature must work: nothing is skipped). */
async function gated(t: TestContext, feature: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (e) {
    t.diagnostic(`feature failed: ${feature}`);
    throw e;
  }
}

describe('sidecar protocol round trip (real server over stdio)', { timeout: 60_000 }, () => {
  let fake: FakeGemini;
  let client: StdioSidecarClient;
  let home: string;
  let stderr = '';
  const usages: TokenUsage[] = [];
  const deltas: MessageDeltaParams[] = [];
  const compressed: CompressedParams[] = [];
  const progressTitles: string[] = [];

  before(async () => {
    const python = projectPython();
    fake = await startFakeGemini(python);
    home = tempHome();
    client = await StdioSidecarClient.start({
      command: python,
      args: ['-m', 'sidecar'],
      cwd: REPO,
      env: { ...process.env, SIDECAR_HOME: home, GEMINI_API_KEY: '', GOOGLE_API_KEY: '' },
      settings: { baseUrl: fake.url, apiKey: 'test-key', tokenLimit: 20_000 },
      onStderr: (c) => { stderr += c; },
    });
    client.connection.onNotification(Method.tokenUsage, (u: TokenUsage) => { usages.push(u); });
    client.connection.onNotification(Method.messageDelta, (d: MessageDeltaParams) => { deltas.push(d); });
    client.connection.onNotification(Method.compressed, (c: CompressedParams) => { compressed.push(c); });
    client.connection.onNotification('$/progress', (p: { value: { kind: string; title?: string } }) => {
      if (p.value.kind === 'begin' && p.value.title) progressTitles.push(p.value.title);
    });
  });

  after(async () => {
    const code = await client?.stop();
    await fake?.stop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
    assert.equal(code, 0, `the sidecar should exit cleanly after shutdown/exit; stderr:\n${stderr.slice(-2000)}`);
  });

  it('initializes and pushes token usage', async () => {
    const info = (client.initializeResult as { serverInfo?: { name: string } }).serverInfo;
    assert.equal(info?.name, 'sidecar');
    const usage = await client.api.getTokenUsage();
    assert.equal(usage.tokenLimit, 20_000);
    assert.ok(usage.sessionId, 'a session id');
    assert.ok(['api', 'estimate'].includes(usage.source));
  });

  it('sendMessage streams deltas in order, then answers with the whole text and the usage', async () => {
    deltas.length = 0;
    const before = usages.length;
    const result = await client.api.sendMessage({ text: 'Hello from the VS Code extension round trip test' });
    assert.ok(result.text.length > 0);
    assert.ok(deltas.length >= 1, 'at least one messageDelta');
    assert.ok(deltas.every((d) => d.turnId === result.turnId));
    assert.equal(deltas.map((d) => d.text).join(''), result.text);
    assert.ok(result.usage.promptTokenCount > 0);
    assert.equal(result.usage.percentUsed, Math.round((1000 * result.usage.promptTokenCount) / 20_000) / 10);
    assert.ok(usages.length > before, 'a tokenUsage notification after the turn');
    assert.deepEqual(await client.api.getTokenUsage(), usages[usages.length - 1]);
    assert.ok(progressTitles.includes(ProgressTitle.turn), `work-done progress "${ProgressTitle.turn}" (saw ${JSON.stringify(progressTitles)})`);
  });

  it('invalid params are rejected with -32602 naming the field', async () => {
    await assert.rejects(client.connection.sendRequest(Method.sendMessage, { text: 42 }), (e: unknown) => {
      assert.equal(errorCode(e), ErrorCode.invalidParams);
      assert.match(String((e as Error).message), /text/);
      return true;
    });
  });

  it('a cancelled sendMessage answers RequestCancelled and the next turn works', async () => {
    const source = client.cancellation();
    const pending = client.api.sendMessage({ text: 'Please write a long answer about compaction' }, source.token);
    source.cancel();
    await pending.then(() => undefined, (e) => assert.equal(errorCode(e), ErrorCode.requestCancelled));
    const next = await client.api.sendMessage({ text: 'Still there?' });
    assert.ok(next.text.length > 0);
  });

  it('ideContext reaches the model in the next request (with the selected text)', async (t) => {
    await gated(t, 'ideContext', async () => {
      const file = path.join(REPO, 'README.md');
      await client.api.ideContext({
        openFiles: [{ path: file, timestamp: Date.now(), isActive: true, cursor: { line: 3, character: 5 }, selectedText: 'SELECTED-ROUNDTRIP-TEXT' }],
        isTrusted: true,
      });
      await new Promise((r) => setTimeout(r, 100));
      await fake.reset();
      await client.api.sendMessage({ text: 'What is selected?' });
      const reqs = (await fake.requests()).filter((r) => r.kind === 'stream' || r.kind === 'generate');
      const text = requestText(reqs[reqs.length - 1]);
      assert.ok(text.includes(IDE_HEADER), 'the full IDE context turn');
      assert.ok(text.includes('SELECTED-ROUNDTRIP-TEXT'), 'the selected text');
      assert.ok(text.includes(file), 'the active file path');
    });
  });

  it('fork, rewind, rename, search, delete and pins work through the typed API', async (t) => {
    await gated(t, 'sessions', async () => {
      const api = client.api;
      await api.newSession();
      for (const text of ['RT one', 'RT two', 'RT three']) await api.sendMessage({ text });
      const parent = await api.getTranscript();
      const users = parent.entries.filter((e) => e.type === 'message' && e.kind === 'user');
      const fork = await api.forkSession({ beforeMessageId: users[2].id });
      assert.equal(fork.parentSessionId, parent.sessionId);
      const forked = await api.getTranscript();
      assert.equal(forked.sessionId, fork.sessionId);
      assert.deepEqual(forked.entries.filter((e) => e.type === 'message' && e.kind === 'user').map((e) => e.type === 'message' && e.text), ['RT one', 'RT two']);
      const rewound = await api.rewind({ messageId: users[1].id });
      assert.equal(rewound.text, 'RT two');
      assert.match(rewound.message, /not touched/);
      const renamed = await api.renameSession({ sessionId: fork.sessionId, title: 'Round-trip branch' });
      assert.equal(renamed.title, 'Round-trip branch');
      const page = await api.listSessions({ query: 'round-trip branch', limit: 10 });
      assert.ok(!Array.isArray(page), 'with a query: a page');
      assert.deepEqual(page.sessions.map((s) => s.sessionId), [fork.sessionId]);
      assert.equal(page.sessions[0].parentSessionId, parent.sessionId);
      assert.ok(Array.isArray(await api.listSessions()), 'without params: the bare list, as before');
      const pinned = await api.pin({ text: 'RT-PIN: keep me' });
      assert.deepEqual((await api.listPins()).pins, [{ pinId: pinned.pinId, text: 'RT-PIN: keep me' }]);
      await api.unpin({ pinId: pinned.pinId });
      assert.deepEqual((await api.listPins()).pins, []);
      await assert.rejects(api.deleteSession({ sessionId: fork.sessionId }), (e: unknown) => errorCode(e) === ErrorCode.sessionError);
      await api.newSession();
      const gone = await api.deleteSession({ sessionId: parent.sessionId }); // a parent of branches: its branch keeps its beginning
      assert.match(gone.message, /trash/);
      assert.ok(!gone.message.includes('`'), 'no command line in the toast');
      assert.deepEqual((await api.listDeletedSessions()).sessions.map((s) => s.sessionId), [parent.sessionId]);
      assert.equal((await api.getTranscript({ sessionId: fork.sessionId })).entries.filter((e) => e.type === 'message' && e.kind === 'user').length, 2);
      assert.equal((await api.restoreSession({ sessionId: parent.sessionId })).sessionId, parent.sessionId);
      assert.ok((await listAllSessions(api)).some((s) => s.sessionId === parent.sessionId));
      assert.match((await api.deleteSession({ sessionId: fork.sessionId })).message, /trash/);
      assert.ok(!(await listAllSessions(api)).some((s) => s.sessionId === fork.sessionId));
    });
  });

  it('compress answers a status and pushes sidecar/compressed and a lower token usage', async (t) => {
    await gated(t, 'compress', async () => {
      // enough history that a summary is smaller than what it replaces
      const filler = 'Some context about the editor, the sidecar and its token meter. '.repeat(25);
      for (let i = 0; i < 6; i++) await client.api.sendMessage({ text: `Message ${i}: tell me about the status bar item. ${filler}` });
      const before = (await client.api.getTokenUsage()).promptTokenCount;
      compressed.length = 0;
      const r = await client.api.compress({ instructions: 'keep the status bar details' });
      assert.ok(['COMPRESSED', 'NOOP', 'CONTENT_TRUNCATED'].includes(r.status) || r.status.startsWith('COMPRESSION_FAILED'), r.status);
      assert.equal(typeof r.message, 'string');
      assert.equal(r.status, 'COMPRESSED', r.message);
      assert.ok(r.newTokenCount < r.originalTokenCount);
      assert.ok(compressed.length >= 1 && compressed[0].trigger === 'manual', 'a sidecar/compressed notification');
      const after = (await client.api.getTokenUsage()).promptTokenCount;
      assert.ok(after < before, `usage drops after compaction (${before} -> ${after})`);
      assert.ok(progressTitles.includes(ProgressTitle.compress));
    });
  });

  it('undoCompaction restores the compacted history', async (t) => {
    await gated(t, 'undo', async () => {
      const compacted = (await client.api.getTokenUsage()).promptTokenCount;
      const r = await client.api.undoCompaction();
      assert.equal(r.restored, true, r.message);
      assert.equal(typeof r.message, 'string');
      const after = await client.api.getTokenUsage();
      assert.ok(after.promptTokenCount > compacted, `usage rises again (${compacted} -> ${after.promptTokenCount})`);
      const transcript = await client.api.getTranscript();
      assert.ok(transcript.entries.some((e) => e.type === 'compaction' && e.undone), 'the compaction is marked undone');
    });
  });

  it('sessions: new, list, resume, transcript', async (t) => {
    await gated(t, 'sessions', async () => {
      const first = (await client.api.getTokenUsage()).sessionId;
      const created = await client.api.newSession();
      assert.notEqual(created.sessionId, first);
      const sessions = await listAllSessions(client.api);
      assert.ok(sessions.some((s) => s.sessionId === first), 'the earlier session is listed');
      const resumed = await client.api.resumeSession({ sessionId: first });
      assert.equal(resumed.sessionId, first);
      assert.ok(resumed.messageCount > 0);
      const transcript = await client.api.getTranscript();
      assert.equal(transcript.sessionId, first);
      assert.ok(transcript.entries.some((e) => e.type === 'message' && e.kind === 'user'));
    });
  });
});
