-- sidecar.nvim: chat with Gemini through the sidecar daemon, token usage in the statusline,
-- conversation compaction, IDE context. See :help sidecar.
-- This module is the composition root: it gives the client its handlers and the chat its input, and the features
-- below it require sidecar.lifecycle, never this module (test_architecture.lua: no require cycle).
local actions = require('sidecar.actions')
local chat = require('sidecar.chat')
local client = require('sidecar.client')
local compat = require('sidecar.compat')
local config = require('sidecar.config')
local context = require('sidecar.context')
local lifecycle = require('sidecar.lifecycle')
local protocol = require('sidecar.protocol')
local state = require('sidecar.state')
local status = require('sidecar.status')
local turn = require('sidecar.turn')

client.handlers = require('sidecar.handlers')
client.on_running = function()
  require('sidecar.documents').attach_all()
  context.reset_sent()
  context.flush(true)
end
chat.on_submit = turn.submit
chat.on_interrupt = turn.cancel

local M = {}

M.state = state

--- Start the sidecar for the workspace root with the given options (see :help sidecar-setup).
function M.setup(opts)
  lifecycle.setup(opts)
  return M
end

--- setup() with defaults when a command is used before setup(); start again a server that stopped.
M.ensure = lifecycle.ensure

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
  chat.open({ focus = true })
end

--- Send a user message (opts.line1/line2: a range to send as the selected text).
M.send = turn.send

--- Cancel the running turn ($/cancelRequest).
M.cancel = turn.cancel

-- Compaction, sessions, transcripts, pins: sidecar/actions.lua ---------------------------------------

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

--- A statusline-friendly summary of what fills the window: `ctx 12% · msgs 3.4K · tools 1.2K` (+ `· compacts at
--- next message`); '' before the first breakdown. It asks the server for a fresh one when the usage moved.
function M.context()
  return require('sidecar.window').summary()
end

--- :SidecarContext: the context window by category, in a float.
function M.show_context(cb)
  require('sidecar.window').show(cb)
end

--- :SidecarModel [name]: switch the model (picked with vim.ui.select without a name).
function M.model(name, cb)
  require('sidecar.window').pick(name, cb)
end

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
