-- Document sync: the sidecar's client is attached to the workspace's file buffers, so Neovim sends it
-- textDocument/didOpen and didChange like any language server gets them. The agent then reads and edits the text the
-- buffer holds (unsaved changes, `u`, `:e!`), not the server's record of what it last wrote; edits.lua refuses an
-- edit made for an older version of the buffer.
local state = require('sidecar.state')

local M = {}

local group

--- The buffer's file when it is a real file (or a new one) under the workspace root, else nil.
function M.path(buf)
  if not vim.api.nvim_buf_is_valid(buf) or not vim.api.nvim_buf_is_loaded(buf) then
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
  local root = state.root and tostring(state.root):gsub('/+$', '') or nil
  if not root or path:sub(1, #root + 1) ~= root .. '/' then
    return nil
  end
  return path
end

--- Attach the running sidecar to `buf` when it is one of the workspace's files.
function M.attach(buf)
  local id = state.client_id
  if id and M.path(buf) and not vim.lsp.buf_is_attached(buf, id) then
    pcall(vim.lsp.buf_attach_client, buf, id)
  end
end

--- Attach every loaded workspace file (after a start or restart: a new client knows no buffer).
function M.attach_all()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    M.attach(buf)
  end
end

--- Attach the buffers read, created or renamed from now on.
function M.enable()
  group = vim.api.nvim_create_augroup('SidecarDocuments', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'BufFilePost' }, {
    group = group,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
end

return M
