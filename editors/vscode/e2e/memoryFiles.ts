/**
 * Memory in the e2e: GEMINI.md files loaded by Refresh Memory, the read-only Show Memory document, Add to Memory, and
 * the next request carrying all of it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2E } from './harness';

export async function memorySteps(h: E2E): Promise<void> {
  const { step, w, fake, dirs } = h;
  const page = w.page;
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
    await fake.reset();
    await w.send('What do you remember about me?');
    const reqs = (await fake.requests()).filter((r) => (r.kind === 'stream' || r.kind === 'generate') && !r.summary);
    const text = JSON.stringify(reqs[reqs.length - 1].body); // the global memory is in the system instruction
    for (const needle of ['E2E_GLOBAL_MEMORY', 'E2E_PROJECT_MEMORY', 'E2E_ADDED_FACT']) {
      if (!text.includes(needle)) throw new Error(`the request lacks ${needle}`);
    }
    return 'all three in the request';
  }, { needs: ['memory'] });
}
