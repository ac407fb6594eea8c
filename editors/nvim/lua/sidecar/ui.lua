-- User-facing reports: short notices that never wait behind a Press-ENTER prompt, compaction progress and results.
local compat = require('sidecar.compat')
local state = require('sidecar.state')
local protocol = require('sidecar.protocol')

local M = {}

local COMPRESS_TITLE = protocol.progress.compress
local DEDUPE_MS = 10000

--- `text` cut to `width` screen cells (with … when cut).
function M.fit(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local n = vim.fn.strchars(text)
  local cut = vim.fn.strcharpart(text, 0, math.max(width - 1, 1))
  while n > 1 and vim.fn.strdisplaywidth(cut) > width - 1 do
    n = n - 1
    cut = vim.fn.strcharpart(cut, 0, vim.fn.strchars(cut) - 1)
  end
  return cut .. '…'
end

--- A shortened notice's first line: an MCP server's failure ("MCP server 'NAME' (COMMAND) failed: WHY") without
--- its command, so that the name and the start of the error fit (the chat and :SidecarMcp keep the command). Other
--- text, parenthesised session ids and error codes included, is left as it is.
local function without_mcp_command(line)
  local head, rest = line:match("^(sidecar: MCP server '.-') %(.-%) (failed: .*)$")
  if head == nil then
    return line
  end
  return head .. ' ' .. rest
end

--- The command-line notice of `msg` in `room` cells, and whether it was shortened (the whole text then goes to the
--- chat).
function M.notice(msg, room)
  local line = 'sidecar: ' .. msg
  if not msg:find('\n', 1, true) and vim.fn.strdisplaywidth(line) <= room then
    return line, false
  end
  local more = ' (:SidecarChat shows all)'
  local first = without_mcp_command(line:match('^[^\n]*'))
  return M.fit(first, math.max(room - vim.fn.strdisplaywidth(more), 10)) .. more, true
end

--- Tell the user something: one line that fits the command line goes to vim.notify; a longer text is shortened
--- there (a message longer than the command line waits behind a Press-ENTER prompt) and shown whole in the chat.
--- Returns true when the text went to the chat.
function M.tell(msg, level)
  msg = tostring(msg or '')
  local room = math.max((tonumber(vim.v.echospace) or 80) - 1, 20)
  local line, shortened = M.notice(msg, room)
  vim.notify(line, level or vim.log.levels.INFO)
  if shortened then
    require('sidecar.chat').note(msg)
  end
  return shortened
end

--- $/progress from the server (begin/report/end of a work-done progress). The statusline shows that a compaction
--- runs; the chat says where it happened; the command line only its steps (one line each, never a prompt).
function M.on_progress(p, kind)
  if p.title ~= COMPRESS_TITLE then
    return
  end
  if kind == 'begin' then
    require('sidecar.chat').note(COMPRESS_TITLE .. '…')
  elseif kind == 'report' and p.message then
    local room = math.max((tonumber(vim.v.echospace) or 80) - 1, 20)
    vim.api.nvim_echo({ { M.fit('sidecar: ' .. COMPRESS_TITLE .. ': ' .. p.message, room), 'MoreMsg' } }, false, {})
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
  if not M.tell(result.message or tostring(result.status), level_for(result.status)) then
    require('sidecar.chat').note(result.message or tostring(result.status))
  end
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
      M.tell(err.message or 'already compressing', vim.log.levels.WARN)
    else
      M.tell('compression failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    return
  end
  if type(result) == 'table' then
    show(result)
  end
end

return M
