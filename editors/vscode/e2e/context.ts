/**
 * The context window steps of the real-VS-Code e2e: "Sidecar: Show Context" opens a webview with a row per category
 * of the next request (a memory file's row opens the file), and "Sidecar: Select Model" switches the model, which the
 * status bar's tooltip then names.
 */
import { Frame } from 'playwright-core';
import { McpHarness } from './mcp';

export async function contextSteps({ step, w, waitFor }: Pick<McpHarness, 'step' | 'w' | 'waitFor'>): Promise<void> {
  const page = w.page;
  const contextFrame = () => waitFor<Frame>('the context webview', async () => {
    for (const f of page.frames()) {
      if (await f.$('#context-rows').catch(() => null)) return f;
    }
    return undefined;
  }, 30_000, 250);

  await step('Sidecar: Show Context shows a bar per category of the next request', async () => {
    await w.runCommand('Sidecar: Show Context');
    const frame = await contextFrame();
    const rows = frame.locator('#context-rows tr.row');
    await waitFor('the rows', async () => (await rows.count()) >= 4, 15_000);
    const labels = (await frame.locator('#context-rows td.label').allInnerTexts()).map((t) => t.trim());
    for (const want of ['System prompt', 'Built-in tools', 'Messages', 'Free until compaction', 'Free in the window']) {
      if (!labels.includes(want)) throw new Error(`no “${want}” row in ${JSON.stringify(labels)}`);
    }
    const header = (await frame.locator('#header').innerText()).trim();
    if (!/ tokens \(.*\) · model \S+ · summaries by \S+/.test(header)) throw new Error(`header: ${header}`);
    const bars = await frame.locator('#context-rows td.bar div').count();
    await w.shot('12-context-view');
    await w.runCommand('View: Close Editor');
    return `${labels.length} rows (${labels.join(', ')}), ${bars} bars; ${header}`;
  });

  await step('Sidecar: Select Model switches the model; the status bar follows', async () => {
    await w.runCommand('Sidecar: Select Model');
    await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Select Model' }).waitFor({ state: 'visible', timeout: 15_000 });
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'gemini-2.5-pro' }).first();
    await row.waitFor({ state: 'visible', timeout: 15_000 });
    const offered = await page.locator('.quick-input-list .monaco-list-row').count();
    await row.click();
    const toast = await w.toast(/Model switched to gemini-2\.5-pro/);
    const tip = await w.tooltip('Model: gemini-2.5-pro');
    if (!tip.includes('Show context') || !tip.includes('Select model')) throw new Error(`the tooltip has no links: ${tip}`);
    await w.shot('13-model-switched');
    return `${offered} models offered; “${toast}”; the tooltip names gemini-2.5-pro and links Show context · Select model`;
  });
}
