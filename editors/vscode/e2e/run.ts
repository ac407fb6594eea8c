/**
 * End-to-end test in a REAL VS Code: code-server (VS Code in the browser, Node extension host) driven by Debian's
 * Chromium through playwright-core, with the real sidecar and the fake Gemini.
 *
 *   scripts/run-e2e.sh  (sets things up, builds the vsix, runs this file with Node)
 *
 * Env: VSCODE_E2E_CODE_SERVER, VSCODE_E2E_NODE24, VSCODE_E2E_CHROMIUM (from the cache's env.sh), VSIX (the package
 * under test), SIDECAR_PYTHON (default <repo>/.venv/bin/python), E2E_ARTIFACTS (default <repo>/test-artifacts/vscode-e2e).
 *
 * Steps for server features that are still landing run only when the server has them (probed over stdio first);
 * otherwise the run fails naming what the server lacks (nothing is skipped).
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { BrowserContext, Frame, Page, chromium } from 'playwright-core';
import { errorCode } from '../src/api';
import { ErrorCode, Method } from '../src/protocol';
import { StdioSidecarClient } from '../src/stdioClient';
import { FakeGemini, REPO, projectPython, requestText, startFakeGemini } from '../test/support/sidecar';
import { chatTurnSteps } from './chatTurns';
import { contextSteps } from './context';
import { mcpSteps } from './mcp';
import { questionFocusSteps } from './questionFocus';
import { trustSteps } from './trust';

const API_KEY = 'e2e-secret-key-7f3a';
const MARKER = 'SIDECAR_E2E_SELECTED_MARKER_42';
const IDE_HEADER = "Here is the user's editor context as a JSON object.";
const TOKEN_LIMIT = 12_000;
/** The tool call the fake model makes in the tool-confirmation step (a file write needs the user's OK). */
const toolCall = (ws: string) => ({ kind: 'function_call', name: 'write_file', args: { path: 'notes.txt', content: 'written by the e2e tool step\n' } });
const FILLER = 'The status bar item shows how much of the context window the conversation uses. '.repeat(20);

const t0 = Date.now();
const log = (...a: unknown[]) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run scripts/run-e2e.sh (it sources the setup cache's env.sh)`);
  return v;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const p = (srv.address() as net.AddressInfo).port; srv.close(() => resolve(p)); });
  });
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try { const v = await fn(); if (v) return v; } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
}

/** Which still-landing server features exist: ask a throwaway sidecar over stdio. */
async function probeServer(python: string, fake: FakeGemini, home: string): Promise<Set<string>> {
  const client = await StdioSidecarClient.start({
    command: python, args: ['-m', 'sidecar'], cwd: REPO,
    env: { ...process.env, SIDECAR_HOME: home }, settings: { baseUrl: fake.url, apiKey: API_KEY },
  });
  const have = new Set<string>();
  const probe = async (feature: string, method: string, params: object) => {
    try { await client.connection.sendRequest(method, params); have.add(feature); } catch (e) {
      if (errorCode(e) !== ErrorCode.methodNotFound) have.add(feature); // exists, just refused these params
    }
  };
  await probe('compress', Method.compress, {});
  await probe('sessions', Method.listSessions, {});
  await probe('resume', Method.resumeSession, { sessionId: 'no-such-session' });
  await probe('newSession', Method.newSession, {});
  await probe('transcript', Method.getTranscript, {});
  await probe('undo', Method.undoCompaction, {});
  await probe('branches', Method.forkSession, { beforeMessageId: 'no-such-message' });
  await probe('pins', Method.listPins, {});
  await probe('checkpoints', Method.previewRewind, { messageId: 'no-such-message' }); // rewind with files
  await probe('memory', Method.getMemory, {});
  // tools: does a functionCall from the model reach the editor as a tool call / confirmation?
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-probe-ws-'));
  let sawTool = false;
  client.connection.onNotification(Method.toolCall, () => { sawTool = true; });
  client.connection.onRequest(Method.confirmToolCall, () => { sawTool = true; return { decision: 'deny' }; });
  await fake.script([toolCall(ws)]);
  await client.api.sendMessage({ text: 'probe: write the notes file' }).catch(() => undefined);
  if (sawTool) have.add('tools');
  fs.rmSync(ws, { recursive: true, force: true });
  await client.stop();
  return have;
}

class Workbench {
  constructor(readonly page: Page, readonly shots: string) {}

  async shot(name: string): Promise<string> {
    const file = path.join(this.shots, `${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /** F1, type the title, click the matching row. */
  async runCommand(title: string): Promise<void> {
    const page = this.page;
    const input = page.locator('.quick-input-widget input');
    // A quick input that is still closing (from the previous step) can swallow F1 or leave the new one inert:
    // close whatever is open, wait for it to be gone, and open the palette again until its input takes text.
    for (let attempt = 1; ; attempt++) {
      await page.keyboard.press('Escape');
      await input.waitFor({ state: 'hidden', timeout: 5_000 }).catch(() => undefined);
      await page.keyboard.press('F1');
      try {
        await input.waitFor({ state: 'visible', timeout: 5_000 });
        await input.fill(`>${title}`, { timeout: 5_000 });
        break;
      } catch (e) {
        if (attempt >= 4) throw e;
        log(`command palette not ready for “${title}” (attempt ${attempt}); opening it again`);
      }
    }
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    await row.waitFor({ state: 'visible', timeout: 15_000 });
    await row.click();
  }

  /**
   * Type into a quick input and accept. `title` names the input meant (its title bar): a quick pick that stays open
   * while its button opens an input box, or a palette still closing, shows an input too, and typing into that one
   * races the extension host. With `row`, wait for that result row before accepting.
   */
  async quickInput(text: string, opts: { title?: string; row?: string } = {}): Promise<void> {
    const widget = this.page.locator('.quick-input-widget');
    if (opts.title) await widget.locator('.quick-input-title', { hasText: opts.title }).waitFor({ state: 'visible', timeout: 15_000 });
    const input = widget.locator('input');
    await input.waitFor({ state: 'visible' });
    await input.fill(text);
    const row = opts.row;
    if (row) await this.page.locator('.quick-input-list .monaco-list-row', { hasText: row }).first().waitFor({ timeout: 15_000 });
    await this.page.keyboard.press('Enter');
  }

  async toast(re: RegExp, timeoutMs = 30_000): Promise<string> {
    const toast = this.page.locator('.notifications-toasts .notification-toast', { hasText: re }).first();
    await toast.waitFor({ state: 'visible', timeout: timeoutMs });
    return (await toast.innerText()).replace(/\s+/g, ' ').trim();
  }

  /** The status bar item's text and its accessible label (which carries the exact percentage). */
  async usage(): Promise<{ text: string; label: string; percent: number } | undefined> {
    const item = this.page.locator('.statusbar-item[aria-label^="Sidecar: "]').first();
    if (!(await item.count())) return undefined;
    const label = (await item.getAttribute('aria-label')) ?? '';
    const m = /Sidecar: ([\d.]+) percent/.exec(label);
    if (!m) return undefined;
    return { text: (await item.innerText()).trim(), label, percent: Number(m[1]) };
  }

  /** Hover the status bar item and read its tooltip (waits until it contains `needle`). */
  async tooltip(needle: string | RegExp = 'Source:'): Promise<string> {
    const page = this.page;
    await page.mouse.move(700, 400);
    await page.locator('.statusbar-item[aria-label^="Sidecar: "]').first().hover();
    const hover = page.locator('.monaco-hover', { hasText: needle }).first();
    await hover.waitFor({ state: 'visible', timeout: 15_000 });
    const text = (await hover.innerText()).replace(/\s+/g, ' ');
    await page.mouse.move(700, 400);
    await page.keyboard.press('Escape');
    return text;
  }

  /** The chat view's webview frame (the inner frame holding #composer). */
  async chat(): Promise<Frame> {
    return waitFor('the chat webview', async () => {
      for (const f of this.page.frames()) {
        if (await f.$('#composer').catch(() => null)) return f;
      }
      return undefined;
    }, 30_000, 250);
  }

  /** Send from the chat view and wait for the finished reply; `during` runs while the turn is in flight. */
  async send(text: string, during?: (chat: Frame) => Promise<void>): Promise<string> {
    const chat = await this.chat();
    const replies = chat.locator('.msg.model');
    const before = await replies.count();
    await chat.locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
    await chat.locator('#input').fill(text);
    await chat.locator('#input').press('Enter');
    if (during) await during(chat);
    // the turn is over (a turn with tool calls has a message before its cards and one after them)
    await waitFor('the streamed reply', async () => (await replies.count()) > before && !(await chat.locator('.msg.model.streaming').count()) && !(await chat.locator('body.busy').count()), 60_000);
    const error = chat.locator('.note.error');
    if (await error.count()) throw new Error(`chat error: ${await error.last().innerText()}`);
    return replies.last().innerText();
  }
}

function findFiles(dir: string, re: RegExp): string[] {
  const out: string[] = [];
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...findFiles(p, re)); else if (re.test(e.name)) out.push(p);
  }
  return out;
}

/** The sidecar wheel in the vsix plus every dependency as wheels, in .cache (built once per dependency set). */
function buildWheelhouse(python: string, vsix: string): string {
  const wheel = findFiles(path.join(path.dirname(vsix), 'server'), /^sidecar-.*\.whl$/)[0];
  if (!wheel) throw new Error('no server/sidecar-*.whl next to the vsix: the package script builds it');
  const deps = /dependencies = \[([\s\S]*?)\]/.exec(fs.readFileSync(path.join(REPO, 'pyproject.toml'), 'utf8'))?.[1] ?? '';
  // wheels are per Python version and platform (msgspec, pydantic-core…): they are part of the key
  const tag = spawnSync(python, ['-c', 'import sys, sysconfig; print(sys.version_info[:2], sysconfig.get_platform())'], { encoding: 'utf8' }).stdout.trim();
  const key = require('node:crypto').createHash('sha256').update(deps).update(tag).digest('hex').slice(0, 12) as string;
  const dir = path.join(REPO, '.cache', 'wheelhouse', key);
  if (!fs.existsSync(path.join(dir, '.ok'))) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    // pip download resolves the wheel's dependencies from the package index (or PIP_FIND_LINKS) once
    const r = spawnSync(python, ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--dest', dir, wheel], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`building the wheelhouse failed (pip download needs the package index once):\n${r.stderr}`);
    for (const f of fs.readdirSync(dir)) if (/^sidecar-/.test(f)) fs.rmSync(path.join(dir, f)); // the vsix brings its own
    fs.writeFileSync(path.join(dir, '.ok'), new Date().toISOString());
  }
  return dir;
}

function sidecarPids(python: string, home: string): number[] {
  const pids: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (cmd[0] !== python || cmd[1] !== '-m' || cmd[2] !== 'sidecar') continue;
      const environ = fs.readFileSync(`/proc/${d}/environ`, 'utf8').split('\0');
      if (environ.includes(`SIDECAR_HOME=${home}`)) pids.push(Number(d));
    } catch { /* gone, or not ours */ }
  }
  return pids;
}

async function main(): Promise<void> {
  const codeServer = env('VSCODE_E2E_CODE_SERVER');
  const node24 = env('VSCODE_E2E_NODE24');
  const chromiumPath = process.env.VSCODE_E2E_CHROMIUM || '/usr/bin/chromium';
  const vsix = path.resolve(env('VSIX'));
  const python = projectPython();
  const artifacts = path.resolve(process.env.E2E_ARTIFACTS || path.join(REPO, 'test-artifacts', 'vscode-e2e'));
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });
  const run = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-vscode-e2e-'));
  const dirs = Object.fromEntries(['ud', 'exts', 'ws', 'home', 'probe-home', 'xdg', 'chrome', 'userhome'].map((d) => [d, path.join(run, d)]));
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });

  let fake: FakeGemini | undefined;
  let server: ChildProcess | undefined;
  let browser: BrowserContext | undefined;
  let wb: Workbench | undefined;
  const results: Array<[string, string]> = [];
  try {
    fake = await startFakeGemini(python, { apiKeys: [API_KEY] });
    log(`fake Gemini at ${fake.url}`);
    const have = await probeServer(python, fake, dirs['probe-home']);
    log(`server features: ${[...have].join(', ') || '(none of the optional ones)'}`);
    await fake.reset();

    // the workspace: one Python file with a word to select
    fs.mkdirSync(path.join(dirs.ws, 'src'));
    const appPy = path.join(dirs.ws, 'src', 'app.py');
    fs.writeFileSync(appPy, `"""A tiny module for the sidecar e2e test."""\n\n\ndef answer():\n    ${MARKER} = 42\n    return ${MARKER}\n`);
    // a file the agent edits, and rewinding with files puts back
    const restoreMe = path.join(dirs.ws, 'src', 'restore_me.py');
    fs.writeFileSync(restoreMe, 'VALUE = "before the agent"\n');

    // defect 1: a Gemini CLI session whose model messages have text *and* tool calls, imported to be resumed
    const imported = spawnSync(python, ['-m', 'sidecar', 'import', path.join(REPO, 'tests', 'fixtures', 'gemini-cli', 'legacy-session.json'), '--project', dirs.ws],
      { env: { ...process.env, SIDECAR_HOME: dirs.home }, encoding: 'utf8' });
    if (imported.status !== 0) throw new Error(`sidecar import failed: ${imported.stderr}`);
    // the private environment installs from a local wheelhouse: offline-safe and no index traffic
    const wheelhouse = buildWheelhouse(python, vsix);
    log(`wheelhouse ${path.relative(REPO, wheelhouse)}`);

    const serverEnv: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${node24}/bin:${process.env.PATH}`,
      XDG_CONFIG_HOME: path.join(dirs.xdg, 'config'), XDG_DATA_HOME: path.join(dirs.xdg, 'data'), XDG_CACHE_HOME: path.join(dirs.xdg, 'cache'),
      SIDECAR_HOME: dirs.home,
      HOME: dirs.userhome, // the sidecar's global memory is ~/.gemini/GEMINI.md: the test's, never the user's
      // the sidecar package from this checkout, whether or not the venv has it installed (editable)
      PYTHONPATH: [REPO, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
      GEMINI_API_KEY: '', GOOGLE_API_KEY: '', GOOGLE_GEMINI_BASE_URL: '',
      PIP_NO_INDEX: '1', PIP_FIND_LINKS: wheelhouse, PIP_CONFIG_FILE: os.devNull,
    };
    const install = spawnSync(codeServer, ['--user-data-dir', dirs.ud, '--extensions-dir', dirs.exts, '--install-extension', vsix], { env: serverEnv, encoding: 'utf8' });
    if (install.status !== 0 || !/successfully installed/i.test(install.stdout)) throw new Error(`installing the vsix failed:\n${install.stdout}\n${install.stderr}`);
    log('vsix installed');
    // code-server is a remote setup: machine-scoped settings (sidecar.serverCommand) are read from Machine/
    const settings = JSON.stringify({
      'workbench.startupEditor': 'none',
      'chat.disableAIFeatures': true,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoUpdate': false,
      'extensions.autoCheckUpdates': false,
      'workbench.tips.enabled': false,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'sidecar.serverCommand': [python, '-m', 'sidecar'],
      'sidecar.baseUrl': fake.url,
      'sidecar.tokenLimit': TOKEN_LIMIT,
      'sidecar.trace.server': 'messages',
    }, null, 2);
    for (const scope of ['User', 'Machine']) {
      fs.mkdirSync(path.join(dirs.ud, scope), { recursive: true });
      fs.writeFileSync(path.join(dirs.ud, scope, 'settings.json'), settings);
    }

    const port = await freePort();
    const serverLog = fs.openSync(path.join(artifacts, 'code-server.log'), 'w');
    server = spawn(codeServer, [
      '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override',
      '--user-data-dir', dirs.ud, '--extensions-dir', dirs.exts, dirs.ws,
    ], { env: serverEnv, detached: true, stdio: ['ignore', serverLog, serverLog] });
    await waitFor('code-server /healthz', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000, 250);
    log(`code-server on port ${port}`);

    browser = await chromium.launchPersistentContext(dirs.chrome, {
      executablePath: chromiumPath, headless: true, viewport: { width: 1400, height: 900 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    });
    const page = browser.pages()[0] ?? await browser.newPage();
    wb = new Workbench(page, artifacts);
    const w = wb;
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.ws)}`, { waitUntil: 'domcontentloaded' });

    const step = async (name: string, fn: () => Promise<string | void>, opts: { needs?: string[] } = {}) => {
      const missing = (opts.needs ?? []).filter((f) => !have.has(f));
      if (missing.length) throw new Error(`${name}: the server lacks ${missing.join(', ')}`);
      const s = Date.now();
      const note = await fn();
      results.push([name, `ok ${((Date.now() - s) / 1000).toFixed(1)}s${note ? ` — ${note}` : ''}`]);
      log(`ok ${name}${note ? `: ${note}` : ''}`);
    };

    let before = 0;
    await step('workbench loads', async () => { await page.waitForSelector('.monaco-workbench', { timeout: 60_000 }); });
    await step('the sidecar starts and the status bar shows its usage', async () => {
      const u = await waitFor('the usage status item', () => w.usage(), 60_000);
      return `“${u.text}”`;
    });
    await step('a new session\'s tooltip calls its count an estimate of the empty conversation (defect 6)', async () => {
      const text = await w.tooltip('Source:');
      if (!/Source: estimate of the empty conversation \(system prompt and tools/.test(text)) throw new Error(`tooltip: ${text}`);
      if (/since the last reply/.test(text)) throw new Error(`a new session has had no reply: ${text}`);
      return text.slice(text.indexOf('Source:'), text.indexOf('Source:') + 70);
    });
    await step('Sidecar: Set API Key stores the key in SecretStorage', async () => {
      await w.runCommand('Sidecar: Set API Key');
      await w.quickInput(API_KEY, { title: 'Gemini API key' });
      return w.toast(/API key saved/);
    });
    await step('open a workspace file and select text', async () => {
      await page.keyboard.press('Control+P');
      await w.quickInput('app.py', { row: 'app.py' });
      const word = page.locator('.editor-instance .view-line span', { hasText: MARKER }).first();
      await word.waitFor({ timeout: 20_000 });
      await word.dblclick();
      await page.locator('.editor-instance .selected-text').first().waitFor({ timeout: 5000 });
    });
    await step('send a message from the chat view; the reply streams in', async () => {
      await w.runCommand('Sidecar: Open Chat');
      // the empty chat names the backend in use before the first reply
      const empty = (await w.chat()).locator('#empty #backend');
      await waitFor('the backend in the empty chat', async () => /^Replies come from \S/.test(await empty.innerText().catch(() => '')), 15_000);
      const reply = await w.send(`Hello! Please look at my selection. ${FILLER}`);
      return `reply: “${reply.replace(/\s+/g, ' ').slice(0, 60)}…”`;
    });
    await step('the status bar shows a percentage', async () => {
      const u = await waitFor('a non-zero percentage', async () => { const x = await w.usage(); return x && x.percent > 0 ? x : undefined; });
      before = u.percent;
      return `“${u.text}” (${u.percent}%)`;
    });
    await step('every model request carried the key from SecretStorage', async () => {
      const reqs = (await fake!.requests()).filter((r) => r.kind !== 'count');
      if (!reqs.length || reqs.some((r) => r.status !== 200)) throw new Error(`requests: ${JSON.stringify(reqs.map((r) => r.status))}`);
      return `${reqs.length} requests, all 200`;
    });
    await step('more turns build up history', async () => {
      for (let i = 1; i <= 3; i++) await w.send(`Turn ${i}: tell me more. ${FILLER}`);
      // defect 7: scrolled up, sending follows the chat to the new message and the streamed reply
      const chatFrame = await w.chat();
      await chatFrame.evaluate('window.scrollTo(0, 0)');
      await w.send(`Turn 4: tell me more. ${FILLER}`);
      const atBottom = await chatFrame.evaluate('document.documentElement.scrollHeight - window.scrollY - window.innerHeight') as number;
      if (atBottom > 80) throw new Error(`after sending from a scrolled-up chat the view is ${atBottom}px above the end`);
      const u = await waitFor('usage after the turns', async () => { const x = await w.usage(); return x && x.percent > before ? x : undefined; });
      before = u.percent;
      await w.shot('1-chat');
      return `“${u.text}”`;
    });
    await step('Sidecar: Compress Conversation from the command palette; the percentage drops', async () => {
      await w.runCommand('Sidecar: Compress Conversation');
      await w.quickInput('keep the status bar details', { title: 'Compress Conversation' });
      const message = await w.toast(/compressed from/i, 60_000);
      const u = await waitFor('a lower percentage', async () => { const x = await w.usage(); return x && x.percent < before ? x : undefined; });
      await w.shot('2-compressed');
      return `“${message.slice(0, 70)}”; ${before}% → ${u.percent}% (“${u.text}”)`;
    }, { needs: ['compress'] });
    await step('the chat view shows a compaction marker', async () => {
      const chat = await w.chat();
      const marker = chat.locator('.marker', { hasText: /compressed/i }).first();
      await marker.waitFor({ timeout: 10_000 });
      return `“${(await marker.innerText()).trim()}”`;
    }, { needs: ['compress'] });
    await step('the next request carries the full IDE context with the selected text', async () => {
      await fake!.reset();
      await w.send('What is the selected identifier?');
      const reqs = (await fake!.requests()).filter((r) => (r.kind === 'stream' || r.kind === 'generate') && !r.summary);
      const text = requestText(reqs[reqs.length - 1]);
      for (const [what, needle] of [['the IDE context header', IDE_HEADER], ['the selected text', MARKER], ['the active file', appPy]] as const) {
        if (!text.includes(needle)) throw new Error(`the request after compaction lacks ${what} (${needle})`);
      }
      const json = /```json\n([\s\S]*?)\n```/.exec(text.slice(text.indexOf(IDE_HEADER)));
      return json ? `context: ${json[1].replace(/\s+/g, ' ').slice(0, 140)}` : undefined;
    }, { needs: ['compress'] });
    await step('hovering the status bar item shows exact counts, threshold, source and the last compaction', async () => {
      await page.locator('.statusbar-item[aria-label^="Sidecar: "]').first().hover();
      const hover = page.locator('.monaco-hover', { hasText: 'Auto-compress at' }).first();
      await hover.waitFor({ state: 'visible', timeout: 15_000 });
      const text = (await hover.innerText()).replace(/\s+/g, ' ');
      for (const needle of ['Tokens:', '/ 12,000', 'Model: gemini', 'Source: api', 'Last compaction:']) {
        if (!text.includes(needle)) throw new Error(`tooltip lacks “${needle}”: ${text}`);
      }
      await page.mouse.move(700, 400);
      await page.keyboard.press('Escape');
      return text.slice(0, 120);
    });
    await step('clicking the status bar item starts Compress Conversation', async () => {
      await page.locator('.statusbar-item[aria-label^="Sidecar: "]').first().click();
      await page.locator('.quick-input-widget', { hasText: 'Compress Conversation' }).waitFor({ state: 'visible', timeout: 10_000 });
      await page.keyboard.press('Escape');
    }, { needs: ['compress'] });
    await step('Sidecar: Show Transcript opens the session as Markdown, with the snapshot, in one tab (defect 4)', async () => {
      await w.runCommand('Sidecar: Show Transcript');
      const line = page.locator('.editor-instance .view-line', { hasText: '# Sidecar session' }).first();
      await line.waitFor({ timeout: 15_000 });
      await w.shot('4-transcript');
      const title = (await line.innerText()).trim();
      // the <state_snapshot> the summary model wrote is in the document (find widget: "1 of N", not "No results")
      await page.locator('.editor-instance .view-lines').first().click();
      await page.keyboard.press('Control+F');
      await page.keyboard.type('<state_snapshot>');
      const count = page.locator('.find-widget .matchesCount').first();
      const found = await waitFor('the find widget\'s count', async () => { const t = (await count.innerText()).trim(); return /\d+ of \d+/.test(t) ? t : (/No results/.test(t) ? `none: ${t}` : undefined); }, 10_000);
      if (found.startsWith('none')) throw new Error('the transcript document lacks the <state_snapshot> text');
      await page.keyboard.press('Escape');
      await w.runCommand('Sidecar: Show Transcript');
      const tabs = page.locator('.tabs-container .tab', { hasText: 'Sidecar transcript' });
      await waitFor('the transcript tab', async () => (await tabs.count()) >= 1);
      if ((await tabs.count()) !== 1) throw new Error(`Show Transcript twice gave ${await tabs.count()} tabs`);
      await w.runCommand('View: Close Editor');
      return `${title}; snapshot found (${found}); one tab`;
    }, { needs: ['transcript'] });
    await step('Sidecar: Run Doctor (Online) runs `sidecar doctor` with this window\'s settings and key: one countTokens, 200 OK', async () => {
      await w.runCommand('Sidecar: Run Doctor (Online)');
      const line = page.locator('.editor-instance .view-line', { hasText: '# Sidecar doctor (online)' }).first();
      await line.waitFor({ timeout: 60_000 });
      await w.shot('4b-doctor');
      const find = async (needle: string) => {
        await page.locator('.editor-instance .view-lines').first().click();
        await page.keyboard.press('Control+F');
        await page.keyboard.press('Control+A');
        await page.keyboard.type(needle);
        const count = page.locator('.find-widget .matchesCount').first();
        const found = await waitFor(`the find widget's count for ${needle}`, async () => { const t = (await count.innerText()).trim(); return /\d+ of \d+/.test(t) ? t : (/No results/.test(t) ? `none: ${t}` : undefined); }, 10_000);
        await page.keyboard.press('Escape');
        if (found.startsWith('none')) throw new Error(`the doctor's report lacks “${needle}”`);
      };
      await find('All good.');
      await find('HTTP 200 OK');
      await find('sidecar.apiKey in the editor');
      await find(`Gemini API at ${fake!.url}`);
      if (await page.locator('.editor-instance .view-line', { hasText: API_KEY }).count()) throw new Error('the report shows the key');
      await w.runCommand('View: Close Editor');
      return 'All good; countTokens 200 OK with the key from the secret storage';
    });
    await step('Sidecar: Undo Last Compaction restores the history; the percentage rises', async () => {
      const low = (await w.usage())!.percent;
      await w.runCommand('Sidecar: Undo Last Compaction');
      const u = await waitFor('a higher percentage', async () => { const x = await w.usage(); return x && x.percent > low ? x : undefined; }, 30_000);
      const chat = await w.chat();
      await chat.locator('.marker.undone').first().waitFor({ timeout: 10_000 });
      // defect 3: a fresh estimate labelled as one, and the tooltip says the compaction was undone
      const tip = await w.tooltip('Last compaction:');
      if (!/Source: estimate of the restored history after the undo/.test(tip)) throw new Error(`tooltip after undo: ${tip}`);
      if (!/Last compaction: .* — undone/.test(tip)) throw new Error(`the tooltip does not say the compaction was undone: ${tip}`);
      // the undo lasts; the tooltip says until when automatic compaction waits
      if (!/Auto-compaction paused after undo until \d+% \([\d,]+ tokens\)/.test(tip)) throw new Error(`the tooltip does not say auto-compaction is paused: ${tip}`);
      return `${low}% → ${u.percent}%; the marker shows “undone”; the tooltip says estimate, undone and paused`;
    }, { needs: ['undo', 'transcript'] });
    await step('a tool call shows a card; Allow answers sidecar/confirmToolCall', async () => {
      await fake!.script([toolCall(dirs.ws)]);
      await w.send('Please write the notes file.', async (chat) => {
        const allow = chat.locator('.card.tool button[data-decision="allow"]').first();
        await allow.waitFor({ timeout: 30_000 });
        await w.shot('3-tool-card');
        await allow.click();
      });
      const chat = await w.chat();
      await chat.locator('.card.tool.status-done .decision', { hasText: 'Allowed' }).first().waitFor({ timeout: 10_000 });
      // the edit arrives as workspace/applyEdit (VS Code applies it) or is written to disk by the sidecar
      await waitFor('notes.txt', async () => fs.existsSync(path.join(dirs.ws, 'notes.txt')), 10_000);
      return 'card answered Allow; the card shows done; notes.txt exists';
    }, { needs: ['tools'] });
    await chatTurnSteps({ step, w, fake: fake!, waitFor });
    await questionFocusSteps({ step, w, fake: fake!, waitFor, ws: dirs.ws });
    await contextSteps({ step, w, waitFor });
    // ---- MCP: e2e/mcp.ts ----
    await mcpSteps({ step, w, fake: fake!, python, userData: dirs.ud, waitFor });
    // ---- end MCP ----
    let firstSession = '';
    await step('Sidecar: New Session, then Sidecar: Resume Session brings the conversation back', async () => {
      await w.runCommand('Sidecar: New Session');
      const chat = await w.chat();
      await chat.locator('.note', { hasText: 'New session' }).first().waitFor({ timeout: 10_000 });
      await w.runCommand('Sidecar: Resume Session');
      // session rows (not the palette's command row): their detail says "Last used"; skip the current one
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Last used' }).filter({ hasNotText: 'current session' }).first();
      await row.waitFor({ timeout: 10_000 });
      firstSession = (await row.innerText()).replace(/\s+/g, ' ');
      await row.click();
      await chat.locator('.note', { hasText: 'Resumed session' }).first().waitFor({ timeout: 15_000 });
      await chat.locator('.msg.user', { hasText: 'Hello! Please look at my selection' }).first().waitFor({ timeout: 10_000 });
      return `resumed “${firstSession.slice(0, 60)}”`;
    }, { needs: ['sessions', 'newSession', 'resume', 'transcript'] });
    await step('Pin on a chat message lists the fact in the view and the model gets it; Remove unpins it', async () => {
      const chat = await w.chat();
      const message = chat.locator('.msg.user', { hasText: 'Hello! Please look at my selection' }).first();
      await message.hover();
      await message.locator('button[data-action="pin"]').click();
      await chat.locator('#pins .pin', { hasText: 'Hello! Please look at my selection' }).first().waitFor({ timeout: 15_000 });
      await fake!.reset();
      await w.send('Anything pinned?');
      const reqs = (await fake!.requests()).filter((r) => r.kind === 'stream' && !r.summary);
      if (!JSON.stringify(reqs[reqs.length - 1].body.systemInstruction ?? '').includes('Hello! Please look at my selection')) {
        throw new Error('the pinned fact did not reach the model');
      }
      // Show Pinned Facts shows each pin once (the start of the text, then the rest), never twice
      await w.runCommand('Sidecar: Show Pinned Facts');
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Hello! Please look at my selection' }).first();
      await row.waitFor({ timeout: 15_000 });
      const rowText = await row.innerText();
      const times = rowText.split('Hello! Please look at my selection').length - 1;
      await page.keyboard.press('Escape');
      if (times !== 1) throw new Error(`Show Pinned Facts shows the pin ${times} times: ${rowText.slice(0, 200)}`);
      await chat.locator('#pins .pin button', { hasText: 'Remove' }).first().click();
      await chat.locator('#pins').waitFor({ state: 'hidden', timeout: 15_000 });
      return 'pinned from the chat view, sent in the system instruction, listed once, removed';
    }, { needs: ['pins'] });
    await step('Rewind to here takes a message back into the input box; Fork from here starts a branch', async () => {
      const chat = await w.chat();
      await w.send('REWIND-ME: a message to take back');
      const target = chat.locator('.msg.user', { hasText: 'REWIND-ME' }).last();
      await target.hover();
      await target.locator('button[data-action="rewind"]').click();
      await waitFor('the text back in the input box', async () => (await chat.locator('#input').inputValue()) === 'REWIND-ME: a message to take back', 15_000);
      await chat.locator('.msg.user.rewound', { hasText: 'REWIND-ME' }).first().waitFor({ timeout: 15_000 });
      // the note names the message by its words, never by an internal id such as m10
      const note = await chat.locator('.note', { hasText: 'Rewound to before your message' }).last().innerText();
      if (!note.includes('“REWIND-ME: a message to take back”') || /\bm\d+\b/.test(note)) throw new Error(`the rewind note: ${note}`);
      await chat.locator('#input').fill('');
      const first = chat.locator('.msg.user', { hasText: 'Anything pinned?' }).first();
      await first.hover();
      await first.locator('button[data-action="fork"]').click();
      await chat.locator('.note', { hasText: 'Forked into a new session' }).first().waitFor({ timeout: 15_000 });
      if (await chat.locator('.msg.user', { hasText: 'Anything pinned?' }).count()) throw new Error('the fork kept the message it was cut before');
      // like Rewind, Fork from here puts the message it was cut before into the input box
      await waitFor('the forked message in the input box', async () => (await chat.locator('#input').inputValue()) === 'Anything pinned?', 15_000);
      await chat.locator('#input').fill('');
      return 'rewound (input box refilled, message struck through, named by its words); forked before “Anything pinned?” (back in the input box)';
    }, { needs: ['branches'] });
    await step('Rewind to here → “Rewind conversation and files” lists the files, then puts the edited file back in its editor and on disk and removes the one the agent created', async () => {
      const editorLine = (needle: string) => page.locator('.editor-instance .view-line', { hasText: needle }).first();
      // Quick Open right after the previous step's pickers: one still closing leaves the new input inert, so close
      // whatever is open and open it again until its input takes the text (as runCommand does for the palette)
      const quickOpen = page.locator('.quick-input-widget input');
      for (let attempt = 1; ; attempt++) {
        await page.keyboard.press('Escape');
        await quickOpen.waitFor({ state: 'hidden', timeout: 5_000 }).catch(() => undefined);
        await page.keyboard.press('Control+P');
        try {
          await quickOpen.fill('restore_me.py', { timeout: 5_000 });
          break;
        } catch (e) {
          if (attempt >= 4) throw e;
        }
      }
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'restore_me.py' }).first().waitFor({ timeout: 15_000 });
      await page.keyboard.press('Enter');
      await editorLine('VALUE = "before the agent"').waitFor({ timeout: 20_000 });
      await fake!.script([
        { kind: 'function_call', match: 'chat', name: 'replace', args: { path: 'src/restore_me.py', old_string: '"before the agent"', new_string: '"set by the agent"' } },
        { kind: 'function_call', match: 'chat', name: 'write_file', args: { path: 'created_by_agent.txt', content: 'the agent wrote this\n' } },
      ]);
      const chat = await w.chat();
      const created = path.join(dirs.ws, 'created_by_agent.txt');
      await w.send('REWIND-FILES: set the value and write a file', async (c) => {
        // Allow whatever the two edits ask (in this approval mode each edit asks), until both are done
        await waitFor('both edits allowed and applied', async () => {
          const allow = c.locator('.card.tool button[data-decision="allow"]');
          if (await allow.count()) await allow.first().click({ timeout: 2_000 }).catch(() => undefined);
          return fs.existsSync(created) && (await editorLine('VALUE = "set by the agent"').count()) > 0;
        }, 45_000, 250);
      });
      await editorLine('VALUE = "set by the agent"').click({ timeout: 15_000 });
      await page.keyboard.press('Control+S'); // the user keeps the agent's edit: now it is on disk too
      await waitFor('the agent\'s edit saved and its file created', async () => fs.readFileSync(restoreMe, 'utf8').includes('set by the agent') && fs.existsSync(created), 15_000);
      await w.send('REWIND-FILES: a later message');

      const target = chat.locator('.msg.user', { hasText: 'REWIND-FILES: set the value' }).last();
      await target.hover();
      await target.locator('button[data-action="rewind"]').click();
      const choice = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Rewind conversation and files' }).first();
      await choice.waitFor({ timeout: 15_000 });
      // and the conversation-only choice next to it (its detail says the files stay)
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'The files stay as they are now.' }).first().waitFor({ timeout: 5_000 });
      const choiceText = (await choice.innerText()).replace(/\s+/g, ' ');
      await w.shot('5-rewind-choice');
      await choice.click();
      const dialog = page.locator('.monaco-dialog-box').first();
      await dialog.waitFor({ timeout: 15_000 });
      const listed = (await dialog.innerText()).replace(/\s+/g, ' ');
      for (const needle of ['Put back as they were before your message:', 'src/restore_me.py', 'Removed (the agent created them):', 'created_by_agent.txt']) {
        if (!listed.includes(needle)) throw new Error(`the confirmation lacks “${needle}”: ${listed}`);
      }
      await w.shot('6-rewind-files-modal');
      await dialog.locator('.monaco-button', { hasText: 'Rewind and Restore' }).first().click();

      await waitFor('the text back in the input box', async () => (await chat.locator('#input').inputValue()) === 'REWIND-FILES: set the value and write a file', 20_000);
      await editorLine('VALUE = "before the agent"').waitFor({ timeout: 15_000 });
      await waitFor('created_by_agent.txt removed', async () => !fs.existsSync(created), 15_000);
      // restored through workspace/applyEdit: the editor holds the content before the message; saving keeps it
      await editorLine('VALUE = "before the agent"').click();
      await page.keyboard.press('Control+S');
      await waitFor('restore_me.py back on disk', async () => fs.readFileSync(restoreMe, 'utf8') === 'VALUE = "before the agent"\n', 15_000);
      // the agent's created file had only been written in the editor (unsaved): Save All must not bring it back
      await w.runCommand('File: Save All Files');
      await waitFor('Save All done (no dirty editor left)', async () => !(await page.locator('.tabs-container .tab.dirty').count()), 10_000);
      if (fs.existsSync(created)) throw new Error(`Save All brought back the removed file: ${JSON.stringify(fs.readFileSync(created, 'utf8'))}`);
      const note = await chat.locator('.note', { hasText: 'Rewound to before your message “REWIND-FILES' }).last().innerText();
      for (const needle of ['Restored src/restore_me.py.', 'Removed created_by_agent.txt (the agent had created it).']) {
        if (!note.includes(needle)) throw new Error(`the rewind note lacks “${needle}”: ${note}`);
      }
      await chat.locator('#input').fill('');
      return `choice “${choiceText.slice(0, 90)}”; modal listed both files; editor and disk back; created file removed`;
    }, { needs: ['checkpoints', 'tools'] });
    await step('the Resume quick pick renames a session with its Rename button', async () => {
      await w.runCommand('Sidecar: Resume Session');
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'current session' }).first();
      await row.waitFor({ timeout: 10_000 });
      await row.hover();
      await row.locator('.action-label[aria-label="Rename"], a[title="Rename"]').first().click();
      await w.quickInput('Renamed from the e2e test', { title: 'Rename Session' });
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Renamed from the e2e test' }).first().waitFor({ timeout: 15_000 });
      await page.keyboard.press('Escape');
      return 'the list shows the new title';
    }, { needs: ['branches'] });
    await step('resuming a session another window holds continues in a branch, and says so', async () => {
      // the first session's own file (not a branch): another process takes its lock, as a second window would
      const files = fs.readdirSync(path.join(dirs.home, 'sessions'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.jsonl')).map((f) => path.join(dirs.home, 'sessions', f));
      const original = files.find((f) => {
        const lines = fs.readFileSync(f, 'utf8').split('\n');
        return !lines[1]?.includes('"type":"fork"') && lines.some((l) => l.includes('Hello! Please look at my selection'));
      });
      if (!original) throw new Error(`the first session's file is not among ${JSON.stringify(files)}`);
      const holder = spawn(python, ['-c', 'import fcntl, sys, time\nf = open(sys.argv[1], "ab")\nfcntl.flock(f, fcntl.LOCK_EX)\nprint("locked", flush=True)\ntime.sleep(120)', original]);
      try {
        await new Promise<void>((resolve, reject) => {
          holder.stdout.on('data', (d: Buffer) => { if (d.toString().includes('locked')) resolve(); });
          holder.on('exit', () => reject(new Error('the lock holder exited')));
        });
        await w.runCommand('Sidecar: Resume Session');
        const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Hello! Please look' }).filter({ hasNotText: 'branch of' }).filter({ hasNotText: 'current session' }).first();
        await row.waitFor({ timeout: 10_000 });
        await row.click();
        const toast = await w.toast(/is open in another window; continuing in a new branch/);
        const chat = await w.chat();
        await chat.locator('.note', { hasText: 'open in another window' }).first().waitFor({ timeout: 15_000 });
        return toast.slice(0, 120);
      } finally {
        holder.kill('SIGKILL');
      }
    }, { needs: ['resume'] });
    await step('resuming an imported Gemini CLI session titles its tool cards with the tool names; nothing overflows (defect 1)', async () => {
      await w.runCommand('Sidecar: Resume Session');
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Fix the CSV parser quoting bug' }).first();
      await row.waitFor({ timeout: 10_000 });
      await row.click();
      const chat = await w.chat();
      await chat.locator('.note', { hasText: 'Resumed session' }).first().waitFor({ timeout: 15_000 });
      const names = await waitFor('tool cards', async () => { const n = await chat.locator('.card.tool .tool-name').allInnerTexts(); return n.length ? n : undefined; }, 10_000);
      for (const want of ['read_file', 'replace', 'run_shell_command']) if (!names.includes(want)) throw new Error(`tool cards: ${JSON.stringify(names)} (no ${want})`);
      await chat.locator('.msg.model', { hasText: 'Let me read the parser first.' }).first().waitFor({ timeout: 5_000 });
      const overflow = await chat.evaluate(`(() => {
        const root = document.documentElement;
        const wide = [...document.querySelectorAll('.card, .card *')].filter((c) => c.scrollWidth > c.clientWidth + 1 && getComputedStyle(c).overflowX === 'visible' || c.getBoundingClientRect().right > root.clientWidth + 1).length;
        return { scroll: root.scrollWidth, client: root.clientWidth, wide };
      })()`) as { scroll: number; client: number; wide: number };
      if (overflow.scroll > overflow.client + 1 || overflow.wide) throw new Error(`the chat overflows: ${JSON.stringify(overflow)}`);
      await w.shot('6-resumed-tools');
      return `cards ${JSON.stringify(names)}; width ${overflow.scroll}/${overflow.client}px`;
    }, { needs: ['resume', 'transcript'] });
    await step('Delete Session on a parent of branches; Restore on its toast, then Restore Deleted Session, bring it back', async () => {
      const sessionFiles = (root: string) => fs.existsSync(root) ? fs.readdirSync(root, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.jsonl') && !f.includes('parents')).map((f) => path.join(root, f)) : [];
      const original = sessionFiles(path.join(dirs.home, 'sessions')).find((f) => {
        const lines = fs.readFileSync(f, 'utf8').split('\n');
        return !lines[1]?.includes('"type":"fork"') && lines.some((l) => l.includes('Hello! Please look at my selection'));
      });
      if (!original) throw new Error('the first session\'s file is missing');
      const name = path.basename(original);
      const inTrash = () => sessionFiles(path.join(dirs.home, 'trash')).some((f) => path.basename(f) === name);
      const deleteOriginal = async () => {
        await w.runCommand('Sidecar: Delete Session');
        const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Hello! Please look' }).filter({ hasNotText: 'branch of' }).first();
        await row.waitFor({ timeout: 10_000 });
        await row.click();
        // Delete from the palette asks first, as the pick's Delete button does
        const confirm = page.locator('.monaco-dialog-box', { hasText: 'It goes to the trash for 30 days' }).first();
        await confirm.waitFor({ timeout: 15_000 });
        await confirm.locator('.monaco-button', { hasText: 'Delete' }).first().click();
        await waitFor('the session in the trash', async () => inTrash() && !fs.existsSync(original), 15_000);
        const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'moved to the trash' }).last();
        await toast.waitFor({ state: 'visible', timeout: 15_000 });
        return toast;
      };
      const toast = await deleteOriginal(); // it has branches (Fork from here, the other window's): deleting it works
      const text = (await toast.innerText()).replace(/\s+/g, ' ');
      if (text.includes('`') || text.includes('sidecar sessions')) throw new Error(`the delete toast shows a command line: ${text}`);
      await toast.locator('.monaco-button', { hasText: 'Restore' }).first().click();
      await waitFor('the session restored by the toast\'s button', async () => fs.existsSync(original) && !inTrash(), 15_000);
      await deleteOriginal();
      await page.keyboard.press('Escape');
      // its branch keeps the beginning it read from the deleted parent
      await w.runCommand('Sidecar: Resume Session');
      const branch = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Renamed from the e2e test' }).first();
      await branch.waitFor({ timeout: 10_000 });
      await branch.click();
      const chat = await w.chat();
      await chat.locator('.note', { hasText: 'Resumed session “Renamed from the e2e test”' }).last().waitFor({ timeout: 15_000 });
      await chat.locator('.msg.user', { hasText: 'Hello! Please look at my selection' }).first().waitFor({ timeout: 10_000 });
      await w.runCommand('Sidecar: Restore Deleted Session');
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Hello! Please look' }).filter({ hasText: 'deleted' }).first();
      await row.waitFor({ timeout: 10_000 });
      await row.click();
      await waitFor('the session restored by the command', async () => fs.existsSync(original) && !inTrash(), 15_000);
      return `${text.slice(0, 100)} → Restore; the branch keeps its beginning; restored again from the trash pick`;
    }, { needs: ['sessions'] });
    await step('a crashed sidecar is restarted (kill -9) and the chat keeps working', async () => {
      const pids = sidecarPids(python, dirs.home);
      if (pids.length !== 1) throw new Error(`expected one sidecar process, found ${JSON.stringify(pids)}`);
      process.kill(pids[0], 'SIGKILL');
      const chat = await w.chat();
      await chat.locator('.note', { hasText: 'restarted after a crash' }).first().waitFor({ timeout: 30_000 });
      const after = await waitFor('a new sidecar process', async () => { const p = sidecarPids(python, dirs.home); return p.length === 1 && p[0] !== pids[0] ? p : undefined; });
      await waitFor('the usage item back', () => w.usage());
      await w.send('Are you back?');
      return `pid ${pids[0]} killed → pid ${after[0]} answers`;
    });
    await step('… and it resumed the session it had (sidecar/resumeSession with the last sessionId)', async () => {
      const chat = await w.chat();
      await chat.locator('.note', { hasText: 'session was resumed' }).first().waitFor({ timeout: 5_000 });
      await fake!.reset();
      await w.send('Do you remember what we discussed?');
      const reqs = (await fake!.requests()).filter((r) => (r.kind === 'stream' || r.kind === 'generate') && !r.summary);
      if (!requestText(reqs[reqs.length - 1]).includes('Are you back?')) throw new Error('the restarted sidecar did not continue the session');
      return 'the next request continues the conversation';
    }, { needs: ['resume'] });
    await step('Sidecar: Restart Server resumes the session the chat view shows', async () => {
      const pids = sidecarPids(python, dirs.home);
      await w.runCommand('Sidecar: Restart Server');
      const chat = await w.chat();
      await chat.locator('.note', { hasText: 'The sidecar restarted; the session was resumed.' }).first().waitFor({ timeout: 30_000 });
      const after = await waitFor('a new sidecar process', async () => { const p = sidecarPids(python, dirs.home); return p.length === 1 && !pids.includes(p[0]) ? p : undefined; });
      await waitFor('the usage item back', () => w.usage());
      await fake!.reset();
      await w.send('What did I ask before the restart?');
      const reqs = (await fake!.requests()).filter((r) => (r.kind === 'stream' || r.kind === 'generate') && !r.summary);
      if (!requestText(reqs[reqs.length - 1]).includes('Do you remember what we discussed?')) throw new Error('after Restart Server the model no longer sees the conversation on screen');
      return `pid ${pids[0]} → ${after[0]}; the next request continues the conversation`;
    }, { needs: ['resume'] });
    await step('a serverCommand in User settings, which this remote window ignores, is written', async () => {
      const file = path.join(dirs.ud, 'User', 'settings.json');
      fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), 'sidecar.serverCommand': [python, '-m', 'sidecar', '--log-level', 'DEBUG'] }, null, 2));
    });
    await step('a settings change reaches the sidecar: threshold 5% turns the item to the warning colour', async () => {
      for (const scope of ['User', 'Machine']) {
        const file = path.join(dirs.ud, scope, 'settings.json');
        fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), 'sidecar.compressionThreshold': 0.05 }, null, 2));
      }
      const item = page.locator('.statusbar-item[aria-label^="Sidecar: "]').first();
      await waitFor('the warning colour', async () => /warning-kind/.test((await item.getAttribute('class')) ?? ''), 30_000);
      return `class “${await item.getAttribute('class')}”`;
    });
    await step('… and it offered no restart: the command in effect did not change', async () => {
      // the threshold's effect (the step before) came after the User change's handler ran: a prompt would show by now
      const offers = await page.locator('.notifications-toasts .notification-toast', { hasText: 'server command changed' }).count();
      if (offers) throw new Error('a User-scope serverCommand that does not apply in a remote window offered a restart');
      return 'no restart offered';
    });
    // ---- memory: GEMINI.md files, the tooltip line, Show / Refresh / Add to Memory ----
    const globalMd = path.join(dirs.userhome, '.gemini', 'GEMINI.md');
    const projectMd = path.join(dirs.ws, 'GEMINI.md');
    await step('Sidecar: Refresh Memory loads new GEMINI.md files; the tooltip says “Memory: 2 files (X tokens)”', async () => {
      fs.mkdirSync(path.dirname(globalMd), { recursive: true });
      fs.writeFileSync(globalMd, '# Mine\n\nE2E_GLOBAL_MEMORY: answer briefly.\n');
      fs.writeFileSync(projectMd, '# This project\n\nE2E_PROJECT_MEMORY: tabs, not spaces.\n');
      await w.runCommand('Sidecar: Refresh Memory');
      const toast = await w.toast(/memory reloaded/i);
      if (!/Memory: 2 files \(\d[\d,]* tokens\)/.test(toast)) throw new Error(`the refresh message: ${toast}`);
      const tip = await w.tooltip('Memory:');
      const line = /Memory: 2 files \(\d[\d,]* tokens\)/.exec(tip);
      if (!line) throw new Error(`the tooltip lacks the memory line: ${tip}`);
      return `“${line[0]}”`;
    }, { needs: ['memory'] });
    await step('Sidecar: Show Memory opens a read-only document: each file with scope and tokens, then its text', async () => {
      await w.runCommand('View: Hide Panel'); // an output panel left open by an earlier step halves the editor
      await w.runCommand('Sidecar: Show Memory');
      await page.locator('.editor-instance .view-line', { hasText: '# Sidecar memory' }).first().waitFor({ timeout: 15_000 });
      // Monaco renders only the lines in view: a needle below the fold is looked for again at the document's end
      for (const needle of [`\`${globalMd}\` | global`, `\`${projectMd}\` | project`, 'E2E_GLOBAL_MEMORY: answer briefly.', 'E2E_PROJECT_MEMORY: tabs, not spaces.']) {
        const line = page.locator('.editor-instance .view-line', { hasText: needle }).first();
        if (!(await line.isVisible().catch(() => false))) {
          await page.locator('.editor-instance .view-lines').first().click();
          await page.keyboard.press('Control+End');
        }
        await line.waitFor({ timeout: 10_000 }).catch(() => { throw new Error(`Show Memory lacks “${needle}”`); });
      }
      await page.keyboard.press('Control+Home');
      await w.shot('9-memory');
      // read-only: typing changes nothing (VS Code says it cannot edit)
      await page.locator('.editor-instance .view-lines').first().click();
      await page.keyboard.type('XYZZY');
      if (await page.locator('.editor-instance .view-line', { hasText: 'XYZZY' }).count()) throw new Error('the memory document is editable');
      return 'both files listed with their text; read-only';
    }, { needs: ['memory'] });
    await step('Sidecar: Add to Memory… (input box, then Project) appends to the project GEMINI.md; the open document follows', async () => {
      const fact = 'E2E_ADDED_FACT run the linter before committing';
      await w.runCommand('Sidecar: Add to Memory');
      await w.quickInput(fact, { title: 'Add to Memory' });
      await w.quickInput('Project', { title: 'Add to Memory: where?', row: 'GEMINI.md at the project root' });
      const toast = await w.toast(/added to project memory/i);
      const text = fs.readFileSync(projectMd, 'utf8');
      if (!text.includes(`## Gemini Added Memories\n- ${fact}`)) throw new Error(`the project GEMINI.md: ${text}`);
      if (!text.includes('E2E_PROJECT_MEMORY')) throw new Error('the project GEMINI.md lost what it had');
      await page.locator('.editor-instance .view-line', { hasText: `- ${fact}` }).first().waitFor({ timeout: 15_000 })
        .catch(() => { throw new Error('the open Show Memory document did not follow the change'); });
      await w.runCommand('View: Close Editor');
      return toast.slice(0, 110);
    }, { needs: ['memory'] });
    await step('… and the next model request carries the global memory, the project memory and the added fact', async () => {
      await fake!.reset();
      await w.send('What do you remember about me?');
      const reqs = (await fake!.requests()).filter((r) => (r.kind === 'stream' || r.kind === 'generate') && !r.summary);
      const text = JSON.stringify(reqs[reqs.length - 1].body); // the global memory is in the system instruction
      for (const needle of ['E2E_GLOBAL_MEMORY', 'E2E_PROJECT_MEMORY', 'E2E_ADDED_FACT']) {
        if (!text.includes(needle)) throw new Error(`the request lacks ${needle}`);
      }
      return 'all three in the request';
    }, { needs: ['memory'] });
    await step('final screenshot', async () => path.relative(REPO, await w.shot('sidecar-vscode')));
    // ---- workspace trust: a hostile .vscode/settings.json, in Restricted Mode and trusted (e2e/trust.ts) ----
    await trustSteps({
      step, waitFor, workbench: (p) => new Workbench(p, artifacts), browser, fake: fake!, python, codeServer,
      extensions: dirs.exts, serverEnv, port: await freePort(), apiKey: API_KEY, artifacts,
    });
    await step('a server command that cannot start gives a clear error with “Show log”', async () => {
      for (const scope of ['User', 'Machine']) {
        const file = path.join(dirs.ud, scope, 'settings.json');
        fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), 'sidecar.serverCommand': [python, '-m', 'no_such_sidecar_module'] }, null, 2));
      }
      const offer = page.locator('.notifications-toasts .notification-toast', { hasText: 'server command changed' }).first();
      await offer.waitFor({ timeout: 30_000 });
      await offer.locator('a.monaco-button, .monaco-button', { hasText: 'Restart' }).first().click();
      const error = page.locator('.notifications-toasts .notification-toast', { hasText: 'Sidecar could not start' }).first();
      await error.waitFor({ timeout: 30_000 });
      const message = (await error.innerText()).replace(/\s+/g, ' ');
      if (!/No module named no_such_sidecar_module/.test(message)) throw new Error(`the error does not say why: ${message}`);
      await w.shot('5-start-error');
      if (!/takes effect from your (Remote|User) settings/.test(message)) throw new Error(`the error does not say which settings scope: ${message}`);
      await error.locator('.monaco-button', { hasText: 'Show log' }).first().click();
      await page.locator('.part.panel .view-line', { hasText: 'could not start' }).first().waitFor({ timeout: 15_000 });
      const item = page.locator('.statusbar-item', { hasText: 'Sidecar' }).filter({ has: page.locator('.codicon-error') }).first();
      await item.waitFor({ timeout: 5_000 });
      // the chat footer shows the whole reason the server is down, not cut off
      await w.runCommand('Sidecar: Open Chat');
      const chat = await w.chat();
      const footer = chat.locator('#status');
      await waitFor('the reason in the chat footer', async () => /No module named no_such_sidecar_module/.test(await footer.innerText()), 15_000);
      const clipped = await footer.evaluate((el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
      if (clipped) throw new Error(`the chat footer cuts off the reason: ${await footer.innerText()}`);
      return message.slice(0, 110);
    });
    await step('“Open Settings” on a start error opens the scope where serverCommand takes effect (defect 2)', async () => {
      await w.runCommand('Sidecar: Restart Server');
      const error = page.locator('.notifications-toasts .notification-toast', { hasText: 'Sidecar could not start' }).first();
      await error.waitFor({ timeout: 30_000 });
      await error.locator('.monaco-button', { hasText: 'Open Settings' }).first().click();
      const editor = page.locator('.settings-editor').first();
      await editor.waitFor({ timeout: 15_000 });
      const setting = editor.locator('.setting-item-contents', { hasText: 'Server Command' }).first();
      await setting.waitFor({ timeout: 15_000 });
      if (await editor.locator('.no-results-message', { hasText: 'No Settings Found' }).isVisible().catch(() => false)) throw new Error('the settings editor says No Settings Found');
      const tab = (await editor.locator('.settings-tabs-widget .action-label.checked').first().innerText().catch(() => '?')).trim();
      await w.shot('7-open-settings');
      await w.runCommand('View: Close Editor');
      return `settings editor on the “${tab}” tab shows sidecar.serverCommand`;
    });
    await step('the log shows the sidecar\'s INFO lines as info, and no stop trace for a client that never ran (defect 5)', async () => {
      const logs = findFiles(path.join(dirs.ud, 'logs'), /Sidecar\.log$/);
      if (!logs.length) throw new Error('no Sidecar.log under the user data logs');
      const text = logs.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
      const infoAsError = text.split('\n').filter((l) => /\[error\].*\bINFO\b/.test(l));
      if (infoAsError.length) throw new Error(`INFO lines logged as errors: ${infoAsError.slice(0, 2).join(' | ')}`);
      // every sidecar record went through the level mapping: none is in the log raw ("<date> <time>,<ms> LEVEL …")
      const raw = text.split('\n').filter((l) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR) /.test(l));
      if (raw.length) throw new Error(`sidecar log records without a level mapping: ${raw.slice(0, 2).join(' | ')}`);
      if (/Stopping server failed/.test(text)) throw new Error('the log has a "Stopping server failed" trace');
      if (!/\[info\] [a-z_][\w.]*: /.test(text)) throw new Error('the sidecar\'s own INFO lines are not in the log');
      // a failed start logs its cause (the server's last words), not the transport's symptom or stack
      const symptom = text.split('\n').filter((l) => /could not start.*(Pending response rejected|connection got disposed|Connection is closed)|couldn't create connection to server/.test(l));
      if (symptom.length) throw new Error(`the log gives the transport symptom as the cause: ${symptom[0]}`);
      if (!/could not start .*No module named no_such_sidecar_module/.test(text)) throw new Error('the log does not say why the start failed');
      return `${logs.length} log file(s), ${text.split('\n').length} lines, none mislabelled`;
    });

    // ---- the bundled server: no serverCommand, no workspace venv → the extension's own environment ----
    const storage = path.join(dirs.ud, 'User', 'globalStorage', 'sidecar.sidecar-vscode', 'server');
    const privatePython = path.join(storage, 'venv', 'bin', 'python');
    await step('with no serverCommand the extension installs its bundled wheel into its storage, with progress; Cancel is info with Reinstall', async () => {
      for (const scope of ['User', 'Machine']) {
        const file = path.join(dirs.ud, scope, 'settings.json');
        const json = JSON.parse(fs.readFileSync(file, 'utf8'));
        delete json['sidecar.serverCommand'];
        fs.writeFileSync(file, JSON.stringify(json, null, 2));
      }
      const offer = page.locator('.notifications-toasts .notification-toast', { hasText: 'server command changed' }).first();
      await offer.waitFor({ timeout: 30_000 });
      await offer.locator('.monaco-button', { hasText: 'Restart' }).first().click();
      // Cancel on the install's progress is the user's choice: an information message with Reinstall,
      // logged as [info], never an [error] with a stack trace; Reinstall then installs.
      const installing = page.locator('.notifications-toasts .notification-toast', { hasText: 'installing the server' }).first();
      await installing.waitFor({ timeout: 30_000 });
      await page.locator('.statusbar-item', { hasText: 'installing server' }).first().waitFor({ timeout: 10_000 }).catch(() => undefined);
      await w.shot('8-installing');
      await installing.locator('.monaco-button', { hasText: 'Cancel' }).first().click();
      const cancelledToast = page.locator('.notifications-toasts .notification-toast', { hasText: 'was cancelled' }).first();
      await cancelledToast.waitFor({ timeout: 60_000 });
      const cancelLog = findFiles(path.join(dirs.ud, 'logs'), /Sidecar\.log$/).map((f) => fs.readFileSync(f, 'utf8')).join('\n');
      if (!/\[info\] Installing the sidecar server was cancelled/.test(cancelLog)) throw new Error('the cancelled install is not logged as [info]');
      const cancelErrors = cancelLog.split('\n').filter((l) => /\[error\].*cancel/i.test(l));
      if (cancelErrors.length) throw new Error(`the cancelled install is logged as an error: ${cancelErrors[0]}`);
      if (await cancelledToast.locator('.codicon-error').count()) throw new Error('the cancelled install is shown as an error');
      const cancelledLog = fs.readFileSync(path.join(storage, 'install.log'), 'utf8');
      if (!/=== failed: Installing the sidecar server was cancelled/.test(cancelledLog)) throw new Error('the install log does not record the cancelled attempt');
      await w.shot('8-install-cancelled');
      await cancelledToast.locator('.monaco-button', { hasText: 'Reinstall' }).first().click();
      await page.locator('.notification-toast, .notifications-center', { hasText: 'installing the server' }).first().waitFor({ timeout: 30_000 });
      const u = await waitFor('usage from the private server', () => w.usage(), 240_000, 500);
      const pids = sidecarPids(privatePython, dirs.home);
      if (pids.length !== 1) throw new Error(`expected the sidecar to run from ${privatePython}: ${JSON.stringify(pids)}`);
      const installLog = fs.readFileSync(path.join(storage, 'install.log'), 'utf8');
      if (!/-m pip install/.test(installLog) || !/=== installed/.test(installLog)) throw new Error(`install log:\n${installLog.slice(-2000)}`);
      return `cancelled once (info + Reinstall), then “${u.text}”, pid ${pids[0]} runs ${path.relative(dirs.ud, privatePython)}`;
    });
    await step('… a turn through the bundled server updates the status bar', async () => {
      await w.runCommand('Sidecar: Open Chat');
      await w.send('Hello from the bundled server.');
      const u = await waitFor('a percentage from Gemini', async () => { const x = await w.usage(); return x && x.percent > 0 ? x : undefined; });
      const tip = await w.tooltip('Source:');
      if (!/Source: api/.test(tip)) throw new Error(`after a turn the count should be Gemini's: ${tip}`);
      return `“${u.text}”`;
    });
    await step('… and a second start reuses the environment without pip', async () => {
      const before = fs.readFileSync(path.join(storage, 'install.log'), 'utf8');
      const old = sidecarPids(privatePython, dirs.home);
      await w.runCommand('Sidecar: Restart Server');
      const now = await waitFor('a new private sidecar', async () => { const p = sidecarPids(privatePython, dirs.home); return p.length === 1 && p[0] !== old[0] ? p : undefined; }, 60_000);
      await waitFor('the usage item back', () => w.usage(), 60_000);
      const after = fs.readFileSync(path.join(storage, 'install.log'), 'utf8');
      if (after !== before) throw new Error(`the restart ran the installer again:\n${after.slice(before.length)}`);
      await w.send('Still there?');
      return `pid ${old[0]} → ${now[0]}; install.log unchanged`;
    });
  } catch (e) {
    if (wb) await wb.shot('failure').catch(() => undefined);
    throw e;
  } finally {
    console.log('\nVS Code e2e results:');
    for (const [name, r] of results) console.log(`  ${r.startsWith('ok') ? '✔' : '…'} ${name}: ${r}`);
    await browser?.close().catch(() => undefined);
    if (server?.pid) { try { process.kill(-server.pid, 'SIGTERM'); } catch { /* gone */ } }
    await new Promise((r) => setTimeout(r, 500));
    if (server?.pid) { try { process.kill(-server.pid, 'SIGKILL'); } catch { /* gone */ } }
    await fake?.stop();
    const exthostLogs = path.join(dirs.ud, 'logs');
    if (fs.existsSync(exthostLogs)) fs.cpSync(exthostLogs, path.join(artifacts, 'vscode-logs'), { recursive: true });
    fs.rmSync(run, { recursive: true, force: true });
    log(`artifacts in ${path.relative(REPO, artifacts)}`);
  }
}

main().then(() => { log('PASS'); process.exit(0); }, (e) => { console.error(`[e2e] FAIL: ${e instanceof Error ? e.stack : e}`); process.exit(1); });
