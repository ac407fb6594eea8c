/**
 * What the real-VS-Code drivers share (`run.ts`, the e2e; `release.ts`, the release check): waiting, ports, the local
 * wheelhouse, code-server and Chromium start and stop, and `Workbench`, the page helpers every scenario uses.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { BrowserContext, Frame, Page, chromium } from 'playwright-core';
import { FakeGemini, REPO } from '../test/support/sidecar';

/** A log line prefixed with the driver's name and the seconds since it started. */
export function logger(prefix: string): (...a: unknown[]) => void {
  const t0 = Date.now();
  return (...a: unknown[]) => console.log(`[${prefix} ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
}

/** An environment variable the setup script exports; `hint` says how to get it. */
export function env(name: string, hint: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: ${hint}`);
  return v;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const p = (srv.address() as net.AddressInfo).port; srv.close(() => resolve(p)); });
  });
}

/** Poll `fn` until it gives a truthy value (errors count as "not yet"); fail naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try { const v = await fn(); if (v) return v; } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
}
export type WaitFor = typeof waitFor;

export function findFiles(dir: string, re: RegExp): string[] {
  const out: string[] = [];
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...findFiles(p, re)); else if (re.test(e.name)) out.push(p);
  }
  return out;
}

/** The sidecar wheel's dependencies as wheels, in .cache/wheelhouse (built once per dependency set and Python). */
export function wheelhouse(python: string, wheel: string): string {
  const deps = /dependencies = \[([\s\S]*?)\]/.exec(fs.readFileSync(path.join(REPO, 'pyproject.toml'), 'utf8'))?.[1] ?? '';
  // wheels are per Python version and platform (msgspec, pydantic-core…): they are part of the key
  const tag = spawnSync(python, ['-c', 'import sys, sysconfig; print(sys.version_info[:2], sysconfig.get_platform())'], { encoding: 'utf8' }).stdout.trim();
  const dir = path.join(REPO, '.cache', 'wheelhouse', crypto.createHash('sha256').update(deps).update(tag).digest('hex').slice(0, 12));
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

/** The pids of `python -m sidecar` processes started with this SIDECAR_HOME. */
export function sidecarPids(python: string, home: string): number[] {
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

/** The quiet settings every driver's profile starts with (no tips, no telemetry, no AI features of VS Code's own). */
export const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'chat.disableAIFeatures': true,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'workbench.tips.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

/** Write `settings` as both the User and the Machine settings (code-server reads machine-scoped ones from Machine/). */
export function writeSettings(userData: string, settings: object): void {
  for (const scope of ['User', 'Machine']) {
    fs.mkdirSync(path.join(userData, scope), { recursive: true });
    fs.writeFileSync(path.join(userData, scope, 'settings.json'), JSON.stringify(settings, null, 2));
  }
}

/** Install the vsix into a fresh profile; fails with code-server's words. */
export function installVsix(codeServer: string, vsix: string, userData: string, extensions: string, serverEnv: NodeJS.ProcessEnv): void {
  const install = spawnSync(codeServer, ['--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], { env: serverEnv, encoding: 'utf8' });
  if (install.status !== 0 || !/successfully installed/i.test(install.stdout)) throw new Error(`installing the vsix failed:\n${install.stdout}\n${install.stderr}`);
}

export interface CodeServerOptions {
  codeServer: string;
  serverEnv: NodeJS.ProcessEnv;
  userData: string;
  extensions: string;
  workspace: string;
  /** code-server's own output goes to <artifacts>/code-server.log. */
  artifacts: string;
}

/** Start code-server on a free port and wait for /healthz; the process leads its own group (see `stopCodeServer`). */
export async function startCodeServer(o: CodeServerOptions): Promise<{ server: ChildProcess; port: number }> {
  const port = await freePort();
  const serverLog = fs.openSync(path.join(o.artifacts, 'code-server.log'), 'w');
  const server = spawn(o.codeServer, [
    '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', '--disable-getting-started-override',
    '--user-data-dir', o.userData, '--extensions-dir', o.extensions, o.workspace,
  ], { env: o.serverEnv, detached: true, stdio: ['ignore', serverLog, serverLog] });
  await waitFor('code-server /healthz', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000, 250);
  return { server, port };
}

/** SIGTERM code-server's process group, then SIGKILL what is left half a second later. */
export async function stopCodeServer(server: ChildProcess | undefined): Promise<void> {
  if (server?.pid) { try { process.kill(-server.pid, 'SIGTERM'); } catch { /* gone */ } }
  await new Promise((r) => setTimeout(r, 500));
  if (server?.pid) { try { process.kill(-server.pid, 'SIGKILL'); } catch { /* gone */ } }
}

/** Debian's Chromium, headless, with a persistent profile in `profile`. */
export async function launchBrowser(chromiumPath: string, profile: string, viewport: { width: number; height: number }): Promise<{ browser: BrowserContext; page: Page }> {
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath, headless: true, viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  return { browser, page: browser.pages()[0] ?? await browser.newPage() };
}

export class Workbench {
  constructor(readonly page: Page, readonly shots: string, readonly log: (...a: unknown[]) => void = console.log) {}

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
        this.log(`command palette not ready for “${title}” (attempt ${attempt}); opening it again`);
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
    const hover = page.locator('.monaco-hover', { hasText: needle }).first();
    for (let attempt = 1; ; attempt++) {
      await page.mouse.move(700, 400);
      await page.locator('.statusbar-item[aria-label^="Sidecar: "]').first().hover();
      try {
        await hover.waitFor({ state: 'visible', timeout: 5_000 });
        break;
      } catch (e) {
        const any = await page.locator('.monaco-hover').allInnerTexts().catch(() => []);
        this.log(`tooltip attempt ${attempt}: no hover with ${needle}; hovers shown: ${JSON.stringify(any).slice(0, 400)}`);
        if (attempt >= 3) throw e;
      }
    }
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
    const input = chat.locator('#input');
    await input.fill(text);
    await input.press('Enter');
    // A webview just opened can take the text before its script listens for Enter (seen on a loaded machine: the
    // message stayed in the box): the message is sent once the box is empty; until then, the Send button sends it.
    const pressed = Date.now();
    await waitFor('the message to leave the input box', async () => {
      if ((await input.inputValue()) === '') return true;
      if (Date.now() - pressed > 3_000) await chat.locator('#send:not([disabled])').click({ timeout: 2_000 }).catch(() => undefined);
      return false;
    }, 30_000, 250);
    if (during) await during(chat);
    // the turn is over (a turn with tool calls has a message before its cards and one after them)
    await waitFor('the streamed reply', async () => (await replies.count()) > before && !(await chat.locator('.msg.model.streaming').count()) && !(await chat.locator('body.busy').count()), 60_000);
    const error = chat.locator('.note.error');
    if (await error.count()) throw new Error(`chat error: ${await error.last().innerText()}`);
    return replies.last().innerText();
  }
}

/** Run one named step; `needs` names server features the step requires (a missing one fails it, never skips it). */
export type Step = (name: string, fn: () => Promise<string | void>, opts?: { needs?: string[] }) => Promise<void>;

/** The folders of one e2e run (each made empty at the start). */
export type Dirs = Record<'ud' | 'exts' | 'ws' | 'home' | 'probe-home' | 'xdg' | 'chrome' | 'userhome', string>;

/** What a scenario of the e2e gets: the step runner, the window, the fake model, the run's folders. */
export interface E2E {
  step: Step;
  w: Workbench;
  fake: FakeGemini;
  waitFor: WaitFor;
  python: string;
  dirs: Dirs;
  log: (...a: unknown[]) => void;
}
