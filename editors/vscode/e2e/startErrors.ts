/**
 * Start errors in the e2e: a server command that cannot start gives its cause with Show log and Open Settings, and
 * the log maps levels and names the cause.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2E, findFiles } from './harness';

export async function startErrorSteps(h: E2E): Promise<void> {
  const { step, w, waitFor, python, dirs } = h;
  const page = w.page;
  await step('a server command that cannot start gives a clear error with “Show log”', async () => {
    for (const scope of ['User', 'Machine']) {
      const file = path.join(dirs.ud, scope, 'settings.json');
      fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), 'sidecar.serverCommand': [python, '-m', 'no_such_sidecar_module'] }, null, 2));
    }
    const offer = page.locator('.notifications-toasts .notification-toast', { hasText: 'server command changed' }).first();
    await offer.waitFor({ timeout: 30_000 });
    await offer.locator('a.monaco-button, .monaco-button', { hasText: 'Restart' }).first().click();
    const error = page.locator('.notifications-toasts .notification-toast', { hasText: 'Sidecar could not start' }).first();
    await error.waitFor({ timeout: 30_000 });
    const message = (await error.innerText()).replace(/\s+/g, ' ');
    if (!/No module named no_such_sidecar_module/.test(message)) throw new Error(`the error does not say why: ${message}`);
    await w.shot('5-start-error');
    if (!/takes effect from your (Remote|User) settings/.test(message)) throw new Error(`the error does not say which settings scope: ${message}`);
    await error.locator('.monaco-button', { hasText: 'Show log' }).first().click();
    await page.locator('.part.panel .view-line', { hasText: 'could not start' }).first().waitFor({ timeout: 15_000 });
    const item = page.locator('.statusbar-item', { hasText: 'Sidecar' }).filter({ has: page.locator('.codicon-error') }).first();
    await item.waitFor({ timeout: 5_000 });
    // the chat footer shows the whole reason the server is down, not cut off
    await w.runCommand('Sidecar: Open Chat');
    const chat = await w.chat();
    const footer = chat.locator('#status');
    await waitFor('the reason in the chat footer', async () => /No module named no_such_sidecar_module/.test(await footer.innerText()), 15_000);
    const clipped = await footer.evaluate((el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
    if (clipped) throw new Error(`the chat footer cuts off the reason: ${await footer.innerText()}`);
    return message.slice(0, 110);
  });
  await step('“Open Settings” on a start error opens the scope where serverCommand takes effect (defect 2)', async () => {
    await w.runCommand('Sidecar: Restart Server');
    const error = page.locator('.notifications-toasts .notification-toast', { hasText: 'Sidecar could not start' }).first();
    await error.waitFor({ timeout: 30_000 });
    await error.locator('.monaco-button', { hasText: 'Open Settings' }).first().click();
    const editor = page.locator('.settings-editor').first();
    await editor.waitFor({ timeout: 15_000 });
    const setting = editor.locator('.setting-item-contents', { hasText: 'Server Command' }).first();
    await setting.waitFor({ timeout: 15_000 });
    if (await editor.locator('.no-results-message', { hasText: 'No Settings Found' }).isVisible().catch(() => false)) throw new Error('the settings editor says No Settings Found');
    const tab = (await editor.locator('.settings-tabs-widget .action-label.checked').first().innerText().catch(() => '?')).trim();
    await w.shot('7-open-settings');
    await w.runCommand('View: Close Editor');
    return `settings editor on the “${tab}” tab shows sidecar.serverCommand`;
  });
  await step('the log shows the sidecar\'s INFO lines as info, and no stop trace for a client that never ran (defect 5)', async () => {
    const logs = findFiles(path.join(dirs.ud, 'logs'), /Sidecar\.log$/);
    if (!logs.length) throw new Error('no Sidecar.log under the user data logs');
    const text = logs.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
    const infoAsError = text.split('\n').filter((l) => /\[error\].*\bINFO\b/.test(l));
    if (infoAsError.length) throw new Error(`INFO lines logged as errors: ${infoAsError.slice(0, 2).join(' | ')}`);
    // every sidecar record went through the level mapping: none is in the log raw ("<date> <time>,<ms> LEVEL …")
    const raw = text.split('\n').filter((l) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR) /.test(l));
    if (raw.length) throw new Error(`sidecar log records without a level mapping: ${raw.slice(0, 2).join(' | ')}`);
    if (/Stopping server failed/.test(text)) throw new Error('the log has a "Stopping server failed" trace');
    if (!/\[info\] [a-z_][\w.]*: /.test(text)) throw new Error('the sidecar\'s own INFO lines are not in the log');
    // a failed start logs its cause (the server's last words), not the transport's symptom or stack
    const symptom = text.split('\n').filter((l) => /could not start.*(Pending response rejected|connection got disposed|Connection is closed)|couldn't create connection to server/.test(l));
    if (symptom.length) throw new Error(`the log gives the transport symptom as the cause: ${symptom[0]}`);
    if (!/could not start .*No module named no_such_sidecar_module/.test(text)) throw new Error('the log does not say why the start failed');
    return `${logs.length} log file(s), ${text.split('\n').length} lines, none mislabelled`;
  });
}
