/**
 * The private server environment's rules, pure (no vscode import, no process spawning: the caller passes a
 * runner), so interpreter choice, install commands and error texts are unit-tested under Node.
 *
 * With no `sidecar.serverCommand` and no trusted workspace `.venv` that has the sidecar installed, the extension
 * keeps a venv of its own in its global storage and installs the wheel bundled in the .vsix into it:
 *   interpreter: `sidecar.pythonPath` → the Python extension's selected interpreter → `python3` / `py -3` / `python`,
 *   the first one that is Python ≥ 3.11; installer: `uv` when on PATH (much faster), else the venv's pip.
 */
import * as path from 'path';

export const MIN_PYTHON: readonly [number, number] = [3, 11];
export const PYTHON_HINT = 'Install Python 3.11 or newer (python.org, or your package manager), or set `sidecar.pythonPath` to a Python 3.11+ interpreter, then run **Sidecar: Reinstall Server**.';

export interface PythonCandidate {
  command: string;
  args: string[];
  /** where it came from, for messages: "sidecar.pythonPath", "the Python extension", "PATH" */
  origin: string;
}

export interface ProbeResult { version?: [number, number, number]; executable?: string; error?: string }

/** Which interpreters to try, in order. */
export function pythonCandidates(input: { setting?: string; pythonExtension?: string; platform: string }): PythonCandidate[] {
  const out: PythonCandidate[] = [];
  if (input.setting && input.setting.trim()) out.push({ command: input.setting.trim(), args: [], origin: 'sidecar.pythonPath' });
  if (input.pythonExtension) out.push({ command: input.pythonExtension, args: [], origin: 'the Python extension' });
  if (input.platform === 'win32') {
    out.push({ command: 'py', args: ['-3'], origin: 'PATH' }, { command: 'python', args: [], origin: 'PATH' });
  } else {
    out.push({ command: 'python3', args: [], origin: 'PATH' }, { command: 'python', args: [], origin: 'PATH' });
  }
  const seen = new Set<string>();
  return out.filter((c) => { const k = [c.command, ...c.args].join(' '); if (seen.has(k)) return false; seen.add(k); return true; });
}

/** The probe: prints "3.11.7 /usr/bin/python3.11". */
export const PROBE_ARGS = ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3], sys.executable)'];

export function parseProbe(stdout: string): ProbeResult {
  const m = /^(\d+)\.(\d+)\.(\d+)\s+(.+)$/m.exec(stdout.trim());
  if (!m) return { error: `unexpected output: ${stdout.trim().slice(0, 120) || '(none)'}` };
  return { version: [Number(m[1]), Number(m[2]), Number(m[3])], executable: m[4].trim() };
}

export function versionOk(v: readonly number[]): boolean {
  return v[0] > MIN_PYTHON[0] || (v[0] === MIN_PYTHON[0] && v[1] >= MIN_PYTHON[1]);
}

export interface Choice { python?: { candidate: PythonCandidate; executable: string; version: string }; tried: string[] }

/** The first candidate that runs and is new enough; `tried` says what each rejected one was, for the error. */
export async function choosePython(candidates: PythonCandidate[], probe: (c: PythonCandidate) => Promise<ProbeResult>): Promise<Choice> {
  const tried: string[] = [];
  for (const c of candidates) {
    const shown = [c.command, ...c.args].join(' ');
    const r = await probe(c);
    if (!r.version || !r.executable) { tried.push(`${shown} (${c.origin}): ${r.error ?? 'did not run'}`); continue; }
    const version = r.version.join('.');
    if (!versionOk(r.version)) { tried.push(`${shown} (${c.origin}): Python ${version} is too old`); continue; }
    return { python: { candidate: c, executable: r.executable, version }, tried };
  }
  return { tried };
}

export function noPythonMessage(tried: string[]): string {
  return `Sidecar needs Python ${MIN_PYTHON.join('.')} or newer to install its server, and found none. Tried: ${tried.join('; ')}. ${PYTHON_HINT.replace(/\*\*|`/g, '')}`;
}

/** The bundled wheel's file name → its version: sidecar-0.1.0-py3-none-any.whl → 0.1.0. */
export function wheelVersion(file: string): string | undefined {
  return /^sidecar-([^-]+)-py3-none-any\.whl$/.exec(path.basename(file))?.[1];
}

export function venvPythonIn(dir: string, platform: string): string {
  return platform === 'win32' ? path.join(dir, 'Scripts', 'python.exe') : path.join(dir, 'bin', 'python');
}

/** What the storage's stamp file records about an installed environment. */
export interface Stamp { wheel: string; version: string; python: string; pythonVersion: string; installer: 'uv' | 'pip'; at: string }

/** Is the environment there and built from this wheel? (Later starts cost only this check.) */
export function upToDate(stamp: Stamp | undefined, wheelFile: string, venvPythonExists: boolean): boolean {
  return !!stamp && venvPythonExists && stamp.wheel === path.basename(wheelFile);
}

export interface Step { title: string; command: string; args: string[] }

/** The commands that build the environment in `venvDir` from `wheel`. */
export function installSteps(o: { python: PythonCandidate & { executable: string }; uv?: string; venvDir: string; wheel: string; platform: string }): Step[] {
  const py = venvPythonIn(o.venvDir, o.platform);
  if (o.uv) {
    return [
      { title: 'Creating the environment (uv)', command: o.uv, args: ['venv', '--quiet', '--python', o.python.executable, o.venvDir] },
      { title: 'Installing the sidecar and its dependencies (uv)', command: o.uv, args: ['pip', 'install', '--python', py, o.wheel] },
    ];
  }
  return [
    { title: 'Creating the environment', command: o.python.executable, args: ['-m', 'venv', o.venvDir] },
    { title: 'Installing the sidecar and its dependencies (pip)', command: py, args: ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', o.wheel] },
  ];
}

const NETWORK = /(Could not find a version that satisfies|No matching distribution found|Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|NewConnectionError|ConnectTimeout|ReadTimeout|Network is unreachable|ProxyError|SSLError|Failed to fetch|error sending request|dns error|failed to lookup address)/i;

/** The last line that says why (pip's "ERROR: …", else the last non-empty line). */
export function lastError(output: string): string {
  const lines = output.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const error = [...lines].reverse().find((l) => /^(ERROR|error):/.test(l));
  return (error ?? lines[lines.length - 1] ?? '').slice(0, 400);
}

/** A failed step, in words, with the next step. */
export function stepFailureMessage(step: Step, output: string, platform: string): string {
  const why = lastError(output) || 'it failed without saying why';
  if (/ensurepip is not available|No module named venv|python3(\.\d+)?-venv/.test(output)) {
    const pkg = platform === 'linux' ? ' (Debian/Ubuntu: sudo apt install python3-venv)' : '';
    return `Sidecar could not create its Python environment: ${why}. Install Python's venv module${pkg}, or set sidecar.pythonPath to another Python 3.11+, then run Sidecar: Reinstall Server.`;
  }
  if (NETWORK.test(output)) {
    return `Sidecar could not download its dependencies: ${why}. Without network access, point the installer at a local index or wheel folder — set PIP_INDEX_URL, or PIP_FIND_LINKS=<folder> with PIP_NO_INDEX=1 (uv: UV_INDEX_URL / UV_FIND_LINKS) in the environment VS Code starts with, or in pip.conf — then run Sidecar: Reinstall Server. Or set sidecar.serverCommand to a sidecar you installed yourself.`;
  }
  return `Sidecar could not install its server (${step.title.toLowerCase()}): ${why}. See the log for the full output; run Sidecar: Reinstall Server to try again, or set sidecar.serverCommand to a sidecar you installed yourself.`;
}

/** Does a workspace `.venv` have the sidecar installed? (a `sidecar-*.dist-info` in its site-packages) */
export function venvHasSidecar(folder: string, platform: string, readdir: (dir: string) => string[]): boolean {
  const venv = path.join(folder, '.venv');
  const sitePackages: string[] = [];
  if (platform === 'win32') sitePackages.push(path.join(venv, 'Lib', 'site-packages'));
  else for (const d of readdir(path.join(venv, 'lib'))) if (/^python3\.\d+$/.test(d)) sitePackages.push(path.join(venv, 'lib', d, 'site-packages'));
  return sitePackages.some((sp) => readdir(sp).some((f) => /^sidecar-[^-]+\.dist-info$/.test(f)));
}
