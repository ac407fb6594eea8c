/** Test support: the project's Python, the fake Gemini as a child process, a temp SIDECAR_HOME. */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';

/** The repository root (this file runs from editors/vscode/out/test/support). */
export const REPO = path.resolve(__dirname, '../../../../..');

export function projectPython(): string {
  const py = process.env.SIDECAR_PYTHON || path.join(REPO, '.venv', 'bin', 'python');
  if (!fs.existsSync(py)) throw new Error(`no Python with the sidecar at ${py}: run \`make venv\` (or set SIDECAR_PYTHON)`);
  return py;
}

export interface FakeRequest {
  kind: string;
  status?: number;
  has_key?: boolean;
  summary?: boolean;
  body: { contents?: Array<{ role: string; parts: Array<{ text?: string }> }>; systemInstruction?: unknown };
}

export interface FakeGemini {
  url: string;
  process: ChildProcess;
  requests(): Promise<FakeRequest[]>;
  reset(): Promise<void>;
  /** Queue fault/reply steps (docs/fake-gemini.md), e.g. {kind: 'function_call', name, args}. */
  script(steps: object[]): Promise<void>;
  stop(): Promise<void>;
}

/** Same output as `python -m sidecar.fakegemini --port 0`, but only the given API keys are accepted. */
const FAKE_WITH_KEYS = `
import json, signal, sys, threading
from sidecar.fakegemini import FakeGemini
fake = FakeGemini(api_keys=json.loads(sys.argv[1])).start()
print(f"fake-gemini listening on {fake.url}", flush=True)
done = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: done.set())
done.wait()
fake.stop()
`;

export async function startFakeGemini(python = projectPython(), options: { apiKeys?: string[] } = {}): Promise<FakeGemini> {
  const args = options.apiKeys
    ? ['-c', FAKE_WITH_KEYS, JSON.stringify(options.apiKeys)]
    : ['-m', 'sidecar.fakegemini', '--port', '0'];
  const child = spawn(python, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c) => { stderr += c; });
  const rl = readline.createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`fake Gemini did not start: ${stderr}`)), 15000);
    rl.once('line', (line) => {
      clearTimeout(t);
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) resolve(m[1]); else reject(new Error(`unexpected fake Gemini output: ${line}`));
    });
    child.once('exit', (code) => { clearTimeout(t); reject(new Error(`fake Gemini exited (${code}): ${stderr}`)); });
  });
  return {
    url,
    process: child,
    async requests() { return (await (await fetch(`${url}/_control/requests`)).json()) as FakeRequest[]; },
    async reset() { await fetch(`${url}/_control/reset`, { method: 'POST', body: '{}' }); },
    async script(steps) {
      const r = await fetch(`${url}/_control/script`, { method: 'POST', body: JSON.stringify(steps) });
      if (!r.ok) throw new Error(`fake Gemini refused the script: ${await r.text()}`);
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export function tempHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-home-'));
}

/** All text parts of a request's contents, joined. */
export function requestText(req: { body: { contents?: Array<{ parts: Array<{ text?: string }> }> } }): string {
  return (req.body.contents ?? []).flatMap((c) => c.parts.map((p) => p.text ?? '')).join('\n');
}
