/**
 * The private server environment in the extension's global storage: built from the wheel bundled in the .vsix
 * on first use (or when that wheel changes), with a progress notification that can be cancelled and a log;
 * reused at no cost afterwards; rebuilt by "Sidecar: Reinstall Server". Rules and texts: serverInstall.ts.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  PROBE_ARGS, PythonCandidate, Stamp, Step, choosePython, installSteps, noPythonMessage, parseProbe, pythonCandidates,
  stepFailureMessage, upToDate, venvPythonIn, wheelVersion,
} from './serverInstall';

/** An install failure whose message is meant for the user as it is. */
export class InstallError extends Error {
  constructor(message: string, readonly cancelled = false) { super(message); }
}

interface RunResult { code: number | null; output: string }

export class PrivateServer {
  readonly dir: string;
  readonly venvDir: string;
  private readonly stampFile: string;
  readonly logFile: string;
  private installing: Promise<string> | undefined;

  constructor(private readonly context: vscode.ExtensionContext, private readonly log: vscode.LogOutputChannel) {
    this.dir = path.join(context.globalStorageUri.fsPath, 'server');
    this.venvDir = path.join(this.dir, 'venv');
    this.stampFile = path.join(this.dir, 'installed.json');
    this.logFile = path.join(this.dir, 'install.log');
  }

  get python(): string { return venvPythonIn(this.venvDir, process.platform); }

  /** The wheel shipped in the .vsix (`server/sidecar-<version>-py3-none-any.whl`). */
  bundledWheel(): string | undefined {
    const dir = this.context.asAbsolutePath('server');
    let files: string[];
    try { files = fs.readdirSync(dir); } catch { return undefined; }
    const wheel = files.filter((f) => wheelVersion(f)).sort().pop();
    return wheel ? path.join(dir, wheel) : undefined;
  }

  private stamp(): Stamp | undefined {
    try { return JSON.parse(fs.readFileSync(this.stampFile, 'utf8')) as Stamp; } catch { return undefined; }
  }

  /** True when the environment exists and was built from the bundled wheel. */
  isCurrent(): boolean {
    const wheel = this.bundledWheel();
    return !!wheel && upToDate(this.stamp(), wheel, fs.existsSync(this.python));
  }

  /** The environment's Python, installing it first when needed (one install at a time). */
  async ensure(onInstalling?: () => void): Promise<string> {
    if (this.isCurrent()) {
      const s = this.stamp()!;
      this.log.info(`using the private environment ${this.venvDir} (sidecar ${s.version}, Python ${s.pythonVersion}; installed ${s.at})`);
      return this.python;
    }
    onInstalling?.();
    this.installing ??= this.install().finally(() => { this.installing = undefined; });
    return this.installing;
  }

  /** Remove the environment; the next start installs it again. */
  async remove(): Promise<void> {
    await fs.promises.rm(this.dir, { recursive: true, force: true });
  }

  private async install(): Promise<string> {
    const wheel = this.bundledWheel();
    if (!wheel) {
      throw new InstallError('This Sidecar extension has no bundled server (server/sidecar-*.whl is missing from the .vsix: build it with `make vsix`). Set sidecar.serverCommand to a sidecar you installed (pipx install / uv tool install), or install a complete .vsix.');
    }
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Sidecar: installing the server', cancellable: true },
      async (progress, token) => {
        await fs.promises.mkdir(this.dir, { recursive: true });
        const logStream = fs.createWriteStream(this.logFile, { flags: 'a' });
        const write = (text: string) => { logStream.write(text); };
        write(`\n=== ${new Date().toISOString()} installing ${path.basename(wheel)}\n`);
        this.log.info(`installing the bundled sidecar ${path.basename(wheel)} into ${this.venvDir} (log: ${this.logFile})`);
        try {
          progress.report({ message: 'Looking for Python 3.11+…' });
          const cancelled = () => new InstallError('Installing the sidecar server was cancelled. Run Sidecar: Reinstall Server to install it.', true);
          const choice = await choosePython(await this.candidates(), (c) => this.probe(c, token));
          if (token.isCancellationRequested) throw cancelled();
          for (const t of choice.tried) this.log.info(`python candidate rejected: ${t}`);
          if (!choice.python) throw new InstallError(noPythonMessage(choice.tried));
          const py = choice.python;
          this.log.info(`using Python ${py.version} at ${py.executable} (from ${py.candidate.origin})`);
          const uv = await this.findUv(token);
          await fs.promises.rm(this.venvDir, { recursive: true, force: true });
          await fs.promises.rm(this.stampFile, { force: true });
          const steps = installSteps({ python: { ...py.candidate, executable: py.executable }, uv, venvDir: this.venvDir, wheel, platform: process.platform });
          for (const [i, step] of steps.entries()) {
            progress.report({ message: `${step.title}… (${i + 1}/${steps.length})`, increment: i === 0 ? 10 : 0 });
            const r = await this.run(step, token, write);
            if (token.isCancellationRequested) throw cancelled();
            if (r.code !== 0) throw new InstallError(stepFailureMessage(step, r.output, process.platform));
          }
          const stamp: Stamp = {
            wheel: path.basename(wheel), version: wheelVersion(wheel) ?? '?', python: py.executable, pythonVersion: py.version,
            installer: uv ? 'uv' : 'pip', at: new Date().toISOString(),
          };
          await fs.promises.writeFile(this.stampFile, JSON.stringify(stamp, null, 2));
          write(`=== installed: ${JSON.stringify(stamp)}\n`);
          this.log.info(`installed sidecar ${stamp.version} with ${stamp.installer} into ${this.venvDir}`);
          return this.python;
        } catch (e) {
          write(`=== failed: ${e instanceof Error ? e.message : String(e)}\n`);
          if (!(e instanceof InstallError && e.cancelled)) await fs.promises.rm(this.venvDir, { recursive: true, force: true }).catch(() => undefined);
          throw e;
        } finally {
          logStream.end();
        }
      },
    );
  }

  private async candidates(): Promise<PythonCandidate[]> {
    const setting = vscode.workspace.getConfiguration('sidecar').get<string>('pythonPath') ?? '';
    // an untrusted workspace's interpreter (often its own .venv) is not run
    const fromExtension = vscode.workspace.isTrusted ? await pythonExtensionInterpreter(this.log) : undefined;
    return pythonCandidates({ setting, pythonExtension: fromExtension, platform: process.platform });
  }

  private async probe(c: PythonCandidate, token: vscode.CancellationToken) {
    const r = await this.run({ title: 'probe', command: c.command, args: [...c.args, ...PROBE_ARGS] }, token, undefined, 20_000);
    if (r.code === null && /ENOENT/.test(r.output)) return { error: 'not found' };
    if (r.code !== 0) return { error: r.output.trim().split(/\r?\n/).pop()?.slice(0, 200) || `exit code ${r.code}` };
    return parseProbe(r.output);
  }

  private async findUv(token: vscode.CancellationToken): Promise<string | undefined> {
    const r = await this.run({ title: 'uv', command: 'uv', args: ['--version'] }, token, undefined, 10_000);
    if (r.code !== 0) return undefined;
    this.log.info(`found ${r.output.trim()}: installing with uv`);
    return 'uv';
  }

  /** Run one command; its output goes to the install log (and the output channel); Cancel kills it. */
  private run(step: Step, token: vscode.CancellationToken, write?: (s: string) => void, timeoutMs = 0): Promise<RunResult> {
    return new Promise((resolve) => {
      let output = '';
      if (write) { write(`$ ${[step.command, ...step.args].join(' ')}\n`); this.log.info(`$ ${[step.command, ...step.args].join(' ')}`); }
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        // caches inside the extension's storage: nothing is left behind outside it when the extension goes
        PIP_CACHE_DIR: process.env.PIP_CACHE_DIR ?? path.join(this.dir, 'cache', 'pip'),
        UV_CACHE_DIR: process.env.UV_CACHE_DIR ?? path.join(this.dir, 'cache', 'uv'),
        PYTHONUNBUFFERED: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1', PYTHONNOUSERSITE: '1',
      };
      delete env.PYTHONPATH; // the environment gets its own packages, whatever the user's shell adds
      delete env.PYTHONHOME;
      let child;
      try {
        child = spawn(step.command, step.args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        resolve({ code: null, output: String(e) });
        return;
      }
      const onData = (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        output = (output + text).slice(-20_000);
        if (write) { write(text); for (const line of text.split(/\r?\n/)) if (line.trim()) this.log.trace(line); }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      const cancel = token.onCancellationRequested(() => child.kill());
      const timer = timeoutMs ? setTimeout(() => child.kill(), timeoutMs) : undefined;
      let done = false;
      const finish = (code: number | null) => {
        if (done) return;
        done = true;
        cancel.dispose();
        if (timer) clearTimeout(timer);
        resolve({ code, output });
      };
      child.on('error', (e) => { output += String(e); finish(null); }); // e.g. ENOENT: no such command
      child.on('close', (code) => finish(code));
    });
  }
}

/** The interpreter selected in the Python extension, when it is installed (its public environments API). */
async function pythonExtensionInterpreter(log: vscode.LogOutputChannel): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) return undefined;
  try {
    const api = (ext.isActive ? ext.exports : await ext.activate()) as { environments?: { getActiveEnvironmentPath(): { path: string } } } | undefined;
    const p = api?.environments?.getActiveEnvironmentPath()?.path;
    return p && p !== 'python' ? p : undefined;
  } catch (e) {
    log.warn(`could not ask the Python extension for its interpreter: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
}
