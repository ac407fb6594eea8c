/**
 * The keyboard step of the real-VS-Code e2e: a tool question that arrives while the user types in an editor shows
 * the chat without taking the keyboard; every key typed lands in the editor's document and none in the chat's input.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { McpHarness } from './mcp';

const FLAG = 'question_may_come.flag';
const ASK = 'FOCUSTURN: wait for the flag, then write the focus file';

export async function questionFocusSteps({ step, w, fake, waitFor, ws }: Omit<McpHarness, 'python' | 'userData'> & { ws: string }): Promise<void> {
  const page = w.page;
  await step('a tool question that arrives while the user types in an editor leaves the keys in the editor (the chat input stays empty)', async () => {
    // the model first runs a command that waits for the flag (so the write's question comes while the test types),
    // then writes a file: that write's question is the one that arrives with the editor focused
    await fake.script([
      { kind: 'function_call', match: 'chat', name: 'run_shell_command', args: { command: `while [ ! -e ${FLAG} ]; do sleep 0.1; done` } },
      { kind: 'function_call', match: 'chat', name: 'write_file', args: { path: 'written_while_typing.txt', content: 'written\n' } },
    ]);
    let typed = '';
    let chatInput = '';
    await w.send(ASK, async (chat) => {
      const pending = (name: string) => chat.locator('.card.tool', { hasText: name }).locator('button[data-decision="allow"]');
      await pending('run_shell_command').first().waitFor({ timeout: 30_000 });
      await pending('run_shell_command').first().click();
      // a new editor takes the keyboard; the chat view stays open beside it
      await w.runCommand('File: New Untitled Text File');
      await page.locator('.tabs-container .tab.active', { hasText: 'Untitled' }).first().waitFor({ timeout: 15_000 });
      typed = 'BEFORE-';
      await page.keyboard.type(typed);
      await page.locator('.editor-instance .view-line', { hasText: typed }).first().waitFor({ timeout: 15_000 });
      if (!(await chat.locator('#composer').isVisible())) throw new Error('the chat view is not open beside the editor');
      fs.writeFileSync(path.join(ws, FLAG), '');
      // keep typing while the write's question is on its way, and a little after it arrived
      await waitFor('the write_file question', async () => {
        await page.keyboard.type('k');
        typed += 'k';
        return (await pending('write_file').count()) > 0;
      }, 45_000, 100);
      await page.keyboard.type('-AFTER');
      typed += '-AFTER';
      await waitFor('the typed keys in the editor or in the chat input', async () => {
        chatInput = await chat.locator('#input').inputValue();
        return chatInput !== '' || (await page.locator('.editor-instance .view-line', { hasText: typed }).count()) > 0;
      }, 15_000);
      if (chatInput !== '') throw new Error(`keys typed in the editor went into the chat's input: “${chatInput}”`);
      await w.shot('9-question-while-typing');
      await pending('write_file').first().click();
    });
    await waitFor('the allowed write', async () => fs.existsSync(path.join(ws, 'written_while_typing.txt')), 15_000);
    await w.runCommand('View: Revert and Close Editor');
    return `${typed.length} keys typed around the question all in the editor's document; the chat input stayed empty; the write was allowed`;
  }, { needs: ['tools'] });
}
