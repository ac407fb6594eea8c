// The reference's context management (@google/gemini-cli-core) over a recorded session, its requests sent to a fake.
// Usage: node long_session.mjs <package-dir> <session.json>  -> JSON on stdout.
// session.json: {url, key, model, threshold, tmp, system, tools, head: [content...], steps: [{model, user}...]}.
// Per step, as GeminiClient.processTurn does before each model request: the model's previous reply joins the
// history, tryCompressChat (ChatCompressionService.compress: threshold, truncation, split, two summary calls,
// which go to the fake), then tryMaskToolOutputs (ToolOutputMaskingService.mask), then the request (history + the
// new user content) is POSTed to the fake, whose promptTokenCount becomes the last prompt token count.
import { readFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [pkgDir, sessionFile] = process.argv.slice(2);
const load = (rel) => import(pathToFileURL(path.join(pkgDir, 'dist/src', rel)).href);
const { ChatCompressionService } = await load('context/chatCompressionService.js');
const { ToolOutputMaskingService } = await load('context/toolOutputMaskingService.js');
const { CompressionStatus } = await load('core/turn.js');

const session = JSON.parse(readFileSync(sessionFile, 'utf8'));
const { url, key, model, threshold, tmp, system, tools, head, steps } = session;

// Masked outputs are saved under a name with Math.random() in it: seeded, so that every run sends the same bytes.
let seed = 42;
Math.random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

async function post(body) {
  const response = await fetch(`${url}/v1beta/models/${model}:generateContent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`fake refused a request: ${JSON.stringify(answer).slice(0, 500)}`);
  return answer;
}

let truncationId = 0;
const known = {
  getHookSystem: () => undefined,
  getCompressionThreshold: async () => threshold,
  getNextCompressionTruncationId: () => ++truncationId,
  getTruncateToolOutputThreshold: () => 40000,
  getIncludeDirectoryTree: () => false,
  getSessionMemory: () => '',
  getSessionId: () => 'bench',
  getContentGenerator: () => ({}),
  getToolOutputMaskingConfig: async () => ({
    protectionThresholdTokens: 50000,
    minPrunableThresholdTokens: 30000,
    protectLatestTurn: true,
  }),
  storage: { getProjectTempDir: () => tmp },
  getBaseLlmClient: () => ({
    // The summary calls: the same request shape the reference sends, answered by the fake's summary builder.
    generateContent: async (req) => {
      const answer = await post({ contents: req.contents, systemInstruction: { parts: [req.systemInstruction] } });
      return answer;
    },
  }),
};
// Telemetry and the like ask the config for more: answer undefined / off.
const config = new Proxy(known, {
  get: (target, prop) => (prop in target ? target[prop] : typeof prop === 'string' ? () => undefined : undefined),
});

mkdirSync(tmp, { recursive: true });
const compression = new ChatCompressionService();
const masking = new ToolOutputMaskingService();
let history = [...head];
let lastPromptTokenCount = 0;
let hasFailedCompressionAttempt = false;
const compactions = [];
let masked = 0;
let maskedTokens = 0;

for (const step of steps) {
  if (step.model) history.push(step.model);
  const chat = { getHistory: () => history, getLastPromptTokenCount: () => lastPromptTokenCount };
  const { newHistory, info } = await compression.compress(
    chat, 'bench', false, model, config, hasFailedCompressionAttempt);
  const status = info.compressionStatus;
  if (status !== CompressionStatus.NOOP) compactions.push(CompressionStatus[status]);
  if (status === CompressionStatus.COMPRESSED && newHistory) {
    history = [...head, ...newHistory]; // startChat(newHistory) puts the environment context first again
    lastPromptTokenCount = info.newTokenCount;
  } else if (status === CompressionStatus.COMPRESSION_FAILED_INFLATED_TOKEN_COUNT) {
    hasFailedCompressionAttempt = true;
  } else if (status === CompressionStatus.CONTENT_TRUNCATED && newHistory) {
    history = newHistory;
  }
  const result = await masking.mask(history, config);
  if (result.maskedCount > 0) {
    history = result.newHistory;
    masked += result.maskedCount;
    maskedTokens += result.tokensSaved;
  }
  const answer = await post({ contents: [...history, step.user], systemInstruction: system, tools });
  lastPromptTokenCount = answer.usageMetadata?.promptTokenCount ?? 0;
  history.push(step.user);
}

process.stdout.write("\n" + JSON.stringify({ compactions, masked, maskedTokens, contents: history.length }));
