/**
 * The first half of the e2e: the status bar, the key, a chat turn with the editor's selection, Compress and its
 * marker, the full IDE context after it, the tooltip, the transcript, the online doctor, Undo, and a tool card.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requestText } from '../test/support/sidecar';
import { API_KEY, FILLER, IDE_HEADER, MARKER, toolCall } from './constants';
import { E2E } from './harness';

export async function basicSteps(h: E2E, appPy: string): Promise<void> {
  const { step, w, fake, waitFor, dirs } = h;
  const page = w.page;
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
    const reqs = (await fake.requests()).filter((r) => r.kind !== 'count');
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
    await fake.reset();
    await w.send('What is the selected identifier?');
    const reqs = (await fake.requests()).filter((r) => (r.kind === 'stream' || r.kind === 'generate') && !r.summary);
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
    await find(`Gemini API at ${fake.url}`);
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
    await fake.script([toolCall()]);
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
}
