-- :SidecarStatus — what the statusline's short text stands for: exact counts, model, backend, cached tokens,
-- the compaction threshold, where the count comes from, background compaction and the last compaction.
local state = require('sidecar.state')
local thousands = require('sidecar.transcript').thousands

local M = {}

local SOURCES = {
  newSession = 'estimate of the empty conversation (system prompt and tools; nothing sent yet)',
  undo = 'estimate after undoing a compaction',
  resume = 'estimate of the resumed session',
}

function M.source(usage)
  if usage.source == 'api' then
    return 'api (reported by Gemini for the last request)'
  end
  return SOURCES[usage.estimateReason] or 'estimate (the history changed since Gemini last counted it)'
end

local LABELS = {
  COMPRESSED = 'compressed',
  CONTENT_TRUNCATED = 'old tool outputs truncated',
  NOOP = 'nothing to compress',
  COMPRESSION_FAILED_INFLATED_TOKEN_COUNT = 'not beneficial: the summary was not smaller',
  COMPRESSION_FAILED_INSUFFICIENT_REDUCTION = 'not kept: it saved too little',
  COMPRESSION_FAILED_TOKEN_COUNT_ERROR = 'not kept: could not count tokens',
  COMPRESSION_FAILED_EMPTY_SUMMARY = 'not kept: empty summary',
}

--- The lines of :SidecarStatus for a TokenUsage and the last sidecar/compressed (either may be nil).
function M.lines(usage, last)
  local out = {}
  local status = state.status
  out[#out + 1] = string.format('sidecar: %s (session %s)', tostring(status), tostring(state.session_id or 'none'))
  if not usage then
    out[#out + 1] = 'no token usage yet'
    return out
  end
  local threshold = tonumber(usage.compressionThreshold) or 0
  out[#out + 1] = string.format(
    'Tokens: %s / %s (%.1f%% of the context window)',
    thousands(usage.promptTokenCount),
    thousands(usage.tokenLimit),
    tonumber(usage.percentUsed) or 0
  )
  out[#out + 1] = 'Model: ' .. tostring(usage.model)
  out[#out + 1] = 'Backend: ' .. tostring(usage.backend or 'unknown')
  if type(usage.cachedTokenCount) == 'number' and usage.cachedTokenCount > 0 then
    out[#out + 1] = string.format('Cached: %s tokens of the last prompt', thousands(usage.cachedTokenCount))
  end
  out[#out + 1] = string.format(
    'Auto-compress at: %s%% (%s tokens)',
    tostring(math.floor(threshold * 1000 + 0.5) / 10),
    thousands(math.floor((tonumber(usage.tokenLimit) or 0) * threshold))
  )
  if type(usage.autoCompactionPausedUntil) == 'number' then
    out[#out + 1] = string.format(
      'Auto-compaction: paused after undo until %s tokens, or until you compress',
      thousands(usage.autoCompactionPausedUntil)
    )
  end
  out[#out + 1] = 'Source: ' .. M.source(usage)
  if usage.summaryPreparation == 'preparing' then
    out[#out + 1] = 'Next compaction: preparing summary in the background'
  elseif usage.summaryPreparation == 'ready' then
    out[#out + 1] = 'Next compaction: summary ready (applied at the threshold without waiting)'
  end
  if last then
    out[#out + 1] = string.format(
      'Last compaction: %s, %s → %s tokens (%s)',
      LABELS[last.status] or tostring(last.status),
      thousands(last.originalTokenCount),
      thousands(last.newTokenCount),
      tostring(last.trigger or 'manual')
    )
  else
    out[#out + 1] = 'Last compaction: none since Neovim started'
  end
  if state.memory then
    out[#out + 1] = require('sidecar.memory').summary(state.memory)
  end
  return out
end

--- Echo the lines (the user asked: like :ls, a long report may end in a Press-ENTER prompt).
function M.show()
  local chunks = {}
  for i, l in ipairs(M.lines(state.usage, state.last_compressed)) do
    chunks[#chunks + 1] = { (i > 1 and '\n' or '') .. l, i == 1 and 'Title' or 'Normal' }
  end
  vim.api.nvim_echo(chunks, true, {})
end

return M
