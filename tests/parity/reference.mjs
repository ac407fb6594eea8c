// Evaluate the reference implementation (@google/gemini-cli-core) over a batch of inputs.
// Usage: node reference.mjs <package-dir> <request.json>   -> JSON results on stdout.
// Request keys (all optional): histories, jsonLength, jsonText, split, estimate, truncate, format, fileName, alias, limit, bench.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { pathToFileURL } from 'node:url';

const [pkgDir, requestFile] = process.argv.slice(2);
const load = (rel) => import(pathToFileURL(path.join(pkgDir, 'dist/src', rel)).href);

const { findCompressSplitPoint, modelStringToModelConfigAlias, ChatCompressionService } =
  await load('context/chatCompressionService.js');
const { estimateTokenCountSync } = await load('utils/tokenCalculation.js');
const { formatTruncatedToolOutput, saveTruncatedToolOutput } = await load('utils/fileUtils.js');
const { tokenLimit } = await load('core/tokenLimits.js');

const request = JSON.parse(readFileSync(requestFile, 'utf8'));
const out = {};

const attempt = (fn) => {
  try {
    return fn();
  } catch (e) {
    return { error: String(e?.message ?? e) };
  }
};

if (request.jsonLength) out.jsonLength = request.jsonLength.map((v) => JSON.stringify(v).length);
if (request.jsonText) out.jsonText = request.jsonText.map(({ value, indent }) => JSON.stringify(value, null, indent));
if (request.histories) {
  // Per history: each content's JSON length, the split point, the flat estimate, each content's estimate.
  const evaluate = (contents, fraction, cpt) => ({
    lengths: contents.map((c) => JSON.stringify(c).length),
    split: attempt(() => findCompressSplitPoint(contents, fraction)),
    estimate: estimateTokenCountSync(contents.flatMap((c) => c.parts || []), 0, cpt),
    perContent: contents.map((c) => estimateTokenCountSync(c.parts || [])),
  });
  out.histories = request.histories.map(({ contents, dumped, fraction, cpt }) => ({
    raw: evaluate(contents, fraction, cpt),
    dumped: dumped ? evaluate(dumped, fraction, cpt) : null,
  }));
}
if (request.split) out.split = request.split.map(({ contents, fraction }) =>
  attempt(() => findCompressSplitPoint(contents, fraction)));
if (request.estimate) out.estimate = request.estimate.map(({ parts, cpt }) =>
  attempt(() => estimateTokenCountSync(parts, 0, cpt ?? 4)));
if (request.format) out.format = request.format.map(({ content, file, max }) =>
  formatTruncatedToolOutput(content, file, max));
if (request.alias) out.alias = request.alias.map((m) => modelStringToModelConfigAlias(m));
if (request.limit) out.limit = request.limit.map((m) => tokenLimit(m));

if (request.fileName) {
  // saveTruncatedToolOutput writes the file; report the name it chose.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ref-names-'));
  out.fileName = [];
  for (const { tool, id } of request.fileName) {
    const { outputFile } = await saveTruncatedToolOutput('x', tool, id, dir);
    out.fileName.push(path.basename(outputFile));
  }
  rmSync(dir, { recursive: true, force: true });
}

if (request.truncate) {
  // truncateHistoryToBudget is private: reach it through compress() on the "previously failed" path,
  // which returns the truncated history (CONTENT_TRUNCATED) without calling any model.
  const service = new ChatCompressionService();
  out.truncate = [];
  for (const { history, threshold, dir } of request.truncate) {
    let nextId = 0;
    const config = {
      getHookSystem: () => undefined,
      getCompressionThreshold: async () => 0.5,
      getNextCompressionTruncationId: () => ++nextId,
      getTruncateToolOutputThreshold: () => threshold,
      storage: { getProjectTempDir: () => dir },
    };
    const chat = { getHistory: () => history, getLastPromptTokenCount: () => Number.MAX_SAFE_INTEGER };
    const result = await service.compress(chat, 'parity', false, 'gemini-2.5-pro', config, true);
    out.truncate.push({
      history: result.newHistory === null ? null : JSON.stringify(result.newHistory),
      status: result.info.compressionStatus,
      tokens: result.info.newTokenCount,
    });
  }
}

if (request.bench) {
  const { history, repeat } = request.bench;
  const time = (fn) => {
    const runs = [];
    let value;
    for (let i = 0; i < repeat; i++) {
      const t0 = process.hrtime.bigint();
      value = fn();
      runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const sorted = [...runs].sort((a, b) => a - b);
    return { first: runs[0], min: sorted[0], median: sorted[Math.floor(runs.length / 2)], value };
  };
  out.bench = {
    split: time(() => findCompressSplitPoint(history, 0.7)),
    estimate: time(() => estimateTokenCountSync(history.flatMap((c) => c.parts || []))),
  };
}

process.stdout.write(JSON.stringify(out));
