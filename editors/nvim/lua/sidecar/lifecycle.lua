-- Starting the sidecar: setup() with the user's options, and ensure() (setup with defaults, or a start again after
-- a stop) that every command calls first. The features require this module, never require('sidecar').
local client = require('sidecar.client')
local config = require('sidecar.config')
local context = require('sidecar.context')
local state = require('sidecar.state')
local status = require('sidecar.status')

local M = {}

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
  require('sidecar.documents').enable()
  if state.cfg.ide_context.enabled then
    context.enable()
  else
    context.disable()
  end
  client.start()
end

--- setup() with defaults when a command is used before setup(); start again a server that stopped.
function M.ensure()
  if not state.cfg then
    M.setup({})
  elseif not client.get() and (state.status == 'stopped' or state.status == 'failed') then
    client.start({ resume = state.session_id })
  end
end

return M
