/** "Sidecar: Run Doctor": the real `sidecar doctor --json`, fed the editor's settings on stdin, parsed and rendered. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { doctorArgs, doctorMarkdown, parseDoctorReport, runDoctor } from '../src/doctorReport';
import { projectPython, tempHome } from './support/sidecar';

const KEY = 'AIzaVsCodeDoctorCanary0123456789abcd';

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, SIDECAR_HOME: tempHome(), GCE_METADATA_HOST: '127.0.0.1:9', GCE_METADATA_IP: '127.0.0.1:9' };
  for (const k of ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GEMINI_BASE_URL', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_CLOUD_PROJECT',
    'GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_VERTEX_BASE_URL']) delete env[k];
  env.CLOUDSDK_CONFIG = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-gcloud-'));
  return { ...env, ...extra };
}

describe('Sidecar: Run Doctor', { timeout: 60_000 }, () => {
  it('names the editor and passes the settings on stdin, never on the command line', () => {
    assert.deepEqual(doctorArgs(['-m', 'sidecar'], { project: '/w', trusted: true, online: true }),
      ['-m', 'sidecar', 'doctor', '--json', '--editor', 'vscode', '--editor-settings', '-', '--project', '/w', '--trusted', '--online']);
    assert.deepEqual(doctorArgs([], { trusted: false, online: false }), ['doctor', '--json', '--editor', 'vscode', '--editor-settings', '-']);
  });

  it('shows what the server would use with the editor\'s key, and never the key', async () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-doctor-ws-'));
    const report = await runDoctor(projectPython(), doctorArgs(['-m', 'sidecar'], { project, trusted: false, online: false }),
      { apiKey: KEY, baseUrl: 'http://127.0.0.1:9' }, cleanEnv({}), project);
    assert.equal(report.ok, true);
    assert.equal(report.frontEnd, 'editor');
    assert.deepEqual(report.backend, { kind: 'gemini', label: 'Gemini API at http://127.0.0.1:9', ok: true, errorKind: null, message: null });
    const md = doctorMarkdown(report, { online: false });
    assert.ok(md.includes('**All good.**') && md.includes("an API key (from sidecar.apiKey in the editor's settings)"), md);
    assert.ok(!md.includes(KEY) && !JSON.stringify(report).includes(KEY));
  });

  it('names a Vertex AI setup that cannot work, with the next step', async () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecar-doctor-ws-'));
    const report = await runDoctor(projectPython(), doctorArgs(['-m', 'sidecar'], { project, trusted: false, online: false }),
      { backend: 'vertex' }, cleanEnv({}), project);
    assert.equal(report.ok, false);
    assert.equal(report.backend?.errorKind, 'credentials');
    const md = doctorMarkdown(report, { online: false });
    assert.ok(md.includes('❌ **adc**') && md.includes('→ run `gcloud auth application-default login`'), md);
    assert.ok(md.includes('the first message would fail (credentials)'), md);
  });

  it('shows the server\'s words without Markdown escapes and counts problems in words', () => {
    const md = doctorMarkdown({ version: '1.0', ok: false, frontEnd: 'vscode', backend: null, checks: [
      { name: 'api_key', ok: false, detail: 'GEMINI_API_KEY is not set', hint: 'run `Sidecar: Set API Key` <or> set *GEMINI_API_KEY*' },
    ] }, { online: false });
    assert.ok(md.includes('**api_key**: GEMINI_API_KEY is not set') && !md.includes('\\'), md);
    assert.ok(md.includes('**1 problem found.**') && !md.includes('(s)'), md);
  });

  it('refuses output that is not a report, in words', () => {
    assert.throws(() => parseDoctorReport('usage: sidecar [-h]'), /did not answer with a report/);
    assert.throws(() => parseDoctorReport('{"foo": 1}'), /not a report/);
  });
});
