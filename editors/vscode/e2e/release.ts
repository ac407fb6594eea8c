/**
 * `make release-check`'s VS Code half: the vsix that `make release` built, installed into a fresh code-server profile
 * (a real VS Code), with no server command, no key and no base URL — what a user gets on first start. The extension
 * installs the wheel it carries into its private environment, the server answers from its embedded fake Gemini,
 * and one chat turn goes through the chat view. It also takes the README's screenshots (the chat, the status bar).
 *
 *   scripts/run-e2e.sh release   (sets things up, compiles, runs this file with Node; VSIX=dist/…vsix)
 *
 * Env: VSCODE_E2E_CODE_SERVER, VSCODE_E2E_NODE24, VSCODE_E2E_CHROMIUM (the setup cache's env.sh), VSIX, RELEASE_VERSION
 * (what the manifest must say), SIDECAR_PYTHON (builds the local wheelhouse), E2E_ARTIFACTS (default
 * <repo>/test-artifacts/release-check), UPDATE_SCREENSHOTS=1 to copy the screenshots into editors/vscode/images/.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { BrowserContext, Frame, Page, chromium } from 'playwright-core';
import { REPO, projectPython } from '../test/support/sidecar';

const t0 = Date.now();
const log = (...a: unknown[]) => console.log(`[release-check ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run scripts/run-e2e.sh release (make release-check does)`);
  return v;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const p = (srv.address() as net.AddressInfo).port; srv.close(() => resolve(p)); });
  });
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000, everyMs = 250): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try { const v = await fn(); if (v) return v; } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
}

/** The wheel's dependencies as wheels, in .cache/wheelhouse (the same key as e2e/run.ts: both share it). */
function wheelhouse(python: string, wheel: string): string {
  const deps = /dependencies = \[([\s\S]*?)\]/.exec(fs.readFileSync(path.join(REPO, 'pyproject.toml'), 'utf8'))?.[1] ?? '';
  const tag = spawnSync(python, ['-c', 'import sys, sysconfig; print(sys.version_info[:2], sysconfig.get_platform())'], { encoding: 'utf8' }).stdout.trim();
  const dir = path.join(REPO, '.cache', 'wheelhouse', crypto.createHash('sha256').update(deps).update(tag).digest('hex').slice(0, 12));
  if (!fs.existsSync(path.join(dir, '.ok'))) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const r = spawnSync(python, ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--dest', dir, wheel], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`building the wheelhouse failed (pip download needs the package index once):\n${r.stderr}`);
    for (const f of fs.readdirSync(dir)) if (/^sidecar-/.test(f)) fs.rmSync(path.join(dir, f)); // the vsix brings its own
    fs.writeFileSync(path.join(dir, '.ok'), new Date().toISOString());
  }
  return dir;
}

async function runCommand(page: Page, title: string): Promise<void> {
  const input = page.locator('.quick-input-widget input');
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

/** The status bar item's text and the percentage in its accessible label. */
async function usage(page: Page): Promise<{ text: string; percent: number } | undefined> {
  const item = page.locator('.statusbar-item[aria-label^="Sidecar: "]').first();
  if (!(await item.count())) return undefined;
  const m = /Sidecar: ([\d.]+) percent/.exec((await item.getAttribute('aria-label')) ?? '');
  return m ? { text: (await item.innerText()).trim(), percent: Number(m[1]) } : undefined;
}

async function chatFrame(page: Page): Promise<Frame> {
  return waitFor('the chat webview', async () => {
    for (const f of page.frames()) if (await f.$('#composer').catch(() => null)) return f;
    return undefined;
  }, 30_000);
}

async function main(): Promise<void> {
  const codeServer = env('VSCODE_E2E_CODE_SERVER');
  const node24 = env('VSCODE_E2E_NODE24');
  const chromiumPath = process.env.VSCODE_E2E_CHROMIUM || '/usr/bin/chromium';
  const vsix = path.resolve(env('VSIX'));
  const version = env('RELEASE_VERSION');
  const wheel = path.join(path.dirname(vsix), `sidecar-${version}-py3-none-any.whl`);
  if (!fs.existsSync(wheel)) throw new Error(`no ${wheel} next to the vsix: make release builds both`);
  const artifacts = path.resolve(process.env.E2E_ARTIFACTS || path.join(REPO, 'test-artifacts', 'release-check'));
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });
  const run = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-release-check-'));
  const dirs = Object.fromEntries(['ud', 'exts', 'ws', 'home', 'xdg', 'chrome'].map((d) => [d, path.join(run, d)]));
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(dirs.ws, 'hello.py'), 'def hello():\n    return "hello from the release check"\n');

  let server: ChildProcess | undefined;
  let browser: BrowserContext | undefined;
  let page: Page | undefined;
  try {
    const house = wheelhouse(projectPython(), wheel);
    // What a user's machine gives the extension host: no key, no endpoint, and not this checkout's sidecar.
    const serverEnv: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${node24}/bin:${process.env.PATH}`,
      XDG_CONFIG_HOME: path.join(dirs.xdg, 'config'), XDG_DATA_HOME: path.join(dirs.xdg, 'data'), XDG_CACHE_HOME: path.join(dirs.xdg, 'cache'),
      SIDECAR_HOME: dirs.home, PYTHONPATH: '',
      GEMINI_API_KEY: '', GOOGLE_API_KEY: '', GOOGLE_GEMINI_BASE_URL: '', GOOGLE_GENAI_USE_VERTEXAI: '',
      PIP_NO_INDEX: '1', PIP_FIND_LINKS: house, PIP_CONFIG_FILE: os.devNull,
    };
    const install = spawnSync(codeServer, ['--user-data-dir', dirs.ud, '--extensions-dir', dirs.exts, '--install-extension', vsix], { env: serverEnv, encoding: 'utf8' });
    if (install.status !== 0 || !/successfully installed/i.test(install.stdout)) throw new Error(`installing the vsix failed:\n${install.stdout}\n${install.stderr}`);
    const installed = fs.readdirSync(dirs.exts).find((d) => d.startsWith('sidecar.sidecar-vscode-'));
    const manifest = installed && JSON.parse(fs.readFileSync(path.join(dirs.exts, installed, 'package.json'), 'utf8'));
    if (!manifest || manifest.version !== version) throw new Error(`the installed extension says version ${manifest?.version}, the release is ${version}`);
    for (const f of ['LICENSE.txt', 'README.md', 'CHANGELOG.md', `server/sidecar-${version}-py3-none-any.whl`, manifest.icon]) {
      if (!fs.readdirSync(path.join(dirs.exts, installed, path.dirname(f))).some((n) => n.toLowerCase() === path.basename(f).toLowerCase())) {
        throw new Error(`the installed extension has no ${f}`);
      }
    }
    log(`vsix installed: ${installed}`);
    const settings = JSON.stringify({
      'workbench.startupEditor': 'none', 'chat.disableAIFeatures': true, 'telemetry.telemetryLevel': 'off',
      'extensions.autoUpdate': false, 'extensions.autoCheckUpdates': false, 'workbench.tips.enabled': false,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
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
    await waitFor('code-server /healthz', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000);
    browser = await chromium.launchPersistentContext(dirs.chrome, {
      executablePath: chromiumPath, headless: true, viewport: { width: 1280, height: 800 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    });
    page = browser.pages()[0] ?? await browser.newPage();
    const p = page;
    await p.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.ws)}`, { waitUntil: 'domcontentloaded' });
    await p.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    log('workbench loaded; the extension installs its server');

    const first = await waitFor('the usage status item (after the private install)', () => usage(p), 300_000, 500);
    log(`server running: “${first.text}”`);
    const venvPython = path.join(dirs.ud, 'User', 'globalStorage', 'sidecar.sidecar-vscode', 'server', 'venv', 'bin', 'python');
    if (!fs.existsSync(venvPython)) throw new Error(`the extension did not install its private environment (${venvPython})`);
    const mismatch = p.locator('.notifications-toasts .notification-toast', { hasText: /protocol/ });
    if (await mismatch.count()) throw new Error(`a protocol warning for the bundled server: ${await mismatch.first().innerText()}`);

    await runCommand(p, 'Sidecar: Open Chat');
    const chat = await chatFrame(p);
    await chat.locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
    await chat.locator('#input').fill('Hello! What can you do in this workspace?');
    await chat.locator('#input').press('Enter');
    const replies = chat.locator('.msg.model');
    await waitFor('the streamed reply', async () => (await replies.count()) > 0 && !(await chat.locator('.msg.model.streaming').count()), 60_000);
    if (await chat.locator('.note.error').count()) throw new Error(`chat error: ${await chat.locator('.note.error').last().innerText()}`);
    const reply = (await replies.last().innerText()).trim();
    if (!reply) throw new Error('the reply is empty');
    const after = await waitFor('a percentage counted by the model', async () => { const u = await usage(p); return u && u.percent > 0 ? u : undefined; });
    log(`one turn: ${reply.length} characters back; status bar “${after.text}”`);
    // the README's chat screenshot: a file beside the chat, no toasts
    await p.keyboard.press('Control+P');
    await p.locator('.quick-input-widget input').fill('hello.py');
    await p.locator('.quick-input-list .monaco-list-row', { hasText: 'hello.py' }).first().waitFor({ timeout: 15_000 });
    await p.keyboard.press('Enter');
    await p.locator('.editor-instance .view-lines', { hasText: 'release check' }).first().waitFor({ timeout: 15_000 });
    await runCommand(p, 'Notifications: Clear All Notifications');
    await p.locator('.notifications-toasts .notification-toast').first().waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
    await p.mouse.move(640, 300);
    await p.screenshot({ path: path.join(artifacts, 'chat.png') });

    const item = p.locator('.statusbar-item[aria-label^="Sidecar: "]').first();
    await item.hover();
    const hover = p.locator('.monaco-hover', { hasText: 'Backend:' }).first();
    await hover.waitFor({ state: 'visible', timeout: 15_000 });
    const tip = (await hover.innerText()).replace(/\s+/g, ' ');
    if (!/embedded fake/i.test(tip)) throw new Error(`with no key the backend should be the embedded fake: ${tip}`);
    const box = await hover.boundingBox();
    const bar = await p.locator('.part.statusbar').boundingBox();
    if (box && bar) {
      const x = Math.max(0, Math.min(box.x, bar.width - 520) - 20);
      const y = Math.max(0, box.y - 20);
      await p.screenshot({ path: path.join(artifacts, 'statusbar.png'), clip: { x, y, width: Math.min(bar.width - x, 560), height: bar.y + bar.height - y } });
    }
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      const images = path.join(REPO, 'editors', 'vscode', 'images');
      fs.mkdirSync(images, { recursive: true });
      for (const f of ['chat.png', 'statusbar.png']) fs.copyFileSync(path.join(artifacts, f), path.join(images, f));
      log(`screenshots copied to ${path.relative(REPO, images)}`);
    }
    log(`screenshots in ${path.relative(REPO, artifacts)}: chat.png, statusbar.png`);
  } catch (e) {
    if (page) await page.screenshot({ path: path.join(artifacts, 'failure.png') }).catch(() => undefined);
    throw e;
  } finally {
    await browser?.close().catch(() => undefined);
    if (server?.pid) { try { process.kill(-server.pid, 'SIGTERM'); } catch { /* gone */ } }
    await new Promise((r) => setTimeout(r, 500));
    if (server?.pid) { try { process.kill(-server.pid, 'SIGKILL'); } catch { /* gone */ } }
    const logs = path.join(dirs.ud, 'logs');
    if (fs.existsSync(logs)) fs.cpSync(logs, path.join(artifacts, 'vscode-logs'), { recursive: true });
    fs.rmSync(run, { recursive: true, force: true });
  }
}

main().then(() => { log('PASS'); process.exit(0); }, (e) => { console.error(`[release-check] FAIL: ${e instanceof Error ? e.stack : e}`); process.exit(1); });
