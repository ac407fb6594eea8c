-- Options: defaults, merging, workspace root and server command resolution.
local compat = require('sidecar.compat')

local M = {}

M.defaults = {
  -- The server command (a list). Default: the environment :SidecarInstall made under stdpath('data')/sidecar, else
  -- `sidecar` if it is on $PATH, else `python3 -m sidecar`.
  cmd = nil,
  -- Python 3.11+ that :SidecarInstall creates the private environment with. Default: python3, else python.
  python = nil,
  -- Extra environment for the server process (merged into Neovim's environment).
  cmd_env = nil,
  -- The server's log file when `cmd` is not set (its stderr, which Neovim's LSP log shows as [ERROR], then gets
  -- real errors only). Default: stdpath('log')/sidecar.log (0.7: stdpath('cache')); false: log to stderr.
  log_file = nil,
  -- Workspace root: a path, or a function returning one. Default: the nearest ancestor of the
  -- current directory holding one of `root_markers`, else the current directory.
  root_dir = nil,
  root_markers = { '.git', '.hg', '.svn', 'pyproject.toml', 'package.json', 'go.mod', 'Cargo.toml', 'Makefile' },
  -- The `sidecar` settings section (see docs/settings.md; names, types and defaults in the generated
  -- sidecar/settings_schema.lua): model, apiKey, baseUrl, tokenLimit, compressionThreshold, ... Sent as
  -- initializationOptions and workspace/didChangeConfiguration.
  ---@type sidecar.Settings
  settings = {},
  statusline = {
    icon = '✦',
    -- Shown while a compaction runs (its $/progress), before sidecar/compressed arrives.
    compressing = 'compressing…',
    -- Background compaction (tokenUsage.summaryPreparation); '' hides it.
    preparing = 'preparing summary',
    ready = 'summary ready',
    -- After "Undo Last Compaction", until the conversation grows 10% more or you compress; '' hides it.
    paused = 'auto-compact paused',
    compacts_next = 'compacts at next message',
  },
  chat = {
    -- Command used to open the chat window (any split command).
    split = 'botright 15split',
    -- Open the chat window (without moving the cursor) when :SidecarSend is used and it is hidden.
    open_on_send = true,
  },
  ide_context = {
    enabled = true,
    debounce_ms = 50,
    max_files = 10,
    max_selected_bytes = 16384,
  },
  restart = {
    enabled = true,
    -- At most `max` restarts within `window_ms`; the delay doubles from `delay_ms` per restart.
    max = 5,
    window_ms = 60000,
    delay_ms = 300,
  },
  -- Neovim 0.7-0.10 must answer a server request synchronously: if vim.ui.select does not call back
  -- at once (a custom, asynchronous UI), the plugin waits this long and then denies the tool call.
  confirm_timeout_ms = 120000,
}

local is_list = vim.islist or vim.tbl_islist

local function merge(base, over)
  local out = vim.deepcopy(base)
  for k, v in pairs(over or {}) do
    if type(v) == 'table' and type(out[k]) == 'table' and not is_list(v) and not is_list(out[k]) then
      out[k] = merge(out[k], v)
    else
      out[k] = v
    end
  end
  return out
end

M.merge = merge

function M.resolve(opts)
  return merge(M.defaults, opts or {})
end

local function exists(path)
  return compat.uv.fs_stat(path) ~= nil
end

--- Nearest ancestor of `start` (inclusive) holding one of `markers`, else nil.
function M.find_root(start, markers)
  local dir = vim.fn.fnamemodify(start, ':p'):gsub('/+$', '')
  if dir == '' then
    dir = '/'
  end
  while true do
    for _, marker in ipairs(markers) do
      if exists(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir or parent == '' then
      return nil
    end
    dir = parent
  end
end

function M.root_dir(cfg)
  local root = cfg.root_dir
  if type(root) == 'function' then
    root = root()
  end
  if type(root) == 'string' and root ~= '' then
    return (vim.fn.fnamemodify(root, ':p'):gsub('(.)/+$', '%1'))
  end
  local cwd = vim.fn.getcwd()
  return M.find_root(cwd, cfg.root_markers or {}) or cwd
end

function M.cmd(cfg)
  local cmd = cfg.cmd
  if type(cmd) == 'string' then
    cmd = { cmd }
  end
  if type(cmd) == 'table' and #cmd > 0 then
    return cmd
  end
  local private = require('sidecar.install').cmd() -- :SidecarInstall's environment
  if private then
    return private
  end
  if vim.fn.executable('sidecar') == 1 then
    return { 'sidecar' }
  end
  return { 'python3', '-m', 'sidecar' }
end

--- `--log-file PATH` for the default server command; {} when `cmd` is set (it has its own options) or log_file = false.
function M.log_args(cfg)
  if cfg.cmd or cfg.log_file == false then
    return {}
  end
  local path = cfg.log_file
  if type(path) ~= 'string' or path == '' then
    local ok, dir = pcall(vim.fn.stdpath, 'log')
    if not ok or type(dir) ~= 'string' or dir == '' then
      dir = vim.fn.stdpath('cache')
    end
    vim.fn.mkdir(dir, 'p')
    path = dir .. '/sidecar.log'
  end
  return { '--log-file', path }
end

--- Edit distance of two short names (for "did you mean").
local function distance(a, b)
  local prev = {}
  for j = 0, #b do
    prev[j] = j
  end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

--- Names in `settings` that are no sidecar setting (the server ignores them silently), each with the setting it
--- most likely meant: { {name = 'compresionThreshold', suggestion = 'compressionThreshold'}, ... }.
function M.unknown_settings(settings)
  local known = {}
  for _, s in ipairs(require('sidecar.settings_schema').settings) do
    known[#known + 1] = s.name
  end
  local out = {}
  for name in pairs(type(settings) == 'table' and settings or {}) do
    if type(name) == 'string' and not vim.tbl_contains(known, name) then
      local best, best_d = nil, math.huge
      for _, k in ipairs(known) do
        local d = distance(name:lower(), k:lower())
        if d < best_d then
          best, best_d = k, d
        end
      end
      out[#out + 1] = { name = name, suggestion = best_d <= math.max(2, math.floor(#name / 4)) and best or nil }
    end
  end
  table.sort(out, function(a, b)
    return a.name < b.name
  end)
  return out
end

return M
