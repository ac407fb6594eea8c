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
  require('sidecar.ui').tell(msg, level)
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

--- setup() with defaults when a command is used before setup(); start again a server that stopped.
function M.ensure()
  if not state.cfg then
    M.setup({})
  elseif not client.get() and (state.status == 'stopped' or state.status == 'failed') then
    client.start({ resume = state.session_id })
  end
end

--- Send new settings (layered over the ones given to setup) with workspace/didChangeConfiguration.
function M.update_settings(settings)
  M.ensure()
  state.cfg.settings = config.merge(state.cfg.settings or {}, settings or {})
  local section = client.as_object(state.cfg.settings)
  return client.notify('workspace/didChangeConfiguration', { settings = { sidecar = section } })
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
  M.ensure()
  require('sidecar.chat').open({ focus = true })
end

local current_turn = nil -- {turn, request_id}

--- Send a user message (opts.line1/line2: a range to send as the selected text).
function M.send(text, opts)
  opts = opts or {}
  M.ensure()
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
    -- A model error was already told by the server (window/showMessage) and is in the chat: not a third time.
    if err and err.code ~= protocol.error.requestCancelled and err.code ~= protocol.error.modelError then
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

-- Compaction, sessions, transcripts, pins: sidecar/actions.lua ---------------------------------------

local actions = require('sidecar.actions')
M.compress = actions.compress
M.undo_compaction = actions.undo_compaction
M.new_session = actions.new_session
M.resume = actions.resume
M.transcript = actions.transcript
M.fork = actions.fork
M.rewind = actions.rewind
M.rename = actions.rename
M.delete = actions.delete
M.restore = actions.restore
M.pin = actions.pin
M.unpin = actions.unpin
M.pins = actions.pins

--- :SidecarStatus: what the statusline's short text stands for.
function M.status()
  require('sidecar.status_detail').show()
end

function M.restart()
  M.ensure()
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

M.version = compat.version_string
M.client = client

return M
