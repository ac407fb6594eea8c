-- The sidecar process as a Neovim LSP client: start, requests, crash restart + resume (the handlers: handlers.lua).
local compat = require('sidecar.compat')
local config = require('sidecar.config')
local state = require('sidecar.state')
local status = require('sidecar.status')
local protocol = require('sidecar.protocol')

local M = {}

local queue = {} -- calls made while the server starts: {method, params, cb}
local stopping = {} -- client ids stopped on purpose (no restart)
local initialized = {} -- client ids that answered initialize
local inflight = {} -- key -> callback of a request that has not been answered yet
local request_keys = {} -- LSP request id -> inflight key
local id_of = {} -- inflight key -> LSP request id
local next_key = 0

--- An options table as a JSON object: an empty Lua table would be encoded as `[]` (vim.json.encode({}) == '[]').
function M.as_object(t)
  if type(t) ~= 'table' or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

local function notify(msg, level)
  vim.schedule(function()
    require('sidecar.ui').tell(msg, level) -- one line (a longer text goes whole to the chat): never a prompt
  end)
end
M.user_notify = notify

function M.get()
  local client = compat.get_client(state.client_id)
  if client and not compat.is_stopped(client) then
    return client
  end
  return nil
end

function M.running()
  return state.status == 'running' and M.get() ~= nil
end

local function fail(cb, message)
  if cb then
    vim.schedule(function()
      cb({ code = -32099, message = message }, nil)
    end)
  end
  return false
end

--- Send a request; cb(err, result). Calls made while the server starts are queued.
function M.request(method, params, cb)
  if state.status == 'starting' or state.status == 'restarting' then
    queue[#queue + 1] = { method = method, params = params, cb = cb }
    return true
  end
  local client = M.get()
  if not client or state.status ~= 'running' then
    return fail(cb, 'the sidecar is not running (' .. state.status .. ')')
  end
  next_key = next_key + 1
  local key = next_key
  inflight[key] = cb or true
  local ok, id = compat.request(client, method, params or vim.empty_dict(), function(err, result)
    if id_of[key] then
      request_keys[id_of[key]] = nil
      id_of[key] = nil
    end
    if inflight[key] == nil then
      return
    end
    inflight[key] = nil
    if cb then
      cb(err, result)
    end
  end)
  if not ok then
    inflight[key] = nil
    return fail(cb, 'the sidecar connection is closed')
  end
  if id then
    request_keys[id] = key
    id_of[key] = id
  end
  return true, id
end

--- Answer every unanswered request with an error (the server went away).
local function fail_inflight(message)
  local pending = inflight
  inflight, request_keys, id_of = {}, {}, {}
  for _, cb in pairs(pending) do
    if type(cb) == 'function' then
      pcall(cb, { code = -32099, message = message }, nil)
    end
  end
end

--- Cancel a request sent with M.request ($/cancelRequest). Neovim's RPC layer swallows the
--- server's RequestCancelled answer, so the callback is answered here with -32800.
function M.cancel(id)
  local client = M.get()
  if client and id then
    pcall(compat.cancel_request, client, id)
  end
  local key = id and request_keys[id]
  local cb = key and inflight[key]
  if cb then
    inflight[key] = nil
    request_keys[id] = nil
    if type(cb) == 'function' then
      vim.schedule(function()
        cb({ code = protocol.error.requestCancelled, message = 'cancelled' }, nil)
      end)
    end
  end
end

--- A request whose failure ends the caller's work: the error is told in words (`<what>: <message>`) and handed to
--- cb(err); an answer goes to on_result(result), which calls cb itself once it is done.
---@param what string what the user asked for, as the error message begins
---@param method string
---@param params table
---@param cb fun(err: table|nil, result: any)|nil
---@param on_result fun(result: any)
function M.call(what, method, params, cb, on_result)
  return M.request(method, params, function(err, result)
    if err then
      require('sidecar.ui').tell(what .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      if cb then
        cb(err)
      end
      return
    end
    on_result(result)
  end)
end

function M.notify(method, params)
  local client = M.get()
  if not client or state.status ~= 'running' then
    return false
  end
  return compat.notify(client, method, params)
end

local function flush_queue()
  local q = queue
  queue = {}
  for _, item in ipairs(q) do
    M.request(item.method, item.params, item.cb)
  end
end

local function fail_queue(message)
  local q = queue
  queue = {}
  for _, item in ipairs(q) do
    fail(item.cb, message)
  end
end

-- Wiring ---------------------------------------------------------------------------------------

--- What the server sends, by method (sidecar/handlers.lua): given by init.lua, the composition root, before any start.
---@type table<string, function>|nil
M.handlers = nil

--- Called once a (re)started server answered initialize, before the queued calls go: the editor's context is sent
--- again in full (given by init.lua).
---@type fun()|nil
M.on_running = nil

-- Lifecycle --------------------------------------------------------------------------------------

local function after_init(client_id, resume)
  state.status = 'running'
  status.changed()
  if M.on_running then
    M.on_running()
  end
  if not resume then
    flush_queue()
    return
  end
  state.resuming = resume
  M.request(protocol.method.resumeSession, { sessionId = resume }, function(err, result)
    if state.client_id ~= client_id then
      return -- crashed again meanwhile: the next start resumes `resume`
    end
    state.resuming = nil
    if err then
      state.session_id = state.usage and state.usage.sessionId or state.session_id
      notify('restarted, but could not resume session ' .. resume .. ': ' .. (err.message or ''), vim.log.levels.WARN)
      require('sidecar.chat').note('sidecar restarted in a new session: session ' .. resume .. ' could not be resumed')
    else
      state.session_id = result.sessionId or resume
      state.last_resume = result
      notify(
        string.format('restarted and resumed session %s (%s messages)', state.session_id, tostring(result.messageCount))
      )
      require('sidecar.chat').note('sidecar restarted; resumed session ' .. state.session_id)
      if result.forked and result.message then
        require('sidecar.chat').note(result.message) -- still open elsewhere: continuing in a branch
      end
    end
    flush_queue()
  end)
end

local schedule_restart

--- No server to run yet (no cmd, no :SidecarInstall environment, no `sidecar` on PATH) while :SidecarInstall runs or
--- may be about to (a plugin manager's build right after setup(), lazy.nvim's order): `python3 -m sidecar` would fail
--- now, and its messages stop at a Press-ENTER prompt that the install waits behind. Start when the install ends.
local function wait_for_install(cfg, opts)
  local install = require('sidecar.install')
  if cfg.cmd or install.cmd() or vim.fn.executable('sidecar') == 1 then
    return false
  end
  if install.running() then
    state.waiting_install = opts
  elseif not opts.looked_again then
    vim.schedule(function()
      if state.status == 'starting' and not state.client_id and not state.waiting_install then
        M.start(vim.tbl_extend('force', opts, { looked_again = true }))
      end
    end)
  else
    return false
  end
  state.status = 'starting' -- calls made meanwhile are queued
  status.changed()
  return true
end

--- :SidecarInstall ended (err: its failure in words): start the sidecar that waited for it.
function M.install_done(err)
  local opts = state.waiting_install
  state.waiting_install = nil
  if not opts or state.client_id then
    return
  end
  if err then
    state.status = 'failed'
    fail_queue('the sidecar is not installed')
    status.changed()
    return
  end
  M.start(vim.tbl_extend('force', opts, { looked_again = true }))
end

--- Start the sidecar (opts.resume: a sessionId to resume once it runs).
function M.start(opts)
  opts = opts or {}
  local cfg = state.cfg
  if M.get() then
    return state.client_id
  end
  if wait_for_install(cfg, opts) then
    return nil
  end
  assert(M.handlers, "sidecar: the client was started before require('sidecar') gave it its handlers")
  local root = config.root_dir(cfg)
  local cmd = config.cmd(cfg)
  state.root, state.cmd = root, cmd
  state.status = opts.resume and 'restarting' or 'starting'
  state.resuming = nil
  state.progress = {}
  state.usage_seq = nil -- a new server process counts TokenUsage.seq from 1 again
  local settings = M.as_object(vim.deepcopy(cfg.settings or {}))
  local client_config = {
    name = 'sidecar',
    cmd = vim.list_extend(vim.deepcopy(cmd), config.log_args(cfg)),
    cmd_cwd = root,
    cmd_env = (cmd[1] == require('sidecar.install').python())
        and vim.tbl_extend('force', require('sidecar.install').clean_env, cfg.cmd_env or {})
      or cfg.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = settings,
    settings = { sidecar = settings },
    capabilities = vim.lsp.protocol.make_client_capabilities(),
    -- didChange at once (documents.lua): the server must know the buffer's text when the agent plans an edit.
    flags = { debounce_text_changes = 0 },
    handlers = M.handlers,
    on_init = function(client, result)
      initialized[client.id] = true
      state.server_info = result and result.serverInfo or nil
      require('sidecar.version').on_server_init(result, cmd) -- an old server (e.g. an old private venv) is named
      vim.schedule(function()
        if state.client_id == client.id then
          after_init(client.id, opts.resume)
        end
      end)
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        if stopping[client_id] then
          stopping[client_id] = nil
          return
        end
        if client_id ~= state.client_id then
          return
        end
        state.client_id = nil
        state.progress = {}
        state.last_exit = { code = code, signal = signal }
        fail_inflight(string.format('the sidecar exited (code %s, signal %s)', code, signal))
        if state.exiting then
          state.status = 'stopped'
          return
        end
        if not initialized[client_id] then
          -- It never started: restarting would fail the same way.
          state.status = 'failed'
          fail_queue('the sidecar failed to start')
          status.changed()
          local hint = (not cfg.cmd and not require('sidecar.install').installed())
              and ' — run :SidecarInstall to install the server (or set cmd in setup())'
            or ''
          local log_args = config.log_args(cfg)
          local where = vim.lsp.get_log_path() .. (log_args[2] and (' and its log in ' .. log_args[2]) or '')
          notify(
            string.format(
              '%s exited during start-up (code %s, signal %s); its stderr is in %s%s',
              table.concat(state.cmd or {}, ' '),
              code,
              signal,
              where,
              hint
            ),
            vim.log.levels.ERROR
          )
          return
        end
        schedule_restart(code, signal)
      end)
    end,
  }
  local ok, id, how = pcall(compat.start_client, client_config)
  if not ok or not id then
    state.status = 'failed'
    status.changed()
    local why = not ok and tostring(id) or 'see :LspLog'
    fail_queue('the sidecar failed to start')
    notify('could not start ' .. table.concat(cmd, ' ') .. ': ' .. why, vim.log.levels.ERROR)
    return nil
  end
  state.client_id, state.start_method = id, how
  status.changed()
  return id
end

function schedule_restart(code, signal)
  local cfg = state.cfg.restart or {}
  local now = compat.uv.now()
  local recent = {}
  for _, t in ipairs(state.restarts) do
    if now - t < (cfg.window_ms or 60000) then
      recent[#recent + 1] = t
    end
  end
  state.restarts = recent
  if cfg.enabled == false or #recent >= (cfg.max or 5) then
    state.status = 'failed'
    fail_queue('the sidecar stopped')
    status.changed()
    notify(
      string.format(
        'the sidecar exited (code %s, signal %s) and will not be restarted; use :SidecarRestart',
        code,
        signal
      ),
      vim.log.levels.ERROR
    )
    return
  end
  local delay = (cfg.delay_ms or 300) * (2 ^ #recent)
  recent[#recent + 1] = now
  state.status = 'restarting'
  status.changed()
  notify(string.format('the sidecar exited (code %s, signal %s); restarting', code, signal), vim.log.levels.WARN)
  vim.defer_fn(function()
    if state.status == 'restarting' and not state.client_id and not state.exiting then
      M.start({ resume = state.session_id })
    end
  end, delay)
end

--- Stop the sidecar on purpose (no automatic restart).
function M.stop(force)
  local client = M.get()
  if client then
    stopping[client.id] = true
    compat.stop(client, force)
  end
  state.client_id = nil
  state.status = 'stopped'
  state.progress = {}
  fail_queue('the sidecar was stopped')
  fail_inflight('the sidecar was stopped')
  status.changed()
end

--- Stop and start again, resuming the current session.
function M.restart()
  local resume = state.session_id
  M.stop()
  state.restarts = {}
  return M.start({ resume = resume })
end

return M
