/**
 * End-to-end test in a REAL VS Code: code-server (VS Code in the browser, Node extension host) driven by Debian's
 * Chromium through playwright-core, with the real sidecar and the fake Gemini.
 *
 *   scripts/run-e2e.sh  (sets things up, builds the vsix, runs this file with Node)
 *
 * Env: VSCODE_E2E_CODE_SERVER, VSCODE_E2E_NODE24, VSCODE_E2E_CHROMIUM (from the cache's env.sh), VSIX (the package
 * under test), SIDECAR_PYTHON (default <repo>/.venv/bin/python), E2E_ARTIFACTS (default <repo>/test-artifacts/vscode-e2e).
 *
 * Steps for server features that are still landing run only when the server has them (probed over stdio first);
 * otherwise the run fails naming what the server lacks (nothing is skipped).
 */
import { ChildProcess, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BrowserContext } from 'playwright-core';
import { errorCode } from '../src/api';
import { ErrorCode, Method } from '../src/protocol';
import { StdioSidecarClient } from '../src/stdioClient';
import { FakeGemini, REPO, projectPython, startFakeGemini } from '../test/support/sidecar';
import { basicSteps } from './basics';
import { bundledServerSteps } from './bundledServer';
import { chatTurnSteps } from './chatTurns';
import { compressSteps } from './compress';
import { API_KEY, MARKER, TOKEN_LIMIT, toolCall } from './constants';
import { contextSteps } from './context';
import {
  Dirs, E2E, QUIET_SETTINGS, Workbench, env, findFiles, freePort, installVsix, launchBrowser, logger, startCodeServer,
  stopCodeServer, waitFor, wheelhouse, writeSettings,
} from './harness';
import { mcpSteps } from './mcp';
import { planSteps } from './plan';
import { memorySteps } from './memoryFiles';
import { questionFocusSteps } from './questionFocus';
import { restartSteps } from './restarts';
import { sessionSteps } from './sessions';
import { startErrorSteps } from './startErrors';
import { trustSteps } from './trust';

const log = logger('e2e');
const HINT = 'run scripts/run-e2e.sh (it sources the setup cache\'s env.sh)';

/** Which still-landing server features exist: ask a throwaway sidecar over stdio. */
async function probeServer(python: string, fake: FakeGemini, home: string): Promise<Set<string>> {
  const client = await StdioSidecarClient.start({
    command: python, args: ['-m', 'sidecar'], cwd: REPO,
    env: { ...process.env, SIDECAR_HOME: home }, settings: { baseUrl: fake.url, apiKey: API_KEY },
  });
  const have = new Set<string>();
  const probe = async (feature: string, method: string, params: object) => {
    try { await client.connection.sendRequest(method, params); have.add(feature); } catch (e) {
      if (errorCode(e) !== ErrorCode.methodNotFound) have.add(feature); // exists, just refused these params
    }
  };
  await probe('compress', Method.compress, {});
  await probe('sessions', Method.listSessions, {});
  await probe('resume', Method.resumeSession, { sessionId: 'no-such-session' });
  await probe('newSession', Method.newSession, {});
  await probe('transcript', Method.getTranscript, {});
  await probe('undo', Method.undoCompaction, {});
  await probe('branches', Method.forkSession, { beforeMessageId: 'no-such-message' });
  await probe('pins', Method.listPins, {});
  await probe('checkpoints', Method.previewRewind, { messageId: 'no-such-message' }); // rewind with files
  await probe('memory', Method.getMemory, {});
  // tools: does a functionCall from the model reach the editor as a tool call / confirmation?
  let sawTool = false;
  client.connection.onNotification(Method.toolCall, () => { sawTool = true; });
  client.connection.onRequest(Method.confirmToolCall, () => { sawTool = true; return { decision: 'deny' }; });
  await fake.script([toolCall()]);
  await client.api.sendMessage({ text: 'probe: write the notes file' }).catch(() => undefined);
  if (sawTool) have.add('tools');
  await client.stop();
  return have;
}

/** The sidecar wheel in the vsix's folder plus every dependency as wheels, in .cache (built once per dependency set). */
function buildWheelhouse(python: string, vsix: string): string {
  const wheel = findFiles(path.join(path.dirname(vsix), 'server'), /^sidecar-.*\.whl$/)[0];
  if (!wheel) throw new Error('no server/sidecar-*.whl next to the vsix: the package script builds it');
  return wheelhouse(python, wheel);
}

/** The workspace: one Python file with a word to select, and a file the agent edits and rewinding puts back. */
function makeWorkspace(ws: string): { appPy: string; restoreMe: string } {
  fs.mkdirSync(path.join(ws, 'src'));
  const appPy = path.join(ws, 'src', 'app.py');
  fs.writeFileSync(appPy, `"""A tiny module for the sidecar e2e test."""\n\n\ndef answer():\n    ${MARKER} = 42\n    return ${MARKER}\n`);
  const restoreMe = path.join(ws, 'src', 'restore_me.py');
  fs.writeFileSync(restoreMe, 'VALUE = "before the agent"\n');
  return { appPy, restoreMe };
}

async function main(): Promise<void> {
  const codeServer = env('VSCODE_E2E_CODE_SERVER', HINT);
  const node24 = env('VSCODE_E2E_NODE24', HINT);
  const chromiumPath = process.env.VSCODE_E2E_CHROMIUM || '/usr/bin/chromium';
  const vsix = path.resolve(env('VSIX', HINT));
  const python = projectPython();
  const artifacts = path.resolve(process.env.E2E_ARTIFACTS || path.join(REPO, 'test-artifacts', 'vscode-e2e'));
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });
  const run = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-vscode-e2e-'));
  const dirs = Object.fromEntries(['ud', 'exts', 'ws', 'home', 'probe-home', 'xdg', 'chrome', 'userhome'].map((d) => [d, path.join(run, d)])) as Dirs;
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });

  let fake: FakeGemini | undefined;
  let server: ChildProcess | undefined;
  let browser: BrowserContext | undefined;
  let wb: Workbench | undefined;
  const results: Array<[string, string]> = [];
  try {
    fake = await startFakeGemini(python, { apiKeys: [API_KEY] });
    log(`fake Gemini at ${fake.url}`);
    const have = await probeServer(python, fake, dirs['probe-home']);
    log(`server features: ${[...have].join(', ') || '(none of the optional ones)'}`);
    await fake.reset();

    const { appPy, restoreMe } = makeWorkspace(dirs.ws);
    // defect 1: a Gemini CLI session whose model messages have text *and* tool calls, imported to be resumed
    const imported = spawnSync(python, ['-m', 'sidecar', 'import', path.join(REPO, 'tests', 'fixtures', 'gemini-cli', 'legacy-session.json'), '--project', dirs.ws],
      { env: { ...process.env, SIDECAR_HOME: dirs.home }, encoding: 'utf8' });
    if (imported.status !== 0) throw new Error(`sidecar import failed: ${imported.stderr}`);
    // the private environment installs from a local wheelhouse: offline-safe and no index traffic
    const house = buildWheelhouse(python, vsix);
    log(`wheelhouse ${path.relative(REPO, house)}`);

    const serverEnv: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${node24}/bin:${process.env.PATH}`,
      XDG_CONFIG_HOME: path.join(dirs.xdg, 'config'), XDG_DATA_HOME: path.join(dirs.xdg, 'data'), XDG_CACHE_HOME: path.join(dirs.xdg, 'cache'),
      SIDECAR_HOME: dirs.home,
      HOME: dirs.userhome, // the sidecar's global memory is ~/.gemini/GEMINI.md: the test's, never the user's
      // the sidecar package from this checkout, whether or not the venv has it installed (editable)
      PYTHONPATH: [REPO, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
      GEMINI_API_KEY: '', GOOGLE_API_KEY: '', GOOGLE_GEMINI_BASE_URL: '',
      PIP_NO_INDEX: '1', PIP_FIND_LINKS: house, PIP_CONFIG_FILE: os.devNull,
    };
    installVsix(codeServer, vsix, dirs.ud, dirs.exts, serverEnv);
    log('vsix installed');
    // code-server is a remote setup: machine-scoped settings (sidecar.serverCommand) are read from Machine/
    writeSettings(dirs.ud, {
      ...QUIET_SETTINGS,
      'sidecar.serverCommand': [python, '-m', 'sidecar'],
      'sidecar.baseUrl': fake.url,
      'sidecar.tokenLimit': TOKEN_LIMIT,
      'sidecar.trace.server': 'messages',
    });
    const started = await startCodeServer({ codeServer, serverEnv, userData: dirs.ud, extensions: dirs.exts, workspace: dirs.ws, artifacts });
    server = started.server;
    log(`code-server on port ${started.port}`);
    const launched = await launchBrowser(chromiumPath, dirs.chrome, { width: 1400, height: 900 });
    browser = launched.browser;
    const page = launched.page;
    wb = new Workbench(page, artifacts, log);
    const w = wb;
    await page.goto(`http://127.0.0.1:${started.port}/?folder=${encodeURIComponent(dirs.ws)}`, { waitUntil: 'domcontentloaded' });

    const step = async (name: string, fn: () => Promise<string | void>, opts: { needs?: string[] } = {}) => {
      const missing = (opts.needs ?? []).filter((f) => !have.has(f));
      if (missing.length) throw new Error(`${name}: the server lacks ${missing.join(', ')}`);
      const s = Date.now();
      const note = await fn();
      results.push([name, `ok ${((Date.now() - s) / 1000).toFixed(1)}s${note ? ` — ${note}` : ''}`]);
      log(`ok ${name}${note ? `: ${note}` : ''}`);
    };
    const h: E2E = { step, w, fake, waitFor, python, dirs, log };

    // the scenarios, in order: each starts from the state the one before it left
    await basicSteps(h, appPy);
    await chatTurnSteps(h);
    await planSteps(h);
    await questionFocusSteps({ ...h, ws: dirs.ws });
    await contextSteps(h);
    await compressSteps(h);
    await mcpSteps({ ...h, userData: dirs.ud });
    await sessionSteps(h, restoreMe);
    await restartSteps(h);
    await memorySteps(h);
    await step('final screenshot', async () => path.relative(REPO, await w.shot('sidecar-vscode')));
    // workspace trust: a hostile .vscode/settings.json, in Restricted Mode and trusted (a second code-server)
    await trustSteps({
      step, waitFor, workbench: (p) => new Workbench(p, artifacts, log), browser, fake, python, codeServer,
      extensions: dirs.exts, serverEnv, port: await freePort(), apiKey: API_KEY, artifacts,
    });
    await startErrorSteps(h);
    await bundledServerSteps(h);
  } catch (e) {
    if (wb) await wb.shot('failure').catch(() => undefined);
    throw e;
  } finally {
    console.log('\nVS Code e2e results:');
    for (const [name, r] of results) console.log(`  ${r.startsWith('ok') ? '✔' : '…'} ${name}: ${r}`);
    await browser?.close().catch(() => undefined);
    await stopCodeServer(server);
    await fake?.stop();
    const exthostLogs = path.join(dirs.ud, 'logs');
    if (fs.existsSync(exthostLogs)) fs.cpSync(exthostLogs, path.join(artifacts, 'vscode-logs'), { recursive: true });
    fs.rmSync(run, { recursive: true, force: true });
    log(`artifacts in ${path.relative(REPO, artifacts)}`);
  }
}

main().then(() => { log('PASS'); process.exit(0); }, (e) => { console.error(`[e2e] FAIL: ${e instanceof Error ? e.stack : e}`); process.exit(1); });
