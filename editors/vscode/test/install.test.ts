import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { itemsFromTranscript, splitToolCallEntry } from '../src/chatModel';
import {
  PythonCandidate, choosePython, installSteps, noPythonMessage, parseProbe, pythonCandidates, stepFailureMessage,
  upToDate, venvHasSidecar, wheelVersion,
} from '../src/serverInstall';
import { ServerLogParser } from '../src/serverLog';
import { settingScope } from '../src/settingScope';
import { sessionDescription, sourceText, statusTooltip } from '../src/status';
import { transcriptMarkdown } from '../src/transcript';

describe('private server: interpreter choice', () => {
  it('tries sidecar.pythonPath, then the Python extension, then PATH (py -3 on Windows)', () => {
    const names = (cs: PythonCandidate[]) => cs.map((c) => [c.command, ...c.args].join(' '));
    assert.deepEqual(names(pythonCandidates({ setting: '/opt/py/bin/python3', pythonExtension: '/w/.venv/bin/python', platform: 'linux' })),
      ['/opt/py/bin/python3', '/w/.venv/bin/python', 'python3', 'python']);
    assert.deepEqual(names(pythonCandidates({ platform: 'win32' })), ['py -3', 'python']);
    assert.deepEqual(names(pythonCandidates({ setting: ' ', pythonExtension: 'python3', platform: 'darwin' })), ['python3', 'python']);
  });

  it('takes the first Python ≥ 3.11 and says why the others were rejected', async () => {
    const found: Record<string, string> = { '/ext/python': '3.10.12 /ext/python', python3: '3.12.1 /usr/bin/python3.12' };
    const choice = await choosePython(pythonCandidates({ setting: '/nope', pythonExtension: '/ext/python', platform: 'linux' }),
      async (c) => (found[c.command] ? parseProbe(found[c.command]) : { error: 'not found' }));
    assert.equal(choice.python?.executable, '/usr/bin/python3.12');
    assert.equal(choice.python?.version, '3.12.1');
    assert.deepEqual(choice.tried, ['/nope (sidecar.pythonPath): not found', '/ext/python (the Python extension): Python 3.10.12 is too old']);
  });

  it('names what is needed and how to set it when no Python fits', async () => {
    const choice = await choosePython(pythonCandidates({ platform: 'linux' }), async (c) => (c.command === 'python' ? parseProbe('3.9.2 /usr/bin/python') : { error: 'not found' }));
    assert.equal(choice.python, undefined);
    const text = noPythonMessage(choice.tried);
    assert.match(text, /needs Python 3\.11 or newer/);
    assert.match(text, /python3 \(PATH\): not found; python \(PATH\): Python 3\.9\.2 is too old/);
    assert.match(text, /set sidecar\.pythonPath/);
    assert.match(text, /Sidecar: Reinstall Server/);
    assert.deepEqual(parseProbe('garbage'), { error: 'unexpected output: garbage' });
  });
});

describe('private server: install', () => {
  const py = { command: 'python3', args: [], origin: 'PATH', executable: '/usr/bin/python3.11' };
  it('creates a venv and pip-installs the wheel; uses uv when present', () => {
    const pip = installSteps({ python: py, venvDir: '/s/server/venv', wheel: '/x/sidecar-0.1.0-py3-none-any.whl', platform: 'linux' });
    assert.deepEqual(pip.map((s) => [s.command, ...s.args].slice(0, 4)), [
      ['/usr/bin/python3.11', '-m', 'venv', '/s/server/venv'],
      ['/s/server/venv/bin/python', '-m', 'pip', 'install'],
    ]);
    assert.equal(pip[1].args[pip[1].args.length - 1], '/x/sidecar-0.1.0-py3-none-any.whl');
    const uv = installSteps({ python: py, uv: 'uv', venvDir: '/s/server/venv', wheel: '/x/w.whl', platform: 'linux' });
    assert.deepEqual(uv.map((s) => s.args.slice(0, 2)), [['venv', '--quiet'], ['pip', 'install']]);
    assert.ok(uv[1].args.includes('/s/server/venv/bin/python'));
  });

  it('reuses an environment built from the same wheel, reinstalls when the wheel changes', () => {
    const stamp = { wheel: 'sidecar-0.1.0-py3-none-any.whl', version: '0.1.0', python: '/p', pythonVersion: '3.11.7', installer: 'pip' as const, at: 'x' };
    assert.equal(upToDate(stamp, '/ext/server/sidecar-0.1.0-py3-none-any.whl', true), true);
    assert.equal(upToDate(stamp, '/ext/server/sidecar-0.2.0-py3-none-any.whl', true), false);
    assert.equal(upToDate(stamp, '/ext/server/sidecar-0.1.0-py3-none-any.whl', false), false, 'the venv was deleted');
    assert.equal(upToDate(undefined, '/ext/server/sidecar-0.1.0-py3-none-any.whl', true), false);
    assert.equal(wheelVersion('/a/sidecar-1.2.3-py3-none-any.whl'), '1.2.3');
    assert.equal(wheelVersion('/a/other-1.2.3-py3-none-any.whl'), undefined);
  });

  it('explains a failed download with pip\'s exact error and how to use a local index', () => {
    const out = 'Processing ./sidecar.whl\nWARNING: Retrying ...\nERROR: Could not find a version that satisfies the requirement pygls<3,>=2.1 (from sidecar) (from versions: none)\nERROR: No matching distribution found for pygls<3,>=2.1\n';
    const step = installSteps({ python: py, venvDir: '/v', wheel: '/w.whl', platform: 'linux' })[1];
    const text = stepFailureMessage(step, out, 'linux');
    assert.match(text, /could not download its dependencies: ERROR: No matching distribution found for pygls<3,>=2\.1\./);
    assert.match(text, /PIP_FIND_LINKS=<folder> with PIP_NO_INDEX=1/);
    assert.match(text, /PIP_INDEX_URL/);
    assert.match(text, /Sidecar: Reinstall Server/);
  });

  it('explains a missing venv module and any other failure', () => {
    const step = installSteps({ python: py, venvDir: '/v', wheel: '/w.whl', platform: 'linux' })[0];
    const venv = stepFailureMessage(step, 'The virtual environment was not created successfully because ensurepip is not available.  On Debian/Ubuntu systems, you need to install the python3-venv package', 'linux');
    assert.match(venv, /sudo apt install python3-venv/);
    const other = stepFailureMessage(step, 'boom\nOSError: [Errno 28] No space left on device\n', 'linux');
    assert.match(other, /creating the environment\): OSError: \[Errno 28\] No space left on device/);
  });

  it('uses a workspace .venv only when the sidecar is installed in it', () => {
    const tree: Record<string, string[]> = {
      '/w/.venv/lib': ['python3.11'],
      '/w/.venv/lib/python3.11/site-packages': ['pip', 'sidecar-0.1.0.dist-info', 'sidecar'],
      '/v/.venv/lib': ['python3.12'],
      '/v/.venv/lib/python3.12/site-packages': ['pip', 'requests-2.0.dist-info'],
    };
    const readdir = (d: string) => tree[d] ?? [];
    assert.equal(venvHasSidecar('/w', 'linux', readdir), true);
    assert.equal(venvHasSidecar('/v', 'linux', readdir), false);
    assert.equal(venvHasSidecar('/none', 'linux', readdir), false);
  });
});

describe('server log levels', () => {
  it('shows INFO as info, WARNING as warn; a traceback keeps its record\'s level', () => {
    const p = new ServerLogParser();
    const lines = [
      ...p.push('2026-11-24 03:00:00,123 INFO sidecar.server: serving on stdio\n2026-11-24 03:00:01,001 WARNING sidecar.rec'),
      ...p.push('ording: cannot fsync\n2026-11-24 03:00:02,000 ERROR sidecar.chat: turn failed\nTraceback (most recent call last):\n'),
      ...p.flush(),
    ];
    assert.deepEqual(lines, [
      ['info', 'sidecar.server: serving on stdio'],
      ['warn', 'sidecar.recording: cannot fsync'],
      ['error', 'sidecar.chat: turn failed'],
      ['error', 'Traceback (most recent call last):'],
    ]);
    assert.deepEqual(new ServerLogParser().push('/usr/bin/python3: No module named sidecar\n'), [['warn', '/usr/bin/python3: No module named sidecar']]);
  });
});

describe('where sidecar.serverCommand takes effect', () => {
  it('remote windows use the Remote settings, not the User ones; workspace values win when trusted', () => {
    assert.equal(settingScope({ globalValue: ['x'] }, 'code-server', true).command, 'workbench.action.openRemoteSettings');
    assert.match(settingScope({}, 'ssh-remote', true).label, /Remote settings \(ssh-remote\); User settings are not used/);
    assert.equal(settingScope({ globalValue: ['x'] }, undefined, true).command, 'workbench.action.openSettings');
    assert.equal(settingScope({ workspaceValue: ['x'] }, 'code-server', true).command, 'workbench.action.openWorkspaceSettings');
    assert.equal(settingScope({ workspaceValue: ['x'] }, undefined, false).command, 'workbench.action.openSettings', 'an untrusted workspace cannot set it');
  });
});

describe('status texts (defects 3, 6, 7)', () => {
  const usage = { seq: 1, sessionId: 's', model: 'gemini-2.5-flash', promptTokenCount: 5400, tokenLimit: 20_000, percentUsed: 27, compressionThreshold: 0.5 };
  it('labels a new session\'s count as the empty conversation\'s estimate, and the count after undo as fresh', () => {
    assert.match(sourceText({ source: 'estimate', estimateReason: 'newSession' }), /estimate of the empty conversation \(system prompt and tools/);
    assert.doesNotMatch(sourceText({ source: 'estimate', estimateReason: 'newSession' }), /since the last reply/);
    const undone = statusTooltip({ ...usage, source: 'estimate', estimateReason: 'undo' },
      { status: 'COMPRESSED', trigger: 'manual', originalTokenCount: 2220, newTokenCount: 965, at: new Date(2026, 0, 1, 12, 0, 0), undone: true });
    assert.match(undone, /Source: estimate of the restored history after the undo/);
    assert.match(undone, /Last compaction: 2,220 → 965 tokens, manual, at 12:00:00 — undone/);
    assert.match(sourceText({ source: 'estimate' }), /the history changed since the last reply/);
  });
  it('says "1 compaction", not "1 compactions"', () => {
    assert.equal(sessionDescription({ messageCount: 1, compactionCount: 1 }), '1 message · 1 compaction');
    assert.equal(sessionDescription({ messageCount: 12, compactionCount: 2 }), '12 messages · 2 compactions');
    assert.equal(sessionDescription({ messageCount: 3, compactionCount: 0 }), '3 messages');
  });
});

describe('resumed tool calls (defect 1) and the transcript summary (defect 4)', () => {
  const entry = {
    type: 'message' as const, id: 'm4', time: 't', role: 'model' as const, kind: 'toolCall' as const,
    text: 'Updating the parser to use the csv module.\n→ replace({"file_path":"/home/dev/proj/src/csv.py"})\n→ run_shell_command({"command":"pytest -q"})',
    toolCalls: [{ name: 'replace', args: { file_path: '/home/dev/proj/src/csv.py' } }, { name: 'run_shell_command', args: { command: 'pytest -q' } }],
  };
  it('titles cards with the tool names from the data, and keeps the model\'s words as a message', () => {
    const items = itemsFromTranscript([entry]);
    assert.deepEqual(items.map((i) => [i.kind, i.kind === 'tool' ? i.name : i.kind === 'model' ? i.text : '']), [
      ['model', 'Updating the parser to use the csv module.'],
      ['tool', 'replace'],
      ['tool', 'run_shell_command'],
    ]);
    const first = items[1];
    assert.ok(first.kind === 'tool' && (first.args as { file_path: string }).file_path === '/home/dev/proj/src/csv.py');
  });
  it('without toolCalls (an older server) reads the → lines, never the first word', () => {
    const { prose, calls } = splitToolCallEntry({ text: entry.text });
    assert.equal(prose, 'Updating the parser to use the csv module.');
    assert.deepEqual(calls.map((c) => c.name), ['replace', 'run_shell_command']);
  });
  it('marks a tool result whose outputs were masked in the transcript document', () => {
    const md = transcriptMarkdown({ sessionId: 'abc', entries: [
      { type: 'message', id: 'm3', time: 't', role: 'user', kind: 'toolResult', text: 'read_file: …', masked: true },
    ] });
    assert.match(md, / · masked \(the model sees previews; the full outputs are saved\)/);
  });
  it('puts the compaction\'s <state_snapshot> in the transcript document', () => {
    const md = transcriptMarkdown({ sessionId: 'abc', entries: [
      { type: 'compaction', id: 'c1', time: 't', trigger: 'manual', status: 'COMPRESSED', originalTokenCount: 9120, newTokenCount: 2310, undone: false,
        snapshot: '<state_snapshot>\n  <overall_goal>Fix the CSV parser</overall_goal>\n</state_snapshot>' },
    ] });
    assert.match(md, /Compaction\*\* \(manual\) — 9,120 → 2,310 tokens/);
    assert.match(md, /<overall_goal>Fix the CSV parser<\/overall_goal>/);
  });
});
