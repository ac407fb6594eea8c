/**
 * The bundled server in the e2e: with no server command the extension installs its own wheel (Cancel, then Reinstall),
 * a turn goes through it, and a second start reuses the environment.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2E, findFiles, sidecarPids } from './harness';

export async function bundledServerSteps(h: E2E): Promise<void> {
  const { step, w, waitFor, dirs } = h;
  const page = w.page;
  // ---- the bundled server: no serverCommand, no workspace venv → the extension's own environment ----
  const storage = path.join(dirs.ud, 'User', 'globalStorage', 'sidecar.sidecar-vscode', 'server');
  const privatePython = path.join(storage, 'venv', 'bin', 'python');
  await step('with no serverCommand the extension installs its bundled wheel into its storage, with progress; Cancel is info with Reinstall', async () => {
    for (const scope of ['User', 'Machine']) {
      const file = path.join(dirs.ud, scope, 'settings.json');
      const json = JSON.parse(fs.readFileSync(file, 'utf8'));
      delete json['sidecar.serverCommand'];
      fs.writeFileSync(file, JSON.stringify(json, null, 2));
    }
    const offer = page.locator('.notifications-toasts .notification-toast', { hasText: 'server command changed' }).first();
    await offer.waitFor({ timeout: 30_000 });
    await offer.locator('.monaco-button', { hasText: 'Restart' }).first().click();
    // Cancel on the install's progress is the user's choice: an information message with Reinstall,
    // logged as [info], never an [error] with a stack trace; Reinstall then installs.
    const installing = page.locator('.notifications-toasts .notification-toast', { hasText: 'installing the server' }).first();
    await installing.waitFor({ timeout: 30_000 });
    await page.locator('.statusbar-item', { hasText: 'installing server' }).first().waitFor({ timeout: 10_000 }).catch(() => undefined);
    await w.shot('8-installing');
    await installing.locator('.monaco-button', { hasText: 'Cancel' }).first().click();
    const cancelledToast = page.locator('.notifications-toasts .notification-toast', { hasText: 'was cancelled' }).first();
    await cancelledToast.waitFor({ timeout: 60_000 });
    const cancelLog = findFiles(path.join(dirs.ud, 'logs'), /Sidecar\.log$/).map((f) => fs.readFileSync(f, 'utf8')).join('\n');
    if (!/\[info\] Installing the sidecar server was cancelled/.test(cancelLog)) throw new Error('the cancelled install is not logged as [info]');
    const cancelErrors = cancelLog.split('\n').filter((l) => /\[error\].*cancel/i.test(l));
    if (cancelErrors.length) throw new Error(`the cancelled install is logged as an error: ${cancelErrors[0]}`);
    if (await cancelledToast.locator('.codicon-error').count()) throw new Error('the cancelled install is shown as an error');
    const cancelledLog = fs.readFileSync(path.join(storage, 'install.log'), 'utf8');
    if (!/=== failed: Installing the sidecar server was cancelled/.test(cancelledLog)) throw new Error('the install log does not record the cancelled attempt');
    await w.shot('8-install-cancelled');
    await cancelledToast.locator('.monaco-button', { hasText: 'Reinstall' }).first().click();
    await page.locator('.notification-toast, .notifications-center', { hasText: 'installing the server' }).first().waitFor({ timeout: 30_000 });
    const u = await waitFor('usage from the private server', () => w.usage(), 240_000, 500);
    const pids = sidecarPids(privatePython, dirs.home);
    if (pids.length !== 1) throw new Error(`expected the sidecar to run from ${privatePython}: ${JSON.stringify(pids)}`);
    const installLog = fs.readFileSync(path.join(storage, 'install.log'), 'utf8');
    if (!/-m pip install/.test(installLog) || !/=== installed/.test(installLog)) throw new Error(`install log:\n${installLog.slice(-2000)}`);
    return `cancelled once (info + Reinstall), then “${u.text}”, pid ${pids[0]} runs ${path.relative(dirs.ud, privatePython)}`;
  });
  await step('… a turn through the bundled server updates the status bar', async () => {
    await w.runCommand('Sidecar: Open Chat');
    await w.send('Hello from the bundled server.');
    const u = await waitFor('a percentage from Gemini', async () => { const x = await w.usage(); return x && x.percent > 0 ? x : undefined; });
    const tip = await w.tooltip('Source:');
    if (!/Source: api/.test(tip)) throw new Error(`after a turn the count should be Gemini's: ${tip}`);
    return `“${u.text}”`;
  });
  await step('… and a second start reuses the environment without pip', async () => {
    const before = fs.readFileSync(path.join(storage, 'install.log'), 'utf8');
    const old = sidecarPids(privatePython, dirs.home);
    await w.runCommand('Sidecar: Restart Server');
    const now = await waitFor('a new private sidecar', async () => { const p = sidecarPids(privatePython, dirs.home); return p.length === 1 && p[0] !== old[0] ? p : undefined; }, 60_000);
    await waitFor('the usage item back', () => w.usage(), 60_000);
    const after = fs.readFileSync(path.join(storage, 'install.log'), 'utf8');
    if (after !== before) throw new Error(`the restart ran the installer again:\n${after.slice(before.length)}`);
    await w.send('Still there?');
    return `pid ${old[0]} → ${now[0]}; install.log unchanged`;
  });
}
