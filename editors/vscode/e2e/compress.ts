/**
 * The compaction-steering steps of the real-VS-Code e2e: "Summarise up to here" on a chat message summarises only what
 * came before it and the marker's rating is recorded; Preview Compaction opens the proposed summary as a document, the
 * user edits it and applies it, and the model continues from the edited text.
 */
import { McpHarness } from './mcp';

const FIRST = 'UPTO-ONE: remember the blue deploy plan';
const SECOND = 'UPTO-TWO: and now the green one';
const EDITED = 'EDITED-IN-VSCODE keep only the green deploy plan';

export async function compressSteps({ step, w, fake, waitFor }: Omit<McpHarness, 'python' | 'userData'>): Promise<void> {
  const page = w.page;
  await step('Summarise up to here on a message: what came before it is summarised, it stays verbatim; Good summary rates it', async () => {
    await w.send(FIRST);
    await w.send(SECOND);
    const chat = await w.chat();
    const markers = chat.locator('.marker');
    const before = await markers.count();
    await fake.reset();
    const target = chat.locator('.msg.user', { hasText: SECOND }).last();
    await target.hover();
    await target.locator('button[data-action="summarize"]').click();
    await waitFor('the new compaction marker', async () => (await markers.count()) > before, 60_000, 250);
    const summaries = (await fake.requests()).filter((r) => r.summary).map((r) => JSON.stringify(r.body.contents));
    if (!summaries.length || !summaries[0].includes('UPTO-ONE') || summaries.some((s) => s.includes('UPTO-TWO'))) {
      throw new Error(`the summary request is not of what came before the message: ${summaries.map((s) => s.slice(-300)).join(' | ')}`);
    }
    await fake.reset();
    await w.send('what is the plan now?');
    const chats = (await fake.requests()).filter((r) => r.kind === 'stream' && !r.summary);
    const sent = JSON.stringify(chats[chats.length - 1].body.contents);
    if (!sent.includes(SECOND)) throw new Error('the chosen message did not stay verbatim in the history');
    const marker = markers.last();
    await marker.locator('button[data-action="rateGood"]').click();
    await marker.locator('.rating', { hasText: 'Rated: good summary' }).waitFor({ timeout: 15_000 });
    await w.shot('9-summarise-up-to-here');
    return 'the summary covered the earlier messages only; the marker says “Rated: good summary”';
  }, { needs: ['compress', 'transcript'] });
  await step('Preview Compaction opens the summary as a document; edited and applied, the model continues from the edited text', async () => {
    await w.runCommand('Sidecar: Preview Compaction');
    await w.quickInput('', { title: 'Preview Compaction' });
    const editor = page.locator('.editor-group-container.active .monaco-editor').first();
    await page.locator('.editor-group-container.active .monaco-editor', { hasText: 'state_snapshot' }).first().waitFor({ timeout: 60_000 });
    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type(EDITED);
    await waitFor('the edit in the document', async () => (await editor.innerText()).includes('EDITED-IN-VSCODE'), 15_000, 250);
    await w.shot('10-compaction-preview-edited');
    await w.runCommand('Sidecar: Apply Compaction Preview');
    const chat = await w.chat();
    await chat.locator('.marker', { hasText: 'your edited summary' }).first().waitFor({ timeout: 60_000 });
    await waitFor('the preview document closed', async () => !(await page.locator('.monaco-editor', { hasText: 'EDITED-IN-VSCODE' }).count()), 15_000, 250);
    await fake.reset();
    await w.send('continue from the summary');
    const chats = (await fake.requests()).filter((r) => r.kind === 'stream' && !r.summary);
    const sent = JSON.stringify(chats[chats.length - 1].body.contents);
    if (!sent.includes(`<state_snapshot>\\n${EDITED}\\n</state_snapshot>`)) throw new Error(`the model did not get the edited summary: ${sent.slice(0, 600)}`);
    await w.shot('11-compaction-preview-applied');
    return 'the edited text (wrapped in <state_snapshot>) is what the model continues from; the marker says “your edited summary”';
  }, { needs: ['compress', 'transcript'] });
}
