/**
 * Restarts in the e2e: a crashed sidecar comes back and resumes its session, Restart Server resumes the shown
 * session, and a settings change reaches the server without offering a restart.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requestText } from '../test/support/sidecar';
import { E2E, sidecarPids } from './harness';

export async function restartSteps(h: E2E): Promise<void> {
  const { step, w, fake, waitFor, python, dirs } = h;
  const page = w.page;
  await step('a crashed sidecar is restarted (kill -9) and the chat keeps working', async () => {
    const pids = sidecarPids(python, dirs.home);
    if (pids.length !== 1) throw new Error(`expected one sidecar process, found ${JSON.stringify(pids)}`);
    process.kill(pids[0], 'SIGKILL');
    const chat = await w.chat();
    await chat.locator('.note', { hasText: 'restarted after a crash' }).first().waitFor({ timeout: 30_000 });
    const after = await waitFor('a new sidecar process', async () => { const p = sidecarPids(python, dirs.home); return p.length === 1 && p[0] !== pids[0] ? p : undefined; });
    await waitFor('the usage item back', () => w.usage());
    await w.send('Are you back?');
    return `pid ${pids[0]} killed → pid ${after[0]} answers`;
  });
  await step('… and it resumed the session it had (sidecar/resumeSession with the last sessionId)', async () => {
    const chat = await w.chat();
    await chat.locator('.note', { hasText: 'session was resumed' }).first().waitFor({ timeout: 5_000 });
    await fake.reset();
    await w.send('Do you remember what we discussed?');
    const reqs = (await fake.requests()).filter((r) => (r.kind === 'stream' || r.kind === 'generate') && !r.summary);
    if (!requestText(reqs[reqs.length - 1]).includes('Are you back?')) throw new Error('the restarted sidecar did not continue the session');
    return 'the next request continues the conversation';
  }, { needs: ['resume'] });
  await step('Sidecar: Restart Server resumes the session the chat view shows', async () => {
    const pids = sidecarPids(python, dirs.home);
    await w.runCommand('Sidecar: Restart Server');
    const chat = await w.chat();
    await chat.locator('.note', { hasText: 'The sidecar restarted; the session was resumed.' }).first().waitFor({ timeout: 30_000 });
    const after = await waitFor('a new sidecar process', async () => { const p = sidecarPids(python, dirs.home); return p.length === 1 && !pids.includes(p[0]) ? p : undefined; });
    await waitFor('the usage item back', () => w.usage());
    await fake.reset();
    await w.send('What did I ask before the restart?');
    const reqs = (await fake.requests()).filter((r) => (r.kind === 'stream' || r.kind === 'generate') && !r.summary);
    if (!requestText(reqs[reqs.length - 1]).includes('Do you remember what we discussed?')) throw new Error('after Restart Server the model no longer sees the conversation on screen');
    return `pid ${pids[0]} → ${after[0]}; the next request continues the conversation`;
  }, { needs: ['resume'] });
  await step('a serverCommand in User settings, which this remote window ignores, is written', async () => {
    const file = path.join(dirs.ud, 'User', 'settings.json');
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), 'sidecar.serverCommand': [python, '-m', 'sidecar', '--log-level', 'DEBUG'] }, null, 2));
  });
  await step('a settings change reaches the sidecar: threshold 5% turns the item to the warning colour', async () => {
    for (const scope of ['User', 'Machine']) {
      const file = path.join(dirs.ud, scope, 'settings.json');
      fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), 'sidecar.compressionThreshold': 0.05 }, null, 2));
    }
    const item = page.locator('.statusbar-item[aria-label^="Sidecar: "]').first();
    await waitFor('the warning colour', async () => /warning-kind/.test((await item.getAttribute('class')) ?? ''), 30_000);
    return `class “${await item.getAttribute('class')}”`;
  });
  await step('… and it offered no restart: the command in effect did not change', async () => {
    // the threshold's effect (the step before) came after the User change's handler ran: a prompt would show by now
    const offers = await page.locator('.notifications-toasts .notification-toast', { hasText: 'server command changed' }).count();
    if (offers) throw new Error('a User-scope serverCommand that does not apply in a remote window offered a restart');
    return 'no restart offered';
  });
}
