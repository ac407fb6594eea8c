/**
 * The MCP steps of the real-VS-Code e2e: stdio MCP servers from the settings (tests/mcp_client/server.py,
 * written with the mcp SDK), the failure notification, the tooltip line, the MCP Servers pick, a confirmed tool
 * call whose result reaches the (fake) model, per-server Disable/Enable, and Run MCP Prompt.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Frame, Page } from 'playwright-core';
import { FakeGemini, REPO } from '../test/support/sidecar';

/** What the MCP steps use of run.ts's workbench driver (its Workbench class fits). */
export interface McpWorkbench {
  readonly page: Page;
  shot(name: string): Promise<string>;
  runCommand(title: string): Promise<void>;
  quickInput(text: string, opts?: { title?: string; row?: string }): Promise<void>;
  toast(re: RegExp, timeoutMs?: number): Promise<string>;
  tooltip(needle?: string | RegExp): Promise<string>;
  chat(): Promise<Frame>;
  send(text: string, during?: (chat: Frame) => Promise<void>): Promise<string>;
}

export interface McpHarness {
  step: (name: string, fn: () => Promise<string | void>, opts?: { needs?: string[] }) => Promise<void>;
  w: McpWorkbench;
  fake: FakeGemini;
  python: string;
  /** code-server's user data dir: User/ and Machine/settings.json are rewritten */
  userData: string;
  waitFor: <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs?: number, everyMs?: number) => Promise<T>;
}

const SERVER = path.join(REPO, 'tests', 'mcp_client', 'server.py');

function editSettings(userData: string, edit: (json: Record<string, unknown>) => void): void {
  for (const scope of ['User', 'Machine']) {
    const file = path.join(userData, scope, 'settings.json');
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    edit(json);
    fs.writeFileSync(file, JSON.stringify(json, null, 2));
  }
}

/** The pids of the test server processes started in `dir` (each writes pid-<pid> when it starts) still alive. */
function livePids(dir: string): number[] {
  return fs.readdirSync(dir).filter((f) => f.startsWith('pid-')).map((f) => Number(f.slice(4)))
    .filter((pid) => { try { process.kill(pid, 0); return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '); } catch { return false; } });
}

export async function mcpSteps(h: McpHarness): Promise<void> {
  const { step, w, fake, python, waitFor } = h;
  const page = w.page;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-e2e-mcp-'));
  const row = (text: string | RegExp) => page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
  const openPick = async () => {
    await w.runCommand('Sidecar: MCP Servers');
    await page.locator('.quick-input-widget .quick-input-title', { hasText: 'MCP Servers' }).waitFor({ state: 'visible', timeout: 15_000 });
  };
  try {
    await step('MCP servers in the settings start; a failing one is told once, with its stderr and Show log', async () => {
      editSettings(h.userData, (json) => {
        json['sidecar.mcpServers'] = {
          calc: { command: python, args: [SERVER, 'basic', dir] },
          broken: { command: python, args: [SERVER, 'dies', dir] },
        };
      });
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'MCP server "broken" failed' }).first();
      await toast.waitFor({ state: 'visible', timeout: 60_000 });
      const text = (await toast.innerText()).replace(/\s+/g, ' ');
      if (!text.includes('cannot open the database')) throw new Error(`the failure notification lacks the server's stderr: ${text}`);
      await toast.locator('.monaco-button', { hasText: 'Restart' }).first().waitFor({ timeout: 5_000 });
      await w.shot('9-mcp-failed');
      await toast.locator('.monaco-button', { hasText: 'Show log' }).first().click();
      await page.locator('.part.panel .view-line', { hasText: "MCP server 'broken'" }).first().waitFor({ timeout: 15_000 });
      return text.slice(0, 120);
    });
    await step('… the status-bar tooltip has the line “MCP: 1 ready, 1 failed”', async () => {
      const tip = await waitFor('the MCP line in the tooltip', () => w.tooltip('MCP: 1 ready, 1 failed').catch(() => undefined), 60_000, 500);
      return tip.slice(tip.indexOf('MCP:'), tip.indexOf('MCP:') + 40);
    });
    await step('… Sidecar: MCP Servers lists each server with its status and tools, a failed one with its error', async () => {
      await openPick();
      const calc = row(/calc/);
      await calc.waitFor({ timeout: 15_000 });
      const calcText = (await calc.innerText()).replace(/\s+/g, ' ');
      if (!/ready · \d+ tools/.test(calcText) || !calcText.includes('mcp_calc_add')) throw new Error(`the calc row: ${calcText}`);
      const broken = (await row(/broken/).innerText()).replace(/\s+/g, ' ');
      if (!/failed/.test(broken) || !broken.includes('cannot open the database')) throw new Error(`the broken row: ${broken}`);
      await w.shot('10-mcp-pick');
      await page.keyboard.press('Escape');
      return `${calcText.slice(0, 60)} | ${broken.slice(0, 60)}`;
    });
    await step('… an MCP tool call asks (its server named, “Allow always for this server” offered); Allow; the result reaches the model', async () => {
      await fake.reset();
      await fake.script([{ kind: 'function_call', name: 'mcp_calc_add', args: { a: 2, b: 3 } }]);
      await w.send('Add 2 and 3 with the calculator.', async (chat) => {
        const card = chat.locator('.card.tool', { hasText: 'mcp_calc_add' }).last();
        await card.locator('button[data-decision="allow"]').waitFor({ timeout: 30_000 });
        const question = (await card.innerText()).replace(/\s+/g, ' ');
        if (!question.includes('calc')) throw new Error(`the question does not name the server: ${question}`);
        const always = card.locator('button[data-decision="allowAlwaysServer"]');
        await always.waitFor({ timeout: 5_000 });
        const label = await always.innerText();
        if (label !== 'Allow always for this server (calc)') throw new Error(`the server button does not name it: ${label}`);
        await w.shot('11-mcp-confirm');
        await card.locator('button[data-decision="allow"]').click();
      });
      const chat = await w.chat();
      await chat.locator('.card.tool.status-done', { hasText: 'mcp_calc_add' }).first().waitFor({ timeout: 10_000 });
      const reqs = (await fake.requests()).filter((r) => r.kind === 'stream' || r.kind === 'generate');
      const answered = reqs.find((r) => JSON.stringify(r.body.contents ?? []).includes('sum=5'));
      if (!answered) throw new Error('no request to the model carried the MCP result sum=5');
      const response = JSON.stringify(answered.body.contents).match(/"functionResponse":\{"name":"mcp_calc_add"[^}]*/)?.[0] ?? '';
      return `the model got ${response.slice(0, 110)}`;
    });
    await step('… Sidecar: Run MCP Prompt… asks for the prompt\'s arguments and sends the expanded prompt as your message', async () => {
      await fake.reset();
      const chat = await w.chat();
      const replies = await chat.locator('.msg.model').count();
      await w.runCommand('Sidecar: Run MCP Prompt…');
      await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Run MCP Prompt' }).waitFor({ state: 'visible', timeout: 15_000 });
      await row('review').click();
      await w.quickInput('app.py', { title: 'review (1/2)' });
      await w.quickInput('', { title: 'review (2/2)' }); // optional: the server's default
      const sent = 'Please review app.py focusing on anything';
      await chat.locator('.msg.user', { hasText: sent }).first().waitFor({ timeout: 15_000 });
      await waitFor('the reply to the prompt', async () => (await chat.locator('.msg.model').count()) > replies && !(await chat.locator('.msg.model.streaming').count()), 60_000);
      const reqs = (await fake.requests()).filter((r) => r.kind === 'stream' || r.kind === 'generate');
      if (!reqs.some((r) => JSON.stringify(r.body.contents ?? []).includes(sent))) throw new Error('the expanded prompt did not reach the model');
      await w.shot('12-mcp-prompt');
      return `“${sent}” sent and answered`;
    });
    await step('… Disable in the MCP Servers pick stops the server and takes its tools from the model; picking it again enables it', async () => {
      await openPick();
      const calc = row(/calc/);
      await calc.waitFor({ timeout: 15_000 });
      await calc.hover();
      await calc.locator('.action-label[aria-label="Disable"], a[title="Disable"]').first().click();
      await w.toast(/MCP server "calc" disabled/);
      await waitFor('the calc process gone', async () => livePids(dir).length === 0, 30_000);
      await fake.reset();
      await w.send('Which tools do you have now?');
      const reqs = (await fake.requests()).filter((r) => r.kind === 'stream' || r.kind === 'generate');
      const declared = reqs.map((r) => JSON.stringify((r.body as { tools?: unknown }).tools ?? []));
      if (!declared.length || declared.some((d) => !d.includes('read_file'))) throw new Error(`the requests declare no tools: ${declared[0]?.slice(0, 200)}`);
      if (declared.some((d) => d.includes('mcp_calc_add'))) throw new Error('a disabled server\'s tool was still declared to the model');
      await openPick();
      const disabled = row(/calc/);
      await disabled.waitFor({ timeout: 15_000 });
      const text = (await disabled.innerText()).replace(/\s+/g, ' ');
      if (!/disabled/.test(text)) throw new Error(`the calc row after Disable: ${text}`);
      await disabled.click(); // picking a disabled server enables it
      await w.toast(/MCP server "calc" enabled/);
      await waitFor('a calc process again', async () => livePids(dir).length === 1, 30_000);
      await waitFor('calc ready again', () => w.tooltip('MCP: 1 ready, 1 failed').catch(() => undefined), 60_000, 500);
      return `row “${text.slice(0, 40)}”; no process, no mcp_calc_* declared; enabled again`;
    });
  } finally {
    editSettings(h.userData, (json) => { delete json['sidecar.mcpServers']; });
    await waitFor('the MCP servers stopped', async () => livePids(dir).length === 0, 30_000).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
