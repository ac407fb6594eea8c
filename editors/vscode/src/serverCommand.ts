/**
 * Which command starts the sidecar. Pure: the caller passes the setting, the workspace folder, the platform
 * and a file-exists check, so the rules are unit-tested without VS Code.
 *
 *  1. `sidecar.serverCommand` when set (an argv array; a string is split on whitespace), with `${workspaceFolder}`,
 *     `${userHome}` and a leading `~` expanded.
 *  2. Else, in a trusted workspace, the workspace's own virtualenv when the sidecar is installed in it:
 *     `<folder>/.venv/bin/python -m sidecar`.
 *  3. Else the extension's private environment (serverInstall.ts): `<global storage>/server/venv/bin/python -m sidecar`,
 *     installed from the wheel in the .vsix on first use.
 */
export interface ServerCommand {
  command: string;
  args: string[];
  /** where the command came from, for error messages */
  source: 'setting' | 'workspaceVenv' | 'private';
}

export interface ResolveInput {
  setting: unknown;
  workspaceFolder?: string;
  home: string;
  platform: NodeJS.Platform | string;
  trusted: boolean;
  exists: (path: string) => boolean;
  /** is the sidecar installed in this workspace folder's .venv (serverInstall.venvHasSidecar) */
  venvHasSidecar: (folder: string) => boolean;
  /** the private environment's Python */
  privatePython: string;
}

export function expand(arg: string, workspaceFolder: string | undefined, home: string): string {
  let out = arg.replace(/\$\{userHome\}/g, home);
  if (workspaceFolder !== undefined) out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  if (out === '~' || out.startsWith('~/')) out = home + out.slice(1);
  return out;
}

export function venvPython(folder: string, platform: string): string {
  return platform === 'win32' ? `${folder}\\.venv\\Scripts\\python.exe` : `${folder}/.venv/bin/python`;
}

export function resolveServerCommand(input: ResolveInput): ServerCommand {
  const raw = input.setting;
  const argv = Array.isArray(raw)
    ? raw.filter((a): a is string => typeof a === 'string' && a.length > 0)
    : typeof raw === 'string' ? raw.trim().split(/\s+/).filter(Boolean) : [];
  if (argv.length > 0) {
    const [command, ...args] = argv.map((a) => expand(a, input.workspaceFolder, input.home));
    return { command, args, source: 'setting' };
  }
  if (input.trusted && input.workspaceFolder) {
    const py = venvPython(input.workspaceFolder, input.platform);
    if (input.exists(py) && input.venvHasSidecar(input.workspaceFolder)) return { command: py, args: ['-m', 'sidecar'], source: 'workspaceVenv' };
  }
  return { command: input.privatePython, args: ['-m', 'sidecar'], source: 'private' };
}

/** For messages: `python3 -m sidecar`, quoting arguments with spaces. */
export function displayCommand(cmd: Pick<ServerCommand, 'command' | 'args'>): string {
  return [cmd.command, ...cmd.args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ');
}

/** Whether two values of sidecar.serverCommand start the same command (unset, `[]` and `""` are all "the default"). */
export function sameServerCommand(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): string => {
    if (typeof v === 'string') return JSON.stringify(v.trim().split(/\s+/).filter(Boolean));
    if (Array.isArray(v)) return JSON.stringify(v.map((x) => String(x)));
    return '[]';
  };
  return norm(a) === norm(b);
}
