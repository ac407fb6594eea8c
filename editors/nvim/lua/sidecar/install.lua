-- :SidecarInstall / :SidecarUpdate: a private venv under stdpath('data')/sidecar with the sidecar installed from
-- this plugin's repository checkout (the plugin lives in editors/nvim of the sidecar repository). Asynchronous:
-- Python ≥ 3.11 is found (opts.python, python3, python), a venv created, the package installed with uv when it is
-- on PATH, else pip; progress goes to the messages and to install_status() for a statusline; the log to install.log.
local M = {}

local MIN = { 3, 11 }
local running = nil -- the install in progress: { step, steps }
M.status = nil -- 'installing (2/3): …' | 'installed' | 'failed: …' | nil

local function join(...)
  return table.concat({ ... }, '/')
end

function M.dir()
  return join(vim.fn.stdpath('data'), 'sidecar')
end

function M.venv()
  return join(M.dir(), 'venv')
end

function M.python()
  if vim.fn.has('win32') == 1 then
    return join(M.venv(), 'Scripts', 'python.exe')
  end
  return join(M.venv(), 'bin', 'python')
end

local function stamp_path()
  return join(M.dir(), 'installed.json')
end

function M.log_path()
  return join(M.dir(), 'install.log')
end

--- The repository checkout this plugin belongs to (where pyproject.toml is), or nil.
function M.repo_root()
  local here = debug.getinfo(1, 'S').source:sub(2)
  local root = vim.fn.fnamemodify(here, ':p:h:h:h:h:h') -- lua/sidecar/install.lua → editors/nvim → repo
  if vim.fn.filereadable(join(root, 'pyproject.toml')) == 1 then
    return root
  end
  return nil
end

--- What the stamp says about the installed environment ({version, python, pythonVersion, installer, at}), or nil.
function M.installed()
  if vim.fn.executable(M.python()) ~= 1 or vim.fn.filereadable(stamp_path()) ~= 1 then
    return nil
  end
  local ok, data = pcall(vim.fn.json_decode, table.concat(vim.fn.readfile(stamp_path()), '\n'))
  return ok and type(data) == 'table' and data or nil
end

--- The server command of the private environment, or nil when it is not installed.
function M.cmd()
  if M.installed() then
    return { M.python(), '-m', 'sidecar' }
  end
  return nil
end

--- Environment for commands run with the private Python: its own packages only.
M.clean_env = { PYTHONPATH = '', PYTHONNOUSERSITE = '1', PIP_DISABLE_PIP_VERSION_CHECK = '1' }

local function log(line)
  vim.fn.mkdir(M.dir(), 'p')
  vim.fn.writefile(vim.split(line, '\n', { plain = true }), M.log_path(), 'a')
end

local function say(msg, level)
  vim.notify('sidecar: ' .. msg, level or vim.log.levels.INFO)
end

local function set_status(text)
  M.status = text
  pcall(vim.cmd, 'redrawstatus')
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'SidecarInstall', modeline = false })
end

--- Run argv asynchronously; on_exit(code, output_lines).
local function run(argv, on_exit)
  local out = {}
  local function collect(_, data)
    for _, l in ipairs(data or {}) do
      if l ~= '' then
        out[#out + 1] = l
        log(l)
      end
    end
  end
  log('$ ' .. table.concat(argv, ' '))
  local env = vim.tbl_extend('force', {}, M.clean_env)
  env.PIP_CACHE_DIR = vim.env.PIP_CACHE_DIR or join(M.dir(), 'cache', 'pip')
  local ok, job = pcall(vim.fn.jobstart, argv, {
    env = env,
    on_stdout = collect,
    on_stderr = collect,
    on_exit = function(_, code)
      vim.schedule(function()
        on_exit(code, out)
      end)
    end,
  })
  if not ok or job <= 0 then
    vim.schedule(function()
      on_exit(-1, { 'cannot run ' .. argv[1] .. ': ' .. tostring(ok and 'not executable' or job) })
    end)
  end
end

local function last_error(lines)
  for i = #lines, 1, -1 do
    if lines[i]:match('^ERROR:') or lines[i]:match('^error:') then
      return lines[i]
    end
  end
  return lines[#lines] or 'no output'
end

--- The next step's advice for a failed step's output.
function M.advice(output)
  local text = table.concat(output, '\n')
  if text:find('ensurepip is not available') or text:find('No module named venv') then
    return "install Python's venv module (Debian/Ubuntu: sudo apt install python3-venv), or set python = '/path/to/python3.11' in setup({ install = { python = … } })"
  end
  for _, pat in ipairs({
    'Could not find a version',
    'No matching distribution',
    'Failed to establish',
    'Temporary failure in name resolution',
    'NewConnectionError',
    'Network is unreachable',
  }) do
    if text:find(pat, 1, true) then
      return 'no network? point pip at a local index or wheel folder (PIP_INDEX_URL, or PIP_FIND_LINKS=<dir> with PIP_NO_INDEX=1, or pip.conf) and run :SidecarInstall again'
    end
  end
  return 'see ' .. M.log_path() .. ', then run :SidecarInstall again'
end

--- Find a Python ≥ 3.11 among the candidates; cb(python, version) or cb(nil, reasons).
local function find_python(candidates, cb, tried)
  tried = tried or {}
  local py = table.remove(candidates, 1)
  if not py then
    return cb(nil, tried)
  end
  if vim.fn.executable(py) ~= 1 then
    tried[#tried + 1] = py .. ': not found'
    return find_python(candidates, cb, tried)
  end
  run({ py, '-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])' }, function(code, out)
    local major, minor = (out[1] or ''):match('^(%d+)%.(%d+)')
    major, minor = tonumber(major), tonumber(minor)
    if code == 0 and major and (major > MIN[1] or (major == MIN[1] and minor >= MIN[2])) then
      return cb(py, out[1])
    end
    tried[#tried + 1] = py
      .. ': '
      .. (code == 0 and ('Python ' .. tostring(out[1]) .. ' is too old') or last_error(out))
    find_python(candidates, cb, tried)
  end)
end

--- Install (or with opts.force, rebuild) the private environment. opts: {force, python, on_done(err)}.
function M.install(opts)
  opts = opts or {}
  local done = function(err)
    running = nil
    if opts.on_done then
      opts.on_done(err)
    end
  end
  if running then
    say('an install is already running (' .. tostring(M.status) .. ')', vim.log.levels.WARN)
    return
  end
  local repo = M.repo_root()
  if not repo then
    local msg =
      'cannot find the sidecar repository around this plugin (no pyproject.toml two levels above editors/nvim); install the sidecar yourself (pipx install / uv tool install) and set cmd'
    say(msg, vim.log.levels.ERROR)
    set_status('failed: no repository')
    return done(msg)
  end
  running = {}
  local steps = 3
  local function step(n, what)
    set_status(string.format('installing (%d/%d): %s', n, steps, what))
    say(M.status)
  end
  local function fail(what, out)
    local msg = string.format('%s failed: %s — %s', what, last_error(out), M.advice(out))
    log('=== failed: ' .. msg)
    set_status('failed: ' .. what)
    say(msg, vim.log.levels.ERROR)
    done(msg)
  end
  log('=== ' .. os.date('!%Y-%m-%dT%H:%M:%SZ') .. ' installing from ' .. repo)
  step(1, 'looking for Python 3.11+')
  local cfg_python = opts.python or (require('sidecar.state').cfg or {}).python
  local candidates = vim.tbl_filter(function(p)
    return type(p) == 'string' and p ~= ''
  end, { cfg_python, 'python3', 'python' })
  find_python(candidates, function(py, version)
    if not py then
      local msg = 'no Python 3.11 or newer found ('
        .. table.concat(version, '; ')
        .. '); install one, or set python = "/path/to/python3.11" in setup()'
      log('=== failed: ' .. msg)
      set_status('failed: no Python 3.11+')
      say(msg, vim.log.levels.ERROR)
      return done(msg)
    end
    local uv = vim.fn.executable('uv') == 1 and 'uv' or nil
    local function install_package()
      step(3, 'installing the sidecar and its dependencies' .. (uv and ' (uv)' or ' (pip)'))
      local argv = uv and { uv, 'pip', 'install', '--python', M.python(), repo }
        or { M.python(), '-m', 'pip', 'install', '--no-input', '--progress-bar', 'off', repo }
      run(argv, function(code, out)
        if code ~= 0 then
          return fail('installing the sidecar', out)
        end
        run({ M.python(), '-m', 'sidecar', '--version' }, function(vcode, vout)
          if vcode ~= 0 then
            return fail('checking the installed sidecar', vout)
          end
          local stamp = {
            version = (vout[1] or ''):gsub('^sidecar%s+', ''),
            python = py,
            pythonVersion = version,
            installer = uv and 'uv' or 'pip',
            at = os.date('!%Y-%m-%dT%H:%M:%SZ'),
            repo = repo,
          }
          vim.fn.writefile({ vim.fn.json_encode(stamp) }, stamp_path())
          log('=== installed: ' .. vim.fn.json_encode(stamp))
          set_status('installed')
          say(string.format('installed sidecar %s (Python %s) in %s', stamp.version, version, M.venv()))
          done(nil)
        end)
      end)
    end
    if opts.force or vim.fn.executable(M.python()) ~= 1 then
      vim.fn.delete(M.venv(), 'rf')
      vim.fn.delete(stamp_path())
      step(2, 'creating the environment')
      local argv = uv and { uv, 'venv', '--quiet', '--python', py, M.venv() } or { py, '-m', 'venv', M.venv() }
      run(argv, function(code, out)
        if code ~= 0 then
          return fail('creating the environment', out)
        end
        install_package()
      end)
    else
      step(2, 'reusing the environment ' .. M.venv())
      install_package()
    end
  end)
end

--- Whether an install runs now.
function M.running()
  return running ~= nil
end

--- For a statusline: '' when idle.
function M.install_status()
  if running and M.status then
    return 'sidecar ' .. M.status
  end
  return ''
end

return M
