-- :checkhealth sidecar
local compat = require('sidecar.compat')
local config = require('sidecar.config')
local state = require('sidecar.state')

local M = {}

local KEY_ENV = { 'GEMINI_API_KEY', 'GOOGLE_API_KEY' }

--- Where the API key comes from (never the key itself): 'settings', '$GEMINI_API_KEY', ... or nil.
function M.key_source(cfg)
  local key = cfg.settings and cfg.settings.apiKey
  if type(key) == 'string' and key ~= '' then
    return 'settings.apiKey'
  end
  for _, name in ipairs(KEY_ENV) do
    local v = (cfg.cmd_env and cfg.cmd_env[name]) or vim.env[name]
    if type(v) == 'string' and v ~= '' then
      return '$' .. name
    end
  end
  return nil
end

--- Whether Vertex AI is chosen (settings.backend, else $GOOGLE_GENAI_USE_VERTEXAI as google-genai reads it).
function M.vertex_configured(cfg)
  local backend = cfg.settings and cfg.settings.backend
  if backend ~= nil and backend ~= vim.NIL then
    return backend == 'vertex'
  end
  local env = (cfg.cmd_env and cfg.cmd_env.GOOGLE_GENAI_USE_VERTEXAI) or vim.env.GOOGLE_GENAI_USE_VERTEXAI
  return type(env) == 'string' and (env:lower() == 'true' or env == '1')
end

--- `<cmd> --version` output (first line), with a 10 s limit.
local function server_version(cmd)
  local out = {}
  local argv = vim.list_extend(vim.deepcopy(cmd), { '--version' })
  local ok, job = pcall(vim.fn.jobstart, argv, {
    stdout_buffered = true,
    on_stdout = function(_, data)
      out = data or {}
    end,
  })
  if not ok or job <= 0 then
    return nil, 'cannot run ' .. table.concat(argv, ' ')
  end
  local res = vim.fn.jobwait({ job }, 10000)[1]
  if res == -1 then
    vim.fn.jobstop(job)
    return nil, table.concat(argv, ' ') .. ' did not answer within 10 s'
  end
  if res ~= 0 then
    return nil, table.concat(argv, ' ') .. ' exited with ' .. res
  end
  return vim.trim(table.concat(out, '\n')), nil
end

--- `<cmd> doctor --json` with the plugin's settings on stdin (never on the command line: they may hold apiKey) and
--- the server's environment: the server's own verdict on these settings. Returns the report, or nil and why not.
function M.run_doctor(cmd, cfg, root, timeout_ms)
  local argv = vim.list_extend(
    vim.deepcopy(cmd),
    { 'doctor', '--json', '--editor', 'nvim', '--editor-settings', '-', '--project', root }
  )
  local out = {}
  local opts = {
    cwd = root,
    stdout_buffered = true,
    on_stdout = function(_, data)
      out = data or {}
    end,
  }
  local install = require('sidecar.install')
  local env = (cmd[1] == install.python()) and vim.tbl_extend('force', install.clean_env, cfg.cmd_env or {})
    or cfg.cmd_env
  if env then
    opts.env = env
  end
  local ok, job = pcall(vim.fn.jobstart, argv, opts)
  if not ok or job <= 0 then
    return nil, 'cannot run ' .. table.concat(argv, ' ')
  end
  local settings = cfg.settings or {}
  vim.fn.chansend(job, next(settings) == nil and '{}' or vim.fn.json_encode(settings))
  vim.fn.chanclose(job, 'stdin')
  local res = vim.fn.jobwait({ job }, timeout_ms or 30000)[1]
  if res == -1 then
    vim.fn.jobstop(job)
    return nil, table.concat(argv, ' ') .. ' did not answer within ' .. math.floor((timeout_ms or 30000) / 1000) .. ' s'
  end
  if res ~= 0 and res ~= 1 then
    return nil, table.concat(argv, ' ') .. ' exited with ' .. res
  end
  local decoded, report = pcall(vim.fn.json_decode, table.concat(out, '\n'))
  if not decoded or type(report) ~= 'table' or type(report.checks) ~= 'table' then
    return nil, 'it answered no report (a sidecar too old for `doctor --json --editor-settings`?)'
  end
  return report, nil
end

local function text_of(value)
  return (value ~= nil and value ~= vim.NIL) and tostring(value) or nil
end

--- The doctor's checks as health lines: a failing check is an error with its next step.
function M.doctor_section(h, cmd, cfg, root)
  h.start("sidecar doctor (the server's own checks of these settings and this environment)")
  local report, err = M.run_doctor(cmd, cfg, root)
  if not report then
    h.warn('sidecar doctor: ' .. tostring(err), { 'run it in a terminal: ' .. table.concat(cmd, ' ') .. ' doctor' })
    return
  end
  for _, c in ipairs(report.checks) do
    local line = tostring(c.name) .. ': ' .. tostring(c.detail)
    local hint = text_of(c.hint)
    if c.ok then
      h.ok(line)
      if hint then
        h.info(hint)
      end
    else
      h.error(line, hint and { hint } or nil)
    end
  end
end

function M.check()
  local h = compat.health()
  h.start('sidecar')

  local how = (compat.nvim_011 and vim.lsp.start) and 'vim.lsp.start' or 'vim.lsp.start_client'
  if vim.fn.has('nvim-0.7') == 1 then
    h.ok(string.format('Neovim %s (starts the server with %s)', compat.version_string(), how))
  else
    h.error('Neovim ' .. compat.version_string() .. ': sidecar.nvim needs 0.7 or newer')
  end

  if not state.cfg then
    h.warn("setup() has not been called: call require('sidecar').setup({...}) in your config")
  end
  local cfg = state.cfg or config.resolve({})
  local cmd = state.cmd or config.cmd(cfg)
  local cmdline = table.concat(cmd, ' ')
  if vim.fn.executable(cmd[1]) == 1 then
    h.ok('Server command: ' .. cmdline)
  else
    h.error('Server command: ' .. cmdline .. ' (' .. cmd[1] .. ' is not executable)', {
      "set cmd in require('sidecar').setup({ cmd = { '/path/to/python', '-m', 'sidecar' } })",
    })
  end
  local install = require('sidecar.install')
  local stamp = install.installed()
  if stamp then
    h.ok(
      string.format(
        'Private server environment: sidecar %s, Python %s (%s), at %s (installed %s with %s)',
        tostring(stamp.version),
        tostring(stamp.pythonVersion),
        tostring(stamp.python),
        install.venv(),
        require('sidecar.pickers').local_time(stamp.at),
        tostring(stamp.installer)
      )
    )
    local plugin_version = require('sidecar.version').plugin_version()
    if plugin_version and stamp.version ~= plugin_version then
      h.warn(
        string.format(
          "The private environment has sidecar %s, this plugin's checkout is %s",
          tostring(stamp.version),
          plugin_version
        ),
        { 'run :SidecarUpdate to reinstall it from the checkout' }
      )
    end
  elseif cfg.cmd then
    h.info('Private server environment: not installed (not needed: cmd is set)')
  else
    h.warn('Private server environment: not installed at ' .. install.venv(), {
      'run :SidecarInstall (needs Python 3.11+; installs the sidecar from ' .. tostring(install.repo_root()) .. ')',
      'or set cmd in setup() to a sidecar you installed (pipx install / uv tool install)',
    })
  end
  if install.status and install.status:match('^failed') then
    h.error('Last install: ' .. install.status .. ' (log: ' .. install.log_path() .. ')')
  end
  h.info('Workspace root: ' .. (state.root or config.root_dir(cfg)))

  h.info(
    'Plugin version: '
      .. tostring(require('sidecar.version').plugin_version())
      .. ', wire protocol '
      .. require('sidecar.protocol').protocol_version
  )
  if state.server_info and state.status == 'running' then
    h.ok(
      string.format(
        'Server version: %s %s (running, client id %s, %s)',
        tostring(state.server_info.name),
        tostring(state.server_info.version),
        tostring(state.client_id),
        tostring(state.start_method)
      )
    )
    if state.protocol_warning then
      h.error('Protocol: ' .. state.protocol_warning)
    end
  else
    local version, err = server_version(cmd)
    if version then
      h.ok('Server version: ' .. version .. ' (status: ' .. tostring(state.status) .. ')')
    else
      h.error('Server version: unknown: ' .. tostring(err))
    end
  end

  local source = M.key_source(cfg)
  local base = cfg.settings and cfg.settings.baseUrl
  local backend = require('sidecar.status').backend()
  if backend then
    local usage = state.usage
    if backend == require('sidecar.status').FAKE_BACKEND then
      h.warn('Backend: the embedded fake Gemini (no Gemini API key and no Vertex AI configured)', {
        'set $GEMINI_API_KEY in the environment Neovim starts from for the Gemini API (not settings.apiKey: a key in a config file is easily shared)',
        'or GOOGLE_GENAI_USE_VERTEXAI=true (settings.backend = "vertex") with a project and '
          .. '`gcloud auth application-default login` for Vertex AI',
      })
    else
      h.ok('Backend: ' .. backend)
    end
    if usage and type(usage.cachedTokenCount) == 'number' and usage.cachedTokenCount > 0 then
      h.info(string.format('Cached tokens in the last prompt: %d', usage.cachedTokenCount))
    end
  end
  if M.vertex_configured(cfg) then
    h.info(
      'Vertex AI: credentials come from Application Default Credentials (no API key is sent); project '
        .. tostring(
          (cfg.settings and cfg.settings.vertexProject) or vim.env.GOOGLE_CLOUD_PROJECT or '(from the credentials)'
        )
    )
  elseif source then
    h.ok('API key: set (from ' .. source .. ')')
  elseif base then
    h.info('API key: not set; requests to ' .. base .. ' carry a placeholder key')
  else
    h.warn('API key: not set: the embedded fake Gemini answers', {
      'set $GEMINI_API_KEY in the environment Neovim starts from (not settings.apiKey in setup(): config files get shared)',
    })
  end
  h.info('Model: ' .. tostring(cfg.settings and cfg.settings.model or (state.usage and state.usage.model) or 'default'))
  for _, u in ipairs(config.unknown_settings(cfg.settings)) do -- the server ignores them without a word
    h.warn(
      string.format(
        'settings.%s is not a sidecar setting, so it has no effect%s',
        u.name,
        u.suggestion and ('; did you mean ' .. u.suggestion .. '?') or ''
      ),
      { 'docs/settings.md lists the settings' }
    )
  end
  if base then
    h.info('Base URL: ' .. base)
  end
  if state.usage then
    h.info(string.format('Token usage: %s (session %s)', require('sidecar.status').text(), tostring(state.session_id)))
  end
  M.memory_section(h)
  M.mcp_section(h)
  M.doctor_section(h, cmd, cfg, state.root or config.root_dir(cfg))
end

--- The context files the agent has (GEMINI.md, AGENTS.md), from the last sidecar/memoryChanged.
function M.memory_section(h)
  local memory = require('sidecar.memory')
  local m = state.memory
  if not m then
    h.info('Memory: not reported yet (the server sends it once it has loaded the context files)')
    return
  end
  h.info(memory.summary(m))
  for _, f in ipairs(m.files or {}) do
    h.ok(
      string.format(
        'Memory file (%s, %s tokens): %s',
        tostring(f.scope),
        require('sidecar.transcript').thousands(f.tokens),
        tostring(f.path)
      )
    )
  end
  local skipped = memory.skipped_text(m)
  if skipped then
    h.warn(skipped, { ':SidecarMemory show lists what the agent has' })
  end
end

--- The MCP servers' states, from the last sidecar/mcpStatus (or :SidecarMcp) answer.
function M.mcp_section(h)
  local servers = state.mcp_servers or {}
  if #servers == 0 then
    h.info('MCP servers: none reported (settings.mcpServers; :SidecarMcp lists them)')
    return
  end
  h.info(require('sidecar.mcp').summary(servers))
  for _, s in ipairs(servers) do
    local tools = type(s.tools) == 'table' and s.tools or {}
    local line = string.format(
      'MCP server %s: %s, %d tool%s',
      tostring(s.name),
      tostring(s.status),
      #tools,
      #tools == 1 and '' or 's'
    )
    if s.status == 'failed' then
      h.error(
        line .. (type(s.error) == 'string' and (': ' .. s.error) or ''),
        { ':SidecarMcp restart ' .. tostring(s.name) .. ' starts it again' }
      )
    elseif s.status == 'ready' then
      h.ok(line)
    else
      h.info(line)
    end
  end
end

return M
