// Time the reference (@google/gemini-cli-core) on the benchmark input files: split point, token estimate, truncation.
// Usage: node reference.mjs <package-dir> <request.json>  -> JSON on stdout.
// Request: {"split": {"files": [path...], "repeat": n}, "truncate": {"file": path, "repeat": n, "dir": tmpdir}}
// Each file holds a JSON list of Gemini contents. Times are milliseconds per run (process.hrtime).
import { readFileSync, rmSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [pkgDir, requestFile] = process.argv.slice(2);
const load = (rel) => import(pathToFileURL(path.join(pkgDir, 'dist/src', rel)).href);
const { findCompressSplitPoint, ChatCompressionService } = await load('context/chatCompressionService.js');
const { estimateTokenCountSync } = await load('utils/tokenCalculation.js');

const request = JSON.parse(readFileSync(requestFile, 'utf8'));
const out = { node: process.version };
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

if (request.split) {
  out.split = {};
  for (const file of request.split.files) {
    const history = JSON.parse(readFileSync(file, 'utf8'));
    const runs = { split: [], estimate: [], both: [] };
    let split, estimate;
    for (let i = 0; i < request.split.repeat; i++) {
      const t0 = process.hrtime.bigint();
      split = findCompressSplitPoint(history, 0.7);
      const t1 = process.hrtime.bigint();
      estimate = estimateTokenCountSync(history.flatMap((c) => c.parts || []));
      runs.split.push(Number(t1 - t0) / 1e6);
      runs.estimate.push(ms(t1));
      runs.both.push(ms(t0));
    }
    out.split[file] = { split, estimate, runs };
  }
}

if (request.truncate) {
  // truncateHistoryToBudget is private: compress() on the "previous attempt failed" path runs exactly it, then
  // the token estimate of the truncated history, and returns CONTENT_TRUNCATED without calling any model.
  const { file, repeat, dir } = request.truncate;
  const history = JSON.parse(readFileSync(file, 'utf8'));
  const service = new ChatCompressionService();
  const runs = [];
  let result;
  for (let i = 0; i < repeat; i++) {
    const runDir = path.join(dir, `run-${i}`);
    mkdirSync(runDir, { recursive: true });
    let nextId = 0;
    const config = {
      getHookSystem: () => undefined,
      getCompressionThreshold: async () => 0.5,
      getNextCompressionTruncationId: () => ++nextId,
      getTruncateToolOutputThreshold: () => 40000,
      storage: { getProjectTempDir: () => runDir },
    };
    const chat = { getHistory: () => history, getLastPromptTokenCount: () => 1048576 };
    const t0 = process.hrtime.bigint();
    result = await service.compress(chat, 'bench', false, 'gemini-2.5-flash', config, true);
    runs.push(ms(t0));
    rmSync(runDir, { recursive: true, force: true });
  }
  out.truncate = { runs, status: result.info.compressionStatus, tokens: result.info.newTokenCount };
}

process.stdout.write(JSON.stringify(out));
