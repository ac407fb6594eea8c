-- Test helpers for headless Neovim: a coroutine runner (so the main loop runs between steps and
-- real autocmds fire), waits with deadlines, assertions, the fake Gemini's control API, and an exit
-- status on every path.
local T = {}

local uv = vim.uv or vim.loop
local started = uv.hrtime()
local co = nil
local finished = false
T.steps = 0

function T.elapsed()
  return (uv.hrtime() - started) / 1e9
end

function T.log(fmt, ...)
  local msg = select('#', ...) > 0 and string.format(fmt, ...) or fmt
  io.stderr:write(string.format('[%6.2fs] %s\n', T.elapsed(), msg))
end

function T.env(name, default)
  local v = os.getenv(name)
  if v == nil or v == '' then
    if default ~= nil then
      return default
    end
    error('missing environment variable ' .. name, 2)
  end
  return v
end

local function finish(code, why)
  if finished then
    return
  end
  finished = true
  if why then
    T.log('%s', why)
  end
  pcall(function()
    local client = require('sidecar.client')
    if client.get() then
      client.stop()
      local stopped = vim.wait(3000, function()
        local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
        return client.get() == nil and #all == 0
      end, 20)
      if not stopped then
        T.log('sidecar did not stop within 3 s')
      end
    end
  end)
  io.stderr:flush()
  vim.cmd(code == 0 and 'qall!' or ('cquit ' .. code))
end

-- Resume the test coroutine (from a timer or a callback).
local function resume(...)
  if finished or not co or coroutine.status(co) ~= 'suspended' then
    return
  end
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    finish(1, 'FAIL (coroutine): ' .. tostring(err))
  end
end

--- Let the main loop run for `ms` (typeahead, autocmds, LSP messages), then continue.
function T.sleep(ms)
  vim.defer_fn(resume, ms or 0)
  coroutine.yield()
end

--- Wait until `cond()` is truthy (checked every 20 ms); error after `ms`.
function T.wait(cond, ms, what)
  local deadline = uv.now() + (ms or 10000)
  while true do
    local ok, v = pcall(cond)
    if ok and v then
      return v
    end
    if uv.now() > deadline then
      error(
        string.format(
          'timed out after %d ms waiting for %s%s',
          ms or 10000,
          what or 'a condition',
          ok and '' or (' (last error: ' .. tostring(v) .. ')')
        ),
        2
      )
    end
    T.sleep(20)
  end
end

--- Type keys as the user would (processed by the main loop), then let them run.
function T.feed(keys, ms)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'n', false)
  T.sleep(ms or 80)
end

function T.ok(cond, what)
  if not cond then
    error('check failed: ' .. tostring(what), 2)
  end
  return cond
end

function T.eq(got, want, what)
  if not vim.deep_equal(got, want) then
    error(string.format('%s: expected %s, got %s', tostring(what), vim.inspect(want), vim.inspect(got)), 2)
  end
end

function T.match(s, pattern, what)
  if type(s) ~= 'string' or not s:find(pattern) then
    error(string.format('%s: %s does not match %q', tostring(what), vim.inspect(s), pattern), 2)
  end
end

function T.contains(s, needle, what)
  if type(s) ~= 'string' or not s:find(needle, 1, true) then
    error(string.format('%s: %s does not contain %q', tostring(what), vim.inspect(s), needle), 2)
  end
end

--- A named step, for readable logs.
function T.step(name, fn)
  T.steps = T.steps + 1
  local t0 = T.elapsed()
  fn()
  T.log('ok   %s (%.2fs)', name, T.elapsed() - t0)
end

-- Fake Gemini control API (through the project's Python: no curl needed) --------------------

local function python()
  return T.env('SIDECAR_TEST_PYTHON')
end

local HTTP = [[
import sys, urllib.request
method, url = sys.argv[1], sys.argv[2]
data = sys.argv[3].encode() if len(sys.argv) > 3 else (b'' if method == 'POST' else None)
req = urllib.request.Request(url, data=data, method=method, headers={'Content-Type': 'application/json'})
with urllib.request.urlopen(req, timeout=10) as r:
    sys.stdout.write(r.read().decode())
]]

function T.http(method, path, body)
  local url = T.env('SIDECAR_TEST_BASEURL') .. path
  local argv = { python(), '-c', HTTP, method, url }
  if body then
    argv[#argv + 1] = type(body) == 'string' and body or vim.json.encode(body)
  end
  local out = vim.fn.system(argv)
  if vim.v.shell_error ~= 0 then
    error(method .. ' ' .. url .. ' failed: ' .. out)
  end
  if out == '' then
    return nil
  end
  local ok, decoded = pcall(vim.json.decode, out)
  return ok and decoded or out
end

function T.fake_requests()
  return T.http('GET', '/_control/requests') or {}
end

function T.fake_reset()
  T.http('POST', '/_control/reset')
end

--- The text of every part of every content of a request body.
function T.request_texts(req)
  local texts = {}
  for _, content in ipairs((req.body or {}).contents or {}) do
    for _, part in ipairs(content.parts or {}) do
      if type(part.text) == 'string' then
        texts[#texts + 1] = { role = content.role, text = part.text }
      end
    end
  end
  return texts
end

-- Workspace and sidecar ------------------------------------------------------------------------

--- A fresh workspace directory (with a .git marker) holding `files` {name = content}; cd into it.
function T.workspace(files)
  local dir = vim.fn.tempname() .. '-ws'
  vim.fn.mkdir(dir .. '/.git', 'p')
  for name, content in pairs(files or {}) do
    local path = dir .. '/' .. name
    vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
    local f = assert(io.open(path, 'w'))
    f:write(content)
    f:close()
  end
  vim.cmd('cd ' .. vim.fn.fnameescape(dir))
  return vim.fn.resolve(dir)
end

function T.settings(extra)
  return vim.tbl_extend('force', {
    baseUrl = T.env('SIDECAR_TEST_BASEURL'),
    apiKey = 'test-key',
    tokenLimit = 4000,
    compressionThreshold = 0.9,
    retryAttempts = 0,
    retryInitialDelayMs = 10, -- retries of unusable replies wait 10, 20, 40 ms
  }, extra or {})
end

--- setup() against the fake Gemini; waits for the first sidecar/tokenUsage.
function T.start_sidecar(opts)
  opts = opts or {}
  local sidecar = require('sidecar')
  sidecar.setup(vim.tbl_extend('force', {
    cmd = { python(), '-m', 'sidecar' },
    settings = T.settings(opts.settings),
  }, opts.setup or {}))
  T.wait(function()
    return sidecar.state.status == 'running' and sidecar.state.usage
  end, 30000, 'the sidecar to start and push sidecar/tokenUsage')
  return sidecar
end

--- Pids of this Neovim's child processes running `python -m sidecar` (Linux /proc).
function T.sidecar_pids()
  local me = tostring(vim.fn.getpid())
  local pids = {}
  for _, name in ipairs(vim.fn.readdir('/proc')) do
    if name:match('^%d+$') then
      local f = io.open('/proc/' .. name .. '/stat')
      local stat = f and f:read('*l')
      if f then
        f:close()
      end
      -- pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
      local ppid = stat and stat:match('%) %S+ (%d+)')
      if ppid == me then
        local c = io.open('/proc/' .. name .. '/cmdline')
        local cmdline = c and c:read('*a') or ''
        if c then
          c:close()
        end
        if cmdline:find('-m\0sidecar\0', 1, true) or cmdline:find('-m\0sidecar$') then
          pids[#pids + 1] = tonumber(name)
        end
      end
    end
  end
  return pids
end

--- Run `fn` as the test: inside a coroutine, errors caught, exit status always set.
function T.run(name, fn)
  local deadline = tonumber(os.getenv('SIDECAR_TEST_DEADLINE') or '') or 100
  local watchdog = uv.new_timer()
  watchdog:start(deadline * 1000, 0, function()
    io.stderr:write(string.format('FAIL %s: watchdog: still running after %d s\n', name, deadline))
    io.stderr:flush()
    os.exit(3)
  end)
  T.log('%s on Neovim %s', name, require('sidecar.compat').version_string())
  -- The plugin must not use APIs deprecated in the running Neovim.
  local deprecations = {}
  local orig_deprecate = vim.deprecate
  vim.deprecate = function(what, ...)
    deprecations[#deprecations + 1] = tostring(what) .. '\n' .. debug.traceback('', 2)
    return orig_deprecate(what, ...)
  end
  co = coroutine.create(function()
    local ok, err = xpcall(fn, debug.traceback)
    if ok and #deprecations > 0 then
      ok, err = false, 'deprecated API used: ' .. table.concat(deprecations, '\n')
    end
    if ok then
      finish(0, string.format('PASS %s (%d steps, %.2fs)', name, T.steps, T.elapsed()))
    else
      finish(1, string.format('FAIL %s: %s', name, tostring(err)))
    end
  end)
  vim.schedule(resume)
end

return T
