/**
 * `sidecar doctor --json` for "Sidecar: Run Doctor": run it with the editor's settings on stdin (never on the
 * command line: they hold the API key), parse its report, render it as Markdown. No vscode import: unit-tested.
 */
import { spawn } from 'node:child_process';

export interface DoctorCheck { name: string; ok: boolean; detail: string; hint: string | null }
export interface DoctorVerdict { kind: string; label: string; ok: boolean; errorKind: string | null; message: string | null }
export interface DoctorReport { version: string; ok: boolean; frontEnd: string; backend: DoctorVerdict | null; checks: DoctorCheck[] }

export interface DoctorOptions { project?: string; trusted: boolean; online: boolean }

/** The server command's own arguments, then the doctor's: it reads the editor's settings from stdin. */
export function doctorArgs(serverArgs: readonly string[], o: DoctorOptions): string[] {
  const args = [...serverArgs, 'doctor', '--json', '--editor', 'vscode', '--editor-settings', '-'];
  if (o.project) args.push('--project', o.project);
  if (o.trusted) args.push('--trusted');
  if (o.online) args.push('--online');
  return args;
}

export function parseDoctorReport(stdout: string): DoctorReport {
  let data: unknown;
  try {
    data = JSON.parse(stdout);
  } catch {
    throw new Error(`the sidecar's doctor did not answer with a report (is the sidecar too old for \`doctor --json --editor-settings\`?): ${stdout.slice(0, 200)}`);
  }
  const r = data as Partial<DoctorReport>;
  if (!r || typeof r !== 'object' || !Array.isArray(r.checks) || typeof r.ok !== 'boolean') {
    throw new Error('the sidecar\'s doctor answered something that is not a report');
  }
  return { version: String(r.version ?? '?'), ok: r.ok, frontEnd: String(r.frontEnd ?? 'editor'), backend: r.backend ?? null, checks: r.checks };
}

/** Runs the doctor; resolves with its report (exit code 1 only says a problem was found). */
export function runDoctor(command: string, args: string[], settings: object, env: NodeJS.ProcessEnv, cwd: string, timeoutMs = 60_000): Promise<DoctorReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: 'pipe' });
    let out = '';
    let err = '';
    const timer = setTimeout(() => { child.kill(); reject(new Error(`the doctor did not finish within ${timeoutMs / 1000} s`)); }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => { err = (err + c).slice(-2000); });
    child.once('error', (e) => { clearTimeout(timer); reject(new Error(`cannot run ${command}: ${e.message}`)); });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code !== 0 && code !== 1) { reject(new Error(`${command} doctor exited with ${code}: ${err.trim().split('\n').pop() ?? ''}`)); return; }
      try { resolve(parseDoctorReport(out)); } catch (e) { reject(e); }
    });
    child.stdin.end(JSON.stringify(settings));
  });
}

/** The document is read as text in an editor: the server's words as they are (never `GEMINI\_API\_KEY`), on one line. */
const oneLine = (s: string) => s.replace(/\s*\r?\n\s*/g, ' ');

/** "1 problem found", "2 problems found". */
export function problemsFound(n: number): string {
  return `${n} ${n === 1 ? 'problem' : 'problems'} found`;
}

export function doctorMarkdown(r: DoctorReport, o: { online: boolean }): string {
  const lines = [`# Sidecar doctor${o.online ? ' (online)' : ''}`, ''];
  lines.push(r.ok ? '**All good.**' : `**${problemsFound(r.checks.filter((c) => !c.ok).length)}.**`, '');
  if (r.backend) {
    const works = r.backend.ok ? 'the first message would work' : `the first message would fail (${r.backend.errorKind ?? 'error'})`;
    lines.push(`Backend: **${oneLine(r.backend.label)}**: ${works}.`, '');
  }
  lines.push(`sidecar ${oneLine(r.version)}`, '');
  for (const c of r.checks) {
    lines.push(`- ${c.ok ? '✅' : '❌'} **${oneLine(c.name)}**: ${oneLine(c.detail)}`);
    if (c.hint) lines.push(`  - ${c.ok ? '' : '→ '}${oneLine(c.hint)}`);
  }
  if (!o.online) lines.push('', 'Run “Sidecar: Run Doctor (Online)” to also fetch a token and make one countTokens call.');
  return lines.join('\n') + '\n';
}
