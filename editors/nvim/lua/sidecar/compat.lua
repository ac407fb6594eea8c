-- Version shims: the plugin runs on Neovim 0.7.2 (Debian 12) up to 0.11+.
--
-- When the 0.7 layer can go: once Neovim 0.7.2 need not be supported, i.e. when the project drops Debian 12
-- (bookworm ships 0.7.2; its LTS support ends 2028-06-30) — the next floor is then Debian 13's 0.10.x. What goes
-- with it: the vim.lsp.start_client branch of start_client (0.7 has no vim.lsp.start), require('health') in
-- health(), the missing `data` in exec_user_autocmd (0.8+), and NVIM_VERSIONS=0.7 with the apt step of
-- tests/install-nvim.sh. The dot-call client methods, str_utfindex's old signature and the confirm_timeout_ms wait
-- in sidecar/confirm.lua (before 0.11 a server request is answered synchronously) stay until the floor is 0.11.
local M = {}

M.uv = vim.uv or vim.loop

local function has(feature)
  return vim.fn.has(feature) == 1
end

M.nvim_08 = has('nvim-0.8')
M.nvim_010 = has('nvim-0.10')
M.nvim_011 = has('nvim-0.11')

--- "0.11.4" style version string of the running Neovim.
function M.version_string()
  local v = vim.version()
  local s = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if v.prerelease then
    s = s .. '-dev'
  end
  return s
end

--- Start an LSP client that is attached to no buffer (the sidecar is not a language server for
--- buffers: the IDE context travels in sidecar/ideContext instead of didOpen/didChange).
--- 0.11+ uses vim.lsp.start{attach=false}; older versions use vim.lsp.start_client, because
--- vim.lsp.start before 0.11 always attaches a buffer (and does not exist before 0.8).
--- @return integer|nil client_id, string|nil how
function M.start_client(config)
  if M.nvim_011 and vim.lsp.start then
    local id = vim.lsp.start(config, {
      attach = false,
      reuse_client = function()
        return false
      end,
    })
    return id, 'vim.lsp.start'
  end
  return vim.lsp.start_client(config), 'vim.lsp.start_client'
end

function M.get_client(id)
  if not id then
    return nil
  end
  return vim.lsp.get_client_by_id(id)
end

-- Client methods became colon methods in 0.11 (dot calls still work there but warn).
function M.request(client, method, params, handler)
  if M.nvim_011 then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

function M.notify(client, method, params)
  if M.nvim_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.cancel_request(client, id)
  if M.nvim_011 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

function M.stop(client, force)
  if M.nvim_011 then
    return client:stop(force)
  end
  return client.stop(force)
end

function M.is_stopped(client)
  if M.nvim_011 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- 0-based byte column -> UTF-16 code unit count before it (what LSP and VS Code call "character").
function M.utf16_index(line, byte_col)
  if byte_col > #line then
    byte_col = #line
  end
  if byte_col <= 0 then
    return 0
  end
  local ok, a, b
  if M.nvim_011 then
    ok, a = pcall(vim.str_utfindex, line, 'utf-16', byte_col, false)
    if ok then
      return a
    end
  end
  ok, a, b = pcall(vim.str_utfindex, line, byte_col)
  if ok then
    return b or a
  end
  return byte_col
end

--- Health report functions: vim.health.start/ok/... (0.10+) or require('health').report_* (0.7).
function M.health()
  local h = vim.health
  if h and h.start then
    return { start = h.start, ok = h.ok, warn = h.warn, error = h.error, info = h.info }
  end
  if h and h.report_start then
    return {
      start = h.report_start,
      ok = h.report_ok,
      warn = h.report_warn,
      error = h.report_error,
      info = h.report_info,
    }
  end
  local old = require('health')
  return {
    start = old.report_start,
    ok = old.report_ok,
    warn = old.report_warn,
    error = old.report_error,
    info = old.report_info,
  }
end

function M.exec_user_autocmd(pattern, data)
  -- `data` is only supported from 0.8; on 0.7 listeners read require('sidecar').state instead.
  local opts = { pattern = pattern, modeline = false }
  if M.nvim_08 then
    opts.data = data
  end
  pcall(vim.api.nvim_exec_autocmds, 'User', opts)
end

return M
