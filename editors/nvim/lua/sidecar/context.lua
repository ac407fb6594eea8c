-- IDE context: which real files are open, the active one, its cursor (1-based) and selection,
-- sent to the sidecar as sidecar/ideContext, debounced.
local compat = require('sidecar.compat')
local state = require('sidecar.state')
local protocol = require('sidecar.protocol')

local M = {}

local files = {} -- bufnr -> {path, timestamp, cursor = {line, character}?}
local active = nil -- bufnr of the active file (the last real file that had focus)
local selection = nil -- {buf, text} while text is selected in the active file
local timer = nil
local last_sent = nil
local group = nil

local function now_ms()
  local s, us = compat.uv.gettimeofday()
  return s * 1000 + math.floor(us / 1000)
end

local function opts()
  return (state.cfg and state.cfg.ide_context) or require('sidecar.config').defaults.ide_context
end

--- A buffer backed by a real file on disk (not a scratch, help, terminal, URI or chat buffer).
function M.real_file(buf)
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return nil
  end
  if vim.bo[buf].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  local path = vim.fn.fnamemodify(name, ':p')
  local stat = compat.uv.fs_stat(path)
  if not stat or stat.type ~= 'file' then
    return nil
  end
  return path
end

local function clamp_col(line, col)
  if col < 1 then
    return 1
  end
  if col > #line then
    return #line
  end
  return col
end

--- Byte length of the UTF-8 character starting at byte `col` (1-based) of `line`.
local function char_len(line, col)
  local b = line:byte(col)
  if not b then
    return 0
  end
  if b >= 0xF0 then
    return 4
  elseif b >= 0xE0 then
    return 3
  elseif b >= 0xC0 then
    return 2
  end
  return 1
end

--- Text of a region: `s`, `e` = {line, col} (1-based, inclusive, any order); mode 'v', 'V' or CTRL-V.
function M.region_text(buf, s, e, mode)
  if s[1] > e[1] or (s[1] == e[1] and s[2] > e[2]) then
    s, e = e, s
  end
  local lines = vim.api.nvim_buf_get_lines(buf, s[1] - 1, e[1], false)
  if #lines == 0 then
    return ''
  end
  if mode == 'V' then
    return table.concat(lines, '\n')
  end
  if mode == '\22' then
    local c1, c2 = math.min(s[2], e[2]), math.max(s[2], e[2])
    local out = {}
    for i, line in ipairs(lines) do
      if #line >= c1 then
        local last = clamp_col(line, c2)
        out[i] = line:sub(c1, last + char_len(line, last) - 1)
      else
        out[i] = ''
      end
    end
    return table.concat(out, '\n')
  end
  local first, last = lines[1], lines[#lines]
  local scol = clamp_col(first, s[2])
  local ecol = clamp_col(last, e[2])
  local eend = ecol + math.max(char_len(last, ecol), 1) - 1
  if #lines == 1 then
    return first:sub(scol, eend)
  end
  lines[1] = first:sub(scol)
  lines[#lines] = last:sub(1, eend)
  return table.concat(lines, '\n')
end

local function cursor_of(win)
  local pos = vim.api.nvim_win_get_cursor(win)
  local buf = vim.api.nvim_win_get_buf(win)
  local line = vim.api.nvim_buf_get_lines(buf, pos[1] - 1, pos[1], false)[1] or ''
  return { line = pos[1], character = compat.utf16_index(line, pos[2]) + 1 }
end

local function is_visual(mode)
  return mode == 'v' or mode == 'V' or mode == '\22'
end

local function touch(buf)
  local path = M.real_file(buf)
  if not path then
    return false
  end
  local f = files[buf]
  if not f or f.path ~= path then
    f = { path = path }
    files[buf] = f
  end
  f.timestamp = now_ms()
  return true
end

--- Update the record of the current buffer from the editor state.
function M.capture()
  local buf = vim.api.nvim_get_current_buf()
  if not files[buf] or files[buf].path ~= M.real_file(buf) then
    if not touch(buf) then
      return
    end
  end
  if active ~= buf then
    active = buf
    files[buf].timestamp = now_ms()
  end
  local win = vim.api.nvim_get_current_win()
  files[buf].cursor = cursor_of(win)
  local mode = vim.api.nvim_get_mode().mode
  if is_visual(mode) then
    local v = vim.fn.getpos('v')
    local c = vim.fn.getpos('.')
    selection = { buf = buf, text = M.region_text(buf, { v[2], v[3] }, { c[2], c[3] }, mode) }
  elseif mode:sub(1, 1) ~= 'c' then
    -- Leaving Visual mode for the command line keeps the selection (":'<,'>SidecarSend …").
    selection = nil
  end
end

--- Use the given lines (or the last Visual selection when they match '< and '>) as the selection.
function M.set_selection_from_range(line1, line2)
  local buf = vim.api.nvim_get_current_buf()
  if not M.real_file(buf) then
    return
  end
  M.capture()
  local s, e = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  local text
  if s[2] == line1 and e[2] == line2 and s[2] > 0 then
    local mode = vim.fn.visualmode()
    text = M.region_text(buf, { s[2], s[3] }, { e[2], e[3] }, mode ~= '' and mode or 'v')
  else
    text = table.concat(vim.api.nvim_buf_get_lines(buf, line1 - 1, line2, false), '\n')
  end
  selection = { buf = buf, text = text }
end

function M.forget(buf)
  files[buf] = nil
  if active == buf then
    active = nil
  end
  if selection and selection.buf == buf then
    selection = nil
  end
end

--- The sidecar/ideContext params for the current state.
function M.payload()
  local o = opts()
  local list = {}
  for buf, f in pairs(files) do
    if vim.api.nvim_buf_is_valid(buf) and f.path then
      list[#list + 1] = { buf = buf, f = f }
    end
  end
  table.sort(list, function(a, b)
    if (a.buf == active) ~= (b.buf == active) then
      return a.buf == active
    end
    if a.f.timestamp ~= b.f.timestamp then
      return a.f.timestamp > b.f.timestamp
    end
    return a.f.path < b.f.path
  end)
  local open = {}
  for i, item in ipairs(list) do
    if i > (o.max_files or 10) then
      break
    end
    local entry = { path = item.f.path, timestamp = item.f.timestamp }
    if item.buf == active then
      entry.isActive = true
      entry.cursor = item.f.cursor
      if selection and selection.buf == active and selection.text ~= '' then
        local text = selection.text
        local max = o.max_selected_bytes or 16384
        if #text > max then
          text = text:sub(1, max)
        end
        entry.selectedText = text
      end
    end
    open[#open + 1] = entry
  end
  return { openFiles = open }
end

--- Send the context now if it changed since the last send (or always with force).
function M.flush(force)
  if timer then
    timer:stop()
  end
  if not opts().enabled then
    return false
  end
  local client = require('sidecar.client')
  if not client.running() then
    return false
  end
  local payload = M.payload()
  local encoded = vim.json.encode(payload)
  if not force and encoded == last_sent then
    return false
  end
  if client.notify(protocol.method.ideContext, payload) then
    last_sent = encoded
    return true
  end
  return false
end

--- The server lost what we sent (restart): send everything again on the next flush.
function M.reset_sent()
  last_sent = nil
end

-- Counts the events that (re)started the wait: a flush the timer already handed to vim.schedule before a newer
-- event came is stale (the debounce restarted) and must not send in the middle of a burst.
local generation = 0

local function schedule_flush()
  local delay = opts().debounce_ms or 50
  if not timer then
    timer = compat.uv.new_timer()
  end
  generation = generation + 1
  local mine = generation
  timer:stop()
  timer:start(delay, 0, function()
    vim.schedule(function()
      if mine ~= generation then
        return
      end
      -- While a turn runs, its request is built from the context sent with its message: changes
      -- made meanwhile (the cursor leaving a selection...) wait until the turn is over.
      if (state.turns_in_flight or 0) == 0 then
        M.flush(false)
      end
    end)
  end)
end

local function on_event(ev)
  local ok, err = pcall(function()
    if ev.event == 'BufDelete' or ev.event == 'BufWipeout' then
      M.forget(ev.buf)
    else
      M.capture()
    end
  end)
  if not ok then
    vim.schedule(function()
      vim.notify('sidecar: IDE context: ' .. tostring(err), vim.log.levels.DEBUG)
    end)
  end
  schedule_flush()
end

--- Seed with the listed real-file buffers and install the autocmds.
function M.enable()
  if group then
    return
  end
  for _, info in ipairs(vim.fn.getbufinfo({ buflisted = 1 })) do
    local path = M.real_file(info.bufnr)
    if path then
      local used = tonumber(info.lastused) or 0
      files[info.bufnr] = { path = path, timestamp = used > 0 and used * 1000 or now_ms() }
    end
  end
  M.capture()
  group = vim.api.nvim_create_augroup('SidecarContext', { clear = true })
  vim.api.nvim_create_autocmd(
    { 'BufEnter', 'BufDelete', 'BufWipeout', 'BufFilePost', 'CursorMoved', 'CursorMovedI', 'ModeChanged' },
    { group = group, callback = on_event }
  )
end

function M.disable()
  if group then
    vim.api.nvim_del_augroup_by_id(group)
    group = nil
  end
  if timer then
    timer:stop()
  end
end

-- For tests.
function M._state()
  return { files = files, active = active, selection = selection, last_sent = last_sent }
end

return M
