-- sidecar.nvim: chat with Gemini through the sidecar daemon, token usage in the statusline,
-- conversation compaction, IDE context. See :help sidecar.
local client = require('sidecar.client')
local compat = require('sidecar.compat')
local config = require('sidecar.config')
local state = require('sidecar.state')
local status = require('sidecar.status')
local protocol = require('sidecar.protocol')

local M = {}

M.state = state

local function notify(msg, level)
  vim.notify('sidecar: ' .. msg, level or vim.log.levels.INFO)
end

local function on_err(what)
  return function(err)
    notify(what .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
  end
end

--- Start the sidecar for the workspace root with the given options (see :help sidecar-setup).
function M.setup(opts)
  if state.cfg and client.get() then
    client.stop()
  end
  state.cfg = config.resolve(opts)
  state.exiting = false
  status.define_highlights()
  local group = vim.api.nvim_create_augroup('Sidecar', { clear = true })
  vim.api.nvim_create_autocmd('ColorScheme', { group = group, callback = status.define_highlights })
  vim.api.nvim_create_autocmd('VimLeavePre', {
    group = group,
    callback = function()
      state.exiting = true
    end,
  })
  local context = require('sidecar.context')
  if state.cfg.ide_context.enabled then
    context.enable()
  else
    context.disable()
  end
  client.start()
  return M
end

--- setup() with defaults when a command is used before setup().
local function ensure()
  if not state.cfg then
    M.setup({})
  elseif not client.get() and (state.status == 'stopped' or state.status == 'failed') then
    client.start({ resume = state.session_id })
  end
end

--- Send new settings (layered over the ones given to setup) with workspace/didChangeConfiguration.
function M.update_settings(settings)
  ensure()
  state.cfg.settings = config.merge(state.cfg.settings or {}, settings or {})
  return client.notify('workspace/didChangeConfiguration', { settings = { sidecar = state.cfg.settings } })
end

-- Statusline --------------------------------------------------------------------------------------

--- `✦ 45% 471K/1M` from the last sidecar/tokenUsage ('' before the first one).
--- opts.highlight: wrap in the highlight group (%#SidecarStatusWarn#…%*, `%` doubled);
--- opts.escape: only double `%` (for lualine and %{%…%}).
function M.statusline(opts)
  return status.text(opts)
end

--- Highlight group for the current usage: SidecarStatus, SidecarStatusWarn (>= the compression
--- threshold) or SidecarStatusCritical (>= 95%).
function M.statusline_hl()
  return status.group(state.usage)
end

--- A ready lualine component: sections = { lualine_x = { require('sidecar').lualine() } }.
function M.lualine()
  return {
    function()
      return status.text({ escape = true })
    end,
    color = function()
      return status.group(state.usage)
    end,
    cond = function()
      return status.text() ~= ''
    end,
  }
end

-- Chat ---------------------------------------------------------------------------------------------

function M.chat()
  ensure()
  require('sidecar.chat').open({ focus = true })
end

local current_turn = nil -- {turn, request_id}

--- Send a user message (opts.line1/line2: a range to send as the selected text).
function M.send(text, opts)
  opts = opts or {}
  ensure()
  text = vim.trim(text or '')
  if text == '' then
    notify('nothing to send', vim.log.levels.WARN)
    return
  end
  local context = require('sidecar.context')
  if opts.line1 and opts.line2 and (opts.range or 0) > 0 then
    context.set_selection_from_range(opts.line1, opts.line2)
  else
    context.capture()
  end
  -- The context must reach the server before the message it belongs to.
  context.flush(false)
  local chat = require('sidecar.chat')
  chat.ensure()
  local cfg = state.cfg.chat or {}
  if cfg.open_on_send ~= false and not chat.window() then
    chat.open({ focus = false })
  end
  local turn = chat.begin_turn(text)
  local entry = { turn = turn }
  current_turn = entry
  state.turns_in_flight = (state.turns_in_flight or 0) + 1
  local _, id = client.request(protocol.method.sendMessage, { text = text }, function(err, result)
    if current_turn == entry then
      current_turn = nil
    end
    state.turns_in_flight = math.max((state.turns_in_flight or 1) - 1, 0)
    if state.turns_in_flight == 0 then
      context.flush(false) -- what changed in the editor during the turn
    end
    if not err and type(result) == 'table' and status.accept(result.usage) then
      state.session_id = result.usage.sessionId or state.session_id
    end
    chat.finish(turn, err, result)
    if err and err.code ~= protocol.error.requestCancelled then
      notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
    end
  end)
  entry.id = id
  return turn
end

--- Cancel the running turn ($/cancelRequest).
function M.cancel()
  if current_turn and current_turn.id then
    client.cancel(current_turn.id)
  end
end

-- Compaction and sessions -----------------------------------------------------------------------

-- Every command below takes an optional cb(err, result), called after the plugin handled the answer.
local function done(cb, err, result)
  if cb then
    cb(err, result)
  end
end

function M.compress(instructions, cb)
  ensure()
  local params = vim.empty_dict()
  if instructions and vim.trim(instructions) ~= '' then
    params = { instructions = vim.trim(instructions) }
  end
  client.request(protocol.method.compress, params, function(err, result)
    require('sidecar.ui').on_compress_result(err, result)
    done(cb, err, result)
  end)
end

function M.undo_compaction(cb)
  ensure()
  client.request(protocol.method.undoCompaction, vim.empty_dict(), function(err, result)
    if err then
      on_err('undo compaction')(err)
      return done(cb, err)
    end
    local msg = result.message or (result.restored and 'compaction undone' or 'nothing to undo')
    notify(msg, result.restored and vim.log.levels.INFO or vim.log.levels.WARN)
    require('sidecar.chat').note(msg)
    done(cb, nil, result)
  end)
end

function M.new_session(cb)
  ensure()
  client.request(protocol.method.newSession, vim.empty_dict(), function(err, result)
    if err then
      on_err('new session')(err)
      return done(cb, err)
    end
    state.session_id = result.sessionId or state.session_id
    local chat = require('sidecar.chat')
    chat.clear()
    chat.note('new session ' .. tostring(result.sessionId))
    notify('new session ' .. tostring(result.sessionId))
    require('sidecar.context').reset_sent()
    require('sidecar.context').flush(true)
    done(cb, nil, result)
  end)
end

local function load_into_chat(session_id, cb)
  client.request(protocol.method.getTranscript, { sessionId = session_id }, function(err, t)
    if err then
      on_err('transcript')(err)
      return done(cb, err)
    end
    require('sidecar.chat').load(t)
    done(cb, nil, t)
  end)
end

--- Resume a session: the given id, or one picked with vim.ui.select from sidecar/listSessions.
--- cb gets the resumeSession answer once the chat holds the session's transcript.
function M.resume(session_id, cb)
  ensure()
  local function resume(id)
    client.request(protocol.method.resumeSession, { sessionId = id }, function(err, result)
      if err then
        on_err('resume')(err)
        return done(cb, err)
      end
      state.session_id = result.sessionId or id
      if result.forked and result.message then
        -- open in another window: this one continues in a new branch (both keep every message)
        notify(result.message, vim.log.levels.WARN)
      else
        notify(string.format('resumed session %s (%s messages)', state.session_id, tostring(result.messageCount)))
      end
      require('sidecar.context').reset_sent()
      require('sidecar.context').flush(true)
      load_into_chat(state.session_id, function()
        if result.forked and result.message then
          require('sidecar.chat').note(result.message)
        end
        done(cb, nil, result)
      end)
    end)
  end
  if session_id and session_id ~= '' then
    return resume(session_id)
  end
  client.request(protocol.method.listSessions, vim.empty_dict(), function(err, sessions)
    if err then
      on_err('list sessions')(err)
      return done(cb, err)
    end
    if type(sessions) ~= 'table' or #sessions == 0 then
      notify('no sessions to resume', vim.log.levels.WARN)
      return done(cb, { message = 'no sessions' })
    end
    vim.ui.select(sessions, {
      prompt = 'Resume sidecar session',
      kind = 'sidecar.session',
      format_item = function(s)
        return string.format(
          '%s  %s  (%d messages%s)%s',
          tostring(s.lastUpdated or s.startTime or ''),
          tostring(s.title or s.sessionId),
          tonumber(s.messageCount) or 0,
          (tonumber(s.compactionCount) or 0) > 0 and (', ' .. s.compactionCount .. ' compactions') or '',
          s.sessionId == state.session_id and '  [current]' or ''
        )
      end,
    }, function(choice)
      if choice then
        resume(choice.sessionId)
      else
        done(cb, { message = 'no session chosen' })
      end
    end)
  end)
end

function M.transcript(session_id, cb)
  ensure()
  local params = (session_id and session_id ~= '') and { sessionId = session_id } or vim.empty_dict()
  client.request(protocol.method.getTranscript, params, function(err, t)
    if err then
      on_err('transcript')(err)
      return done(cb, err)
    end
    local buf = require('sidecar.transcript').show(t)
    done(cb, nil, { transcript = t, bufnr = buf })
  end)
end

function M.restart()
  ensure()
  return client.restart()
end

function M.stop()
  client.stop()
end

--- Ask the server for the current usage (it is also pushed with sidecar/tokenUsage).
function M.refresh_usage(cb)
  client.request(protocol.method.getTokenUsage, vim.empty_dict(), function(err, usage)
    if not err then
      status.accept(usage)
    end
    if cb then
      cb(err, usage)
    end
  end)
end

-- Branches, rewind, names, trash and pins: sidecar/sessions.lua
local sessions = require('sidecar.sessions')
sessions.bind({ ensure = ensure, notify = notify, on_err = on_err, done = done, load_into_chat = load_into_chat })
M.fork = sessions.fork
M.rewind = sessions.rewind
M.rename = sessions.rename
M.delete = sessions.delete
M.restore = sessions.restore
M.pin = sessions.pin
M.unpin = sessions.unpin
M.pins = sessions.pins

M.version = compat.version_string
M.client = client

return M
