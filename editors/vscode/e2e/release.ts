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
import { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BrowserContext, Page } from 'playwright-core';
import { REPO, projectPython } from '../test/support/sidecar';
import {
  QUIET_SETTINGS, Workbench, env, installVsix, launchBrowser, logger, startCodeServer, stopCodeServer, waitFor, wheelhouse,
  writeSettings,
} from './harness';

const log = logger('release-check');
const HINT = 'run scripts/run-e2e.sh release (make release-check does)';

async function main(): Promise<void> {
  const codeServer = env('VSCODE_E2E_CODE_SERVER', HINT);
  const node24 = env('VSCODE_E2E_NODE24', HINT);
  const chromiumPath = process.env.VSCODE_E2E_CHROMIUM || '/usr/bin/chromium';
  const vsix = path.resolve(env('VSIX', HINT));
  const version = env('RELEASE_VERSION', HINT);
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
    installVsix(codeServer, vsix, dirs.ud, dirs.exts, serverEnv);
    const installed = fs.readdirSync(dirs.exts).find((d) => d.startsWith('sidecar.sidecar-vscode-'));
    const manifest = installed && JSON.parse(fs.readFileSync(path.join(dirs.exts, installed, 'package.json'), 'utf8'));
    if (!manifest || manifest.version !== version) throw new Error(`the installed extension says version ${manifest?.version}, the release is ${version}`);
    for (const f of ['LICENSE.txt', 'README.md', 'CHANGELOG.md', `server/sidecar-${version}-py3-none-any.whl`, manifest.icon]) {
      if (!fs.readdirSync(path.join(dirs.exts, installed, path.dirname(f))).some((n) => n.toLowerCase() === path.basename(f).toLowerCase())) {
        throw new Error(`the installed extension has no ${f}`);
      }
    }
    log(`vsix installed: ${installed}`);
    writeSettings(dirs.ud, QUIET_SETTINGS);
    const started = await startCodeServer({ codeServer, serverEnv, userData: dirs.ud, extensions: dirs.exts, workspace: dirs.ws, artifacts });
    server = started.server;
    const port = started.port;
    const launched = await launchBrowser(chromiumPath, dirs.chrome, { width: 1280, height: 800 });
    browser = launched.browser;
    page = launched.page;
    const p = page;
    const w = new Workbench(p, artifacts, log);
    await p.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.ws)}`, { waitUntil: 'domcontentloaded' });
    await p.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    log('workbench loaded; the extension installs its server');

    const first = await waitFor('the usage status item (after the private install)', () => w.usage(), 300_000, 500);
    log(`server running: “${first.text}”`);
    const venvPython = path.join(dirs.ud, 'User', 'globalStorage', 'sidecar.sidecar-vscode', 'server', 'venv', 'bin', 'python');
    if (!fs.existsSync(venvPython)) throw new Error(`the extension did not install its private environment (${venvPython})`);
    const mismatch = p.locator('.notifications-toasts .notification-toast', { hasText: /protocol/ });
    if (await mismatch.count()) throw new Error(`a protocol warning for the bundled server: ${await mismatch.first().innerText()}`);

    await w.runCommand('Sidecar: Open Chat');
    const chat = await w.chat();
    await chat.locator('#send:not([disabled])').waitFor({ timeout: 30_000 });
    await chat.locator('#input').fill('Hello! What can you do in this workspace?');
    await chat.locator('#input').press('Enter');
    const replies = chat.locator('.msg.model');
    await waitFor('the streamed reply', async () => (await replies.count()) > 0 && !(await chat.locator('.msg.model.streaming').count()), 60_000);
    if (await chat.locator('.note.error').count()) throw new Error(`chat error: ${await chat.locator('.note.error').last().innerText()}`);
    const reply = (await replies.last().innerText()).trim();
    if (!reply) throw new Error('the reply is empty');
    const after = await waitFor('a percentage counted by the model', async () => { const u = await w.usage(); return u && u.percent > 0 ? u : undefined; });
    log(`one turn: ${reply.length} characters back; status bar “${after.text}”`);
    // the README's chat screenshot: a file beside the chat, no toasts
    await p.keyboard.press('Control+P');
    await p.locator('.quick-input-widget input').fill('hello.py');
    await p.locator('.quick-input-list .monaco-list-row', { hasText: 'hello.py' }).first().waitFor({ timeout: 15_000 });
    await p.keyboard.press('Enter');
    await p.locator('.editor-instance .view-lines', { hasText: 'release check' }).first().waitFor({ timeout: 15_000 });
    await w.runCommand('Notifications: Clear All Notifications');
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
    await stopCodeServer(server);
    const logs = path.join(dirs.ud, 'logs');
    if (fs.existsSync(logs)) fs.cpSync(logs, path.join(artifacts, 'vscode-logs'), { recursive: true });
    fs.rmSync(run, { recursive: true, force: true });
  }
}

main().then(() => { log('PASS'); process.exit(0); }, (e) => { console.error(`[release-check] FAIL: ${e instanceof Error ? e.stack : e}`); process.exit(1); });
