-- User-facing reports: compaction progress and results.
local compat = require('sidecar.compat')
local state = require('sidecar.state')
local protocol = require('sidecar.protocol')

local M = {}

local COMPRESS_TITLE = protocol.progress.compress
local DEDUPE_MS = 10000

local function notify(msg, level)
  vim.notify('sidecar: ' .. msg, level or vim.log.levels.INFO)
end

--- $/progress from the server (begin/report/end of a work-done progress).
function M.on_progress(p, kind)
  if p.title ~= COMPRESS_TITLE then
    return
  end
  if kind == 'begin' then
    notify(COMPRESS_TITLE .. '…')
    require('sidecar.chat').note(COMPRESS_TITLE .. '…')
  elseif kind == 'report' and p.message then
    vim.api.nvim_echo({ { 'sidecar: ' .. COMPRESS_TITLE .. ': ' .. p.message, 'MoreMsg' } }, false, {})
  end
end

local function level_for(status_)
  if status_ == 'COMPRESSED' or status_ == 'NOOP' or status_ == 'CONTENT_TRUNCATED' then
    return vim.log.levels.INFO
  end
  return vim.log.levels.WARN
end

local function show(result)
  local last = state.last_compressed
  local now = compat.uv.now()
  if last and last.message == result.message and now - last.at < DEDUPE_MS then
    return -- the notification and the request answer carry the same message
  end
  state.last_compressed = vim.tbl_extend('force', {}, result, { at = now })
  notify(result.message or tostring(result.status), level_for(result.status))
  require('sidecar.chat').note(result.message or tostring(result.status))
end

--- sidecar/compressed notification (manual or automatic compaction).
function M.on_compressed(params)
  if type(params) ~= 'table' then
    return
  end
  show(params)
  require('sidecar.status').changed()
end

--- The sidecar/compress request answered.
function M.on_compress_result(err, result)
  if err then
    if err.code == protocol.error.busy then
      notify(err.message or 'already compressing', vim.log.levels.WARN)
    else
      notify('compression failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    return
  end
  if type(result) == 'table' then
    show(result)
  end
end

return M
