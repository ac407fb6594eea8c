-- :SidecarContext and :SidecarModel — what fills the context window (a float with a bar per category: <CR> on a
-- memory file opens it, on an MCP server lists the servers; c compacts now, f with a focus, p postpones once), a
-- statusline-friendly summary (require('sidecar').context()), and the model picked with vim.ui.select.
local client = require('sidecar.client')
local protocol = require('sidecar.protocol')
local state = require('sidecar.state')
local thousands = require('sidecar.transcript').thousands

local M = {}

M.BAR = 20 -- cells of the widest bar (a row's share of the window)
M.BUFNAME = 'sidecar://context'

local ensure = function()
  require('sidecar.lifecycle').ensure()
end

local function tell(msg, level)
  require('sidecar.ui').tell(msg, level)
end

local function percent(n, limit)
  return 100 * (tonumber(n) or 0) / math.max(tonumber(limit) or 1, 1)
end

--- One row: `label  tokens  pct  bar  source`, aligned on `width` for the label.
local function row_line(row, limit, width)
  local share = percent(row.tokens, limit)
  local cells = math.floor(share / 100 * M.BAR + 0.5)
  if cells == 0 and (tonumber(row.tokens) or 0) > 0 then
    cells = 1
  end
  local bar = string.rep('█', cells) .. string.rep('·', M.BAR - cells)
  local label = tostring(row.label)
  local pad = string.rep(' ', math.max(width - vim.fn.strdisplaywidth(label), 0))
  return string.format('%s%s %10s %5.1f%% %s %s', label, pad, thousands(row.tokens), share, bar, row.source)
end

--- The float's lines for a ContextBreakdown, and which row each line shows (line number -> row).
function M.lines(b)
  local out, rows = {}, {}
  local limit = tonumber(b.tokenLimit) or 1
  out[1] = string.format(
    'Context window: %s of %s tokens (%.1f%%, %s) — model %s, summaries by %s',
    thousands(b.promptTokens),
    thousands(limit),
    percent(b.promptTokens, limit),
    b.source == 'api' and 'counted by the API' or 'estimated',
    tostring(b.model),
    tostring(b.compressionModel)
  )
  out[2] = string.format('Compaction at %s tokens', thousands(b.thresholdTokens))
  if b.compactsAtNextMessage then
    out[2] = out[2] .. ': the next message compacts first (c: now, f: with a focus, p: postpone once)'
  elseif b.compactionPostponed then
    out[2] = out[2] .. ': postponed for the next message'
  end
  out[3] = ''
  local width = 10
  for _, row in ipairs(b.rows or {}) do
    width = math.max(width, vim.fn.strdisplaywidth(tostring(row.label)))
  end
  for _, row in ipairs(b.rows or {}) do
    out[#out + 1] = row_line(row, limit, width)
    rows[#out] = row
  end
  out[#out + 1] = ''
  out[#out + 1] =
    '<CR> open a memory file / the MCP servers · c compact · f compact with a focus · p postpone · q close'
  return out, rows
end

--- The statusline-friendly summary of the last breakdown: `ctx 12% · msgs 3.4K · tools 1.2K`, with
--- `· compacts at next message` when it does; '' before the first one. Asks for a fresh one when the usage moved.
function M.summary()
  local b = state.context_breakdown
  if state.status == 'running' and not M._asking and state.usage_seq ~= M._seq then
    M._asking, M._seq = true, state.usage_seq
    client.request(protocol.method.getContextBreakdown, vim.empty_dict(), function(err, result)
      M._asking = false
      if not err and type(result) == 'table' then
        state.context_breakdown = result
        require('sidecar.status').changed()
      end
    end)
  end
  if type(b) ~= 'table' then
    return ''
  end
  local status = require('sidecar.status')
  local by = {}
  for _, row in ipairs(b.rows or {}) do
    by[row.category] = (by[row.category] or 0) + (tonumber(row.tokens) or 0)
  end
  local tools = (by.builtinTools or 0) + (by.mcpTools or 0)
  local parts = {
    string.format('ctx %d%%', math.floor(percent(b.promptTokens, b.tokenLimit) + 0.5)),
    'msgs ' .. status.format_count((by.messages or 0) + (by.toolOutputs or 0)),
    'tools ' .. status.format_count(tools),
  }
  local usage = state.usage
  if (usage and usage.compactsAtNextMessage) or (not usage and b.compactsAtNextMessage) then
    parts[#parts + 1] = 'compacts at next message'
  end
  return table.concat(parts, ' · ')
end

local function open_row(row)
  if not row then
    return
  end
  if row.category == 'memoryFile' and type(row.target) == 'string' then
    vim.cmd('close')
    vim.cmd('edit ' .. vim.fn.fnameescape(row.target))
  elseif row.category == 'mcpTools' then
    vim.cmd('close')
    require('sidecar.mcp').run('')
  end
end

local function postpone(cb)
  client.call('postpone compaction', protocol.method.postponeCompaction, vim.empty_dict(), cb, function(result)
    tell(result.message, result.postponed and vim.log.levels.INFO or vim.log.levels.WARN)
    if cb then
      cb(nil, result)
    end
  end)
end
M.postpone = postpone

--- Show the float for a breakdown (focused; q or <Esc> closes it). Returns its window and buffer.
function M.open(b)
  local lines, rows = M.lines(b)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, M.BUFNAME)
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width, vim.o.columns - 4)
  local height = math.min(#lines, math.max(vim.o.lines - vim.o.cmdheight - 4, 1))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    row = math.max(math.floor((vim.o.lines - height) / 2) - 1, 0),
    col = math.max(math.floor((vim.o.columns - width) / 2) - 1, 0),
    width = width,
    height = height,
    style = 'minimal',
    border = 'single',
  })
  local function map(key, fn)
    vim.keymap.set('n', key, fn, { buffer = buf, nowait = true, silent = true })
  end
  map('q', '<cmd>close<cr>')
  map('<Esc>', '<cmd>close<cr>')
  map('<CR>', function()
    open_row(rows[vim.api.nvim_win_get_cursor(0)[1]])
  end)
  map('c', function()
    vim.cmd('close')
    require('sidecar.actions').compress('')
  end)
  map('f', function()
    vim.cmd('close')
    vim.ui.input({ prompt = 'Focus of the summary: ' }, function(focus)
      if focus and vim.trim(focus) ~= '' then
        require('sidecar.actions').compress(focus)
      end
    end)
  end)
  map('p', function()
    vim.cmd('close')
    postpone()
  end)
  return win, buf
end

--- :SidecarContext — ask for the breakdown and show it (cb(err, breakdown) once shown).
function M.show(cb)
  ensure()
  client.call('context', protocol.method.getContextBreakdown, vim.empty_dict(), cb, function(result)
    state.context_breakdown = result
    M.open(result)
    if cb then
      cb(nil, result)
    end
  end)
end

--- How a model is listed in the picker.
function M.format_model(m)
  return string.format('%s%s — %s (%s tokens)', m.current and '● ' or '  ', m.id, m.name, thousands(m.tokenLimit))
end

--- Switch to `model` (sidecar/setModel) and say what it did.
function M.set(model, cb)
  ensure()
  client.call('select model', protocol.method.setModel, { model = model }, cb, function(result)
    tell(result.message, result.compactsAtNextMessage and vim.log.levels.WARN or vim.log.levels.INFO)
    if cb then
      cb(nil, result)
    end
  end)
end

--- :SidecarModel [name] — switch to `name`, or pick from the backend's models with vim.ui.select.
function M.pick(name, cb)
  ensure()
  if name and vim.trim(name) ~= '' then
    return M.set(vim.trim(name), cb)
  end
  client.call('list models', protocol.method.listModels, vim.empty_dict(), cb, function(listed)
    if listed.problem then
      tell('models from the known table: ' .. listed.problem, vim.log.levels.WARN)
    end
    vim.ui.select(
      listed.models or {},
      { prompt = 'Model', kind = 'sidecar.model', format_item = M.format_model },
      function(choice)
        if choice then
          M.set(choice.id, cb)
        elseif cb then
          cb({ message = 'no model chosen' })
        end
      end
    )
  end)
end

return M
