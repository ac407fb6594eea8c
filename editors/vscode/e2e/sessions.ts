/**
 * Sessions in the e2e: New and Resume, pins, Rewind and Fork from a message, rewinding files, Rename, a session
 * another window holds, an imported Gemini CLI session, Delete and Restore.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2E } from './harness';

export async function sessionSteps(h: E2E, restoreMe: string): Promise<void> {
  const { step, w, fake, waitFor, python, dirs } = h;
  const page = w.page;
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
    await fake.reset();
    await w.send('Anything pinned?');
    const reqs = (await fake.requests()).filter((r) => r.kind === 'stream' && !r.summary);
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
    await fake.script([
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
}
