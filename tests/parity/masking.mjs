// The reference's tool-output masking over a batch of histories.
// Usage: node masking.mjs <package-dir> <request.json>  -> JSON on stdout: per case, the masked parts and their text.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { pathToFileURL } from 'node:url';

const [pkgDir, requestFile] = process.argv.slice(2);
const { ToolOutputMaskingService } = await import(
  pathToFileURL(path.join(pkgDir, 'dist/src/context/toolOutputMaskingService.js')).href
);

const request = JSON.parse(readFileSync(requestFile, 'utf8'));
const dir = mkdtempSync(path.join(os.tmpdir(), 'ref-masking-'));
const out = [];
for (const { history, config } of request.cases) {
  const cfg = {
    getToolOutputMaskingConfig: async () => config,
    storage: { getProjectTempDir: () => dir },
    getSessionId: () => 'parity',
    getUsageStatisticsEnabled: () => false,
  };
  const result = await new ToolOutputMaskingService().mask(history, cfg);
  const masked = [];
  result.newHistory.forEach((content, i) => {
    (content.parts || []).forEach((part, j) => {
      if (part !== history[i].parts[j]) masked.push({ index: i, part: j, output: part.functionResponse.response.output });
    });
  });
  out.push({ maskedCount: result.maskedCount, masked });
}
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`\n${JSON.stringify(out)}\n`);
