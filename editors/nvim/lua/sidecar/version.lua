-- Versions: the plugin's (the sidecar package version of the repository checkout it came with, read from
-- sidecar/__init__.py, where it is defined once) and the check that the server speaks this plugin's wire protocol
-- (the server reports it in the initialize result: capabilities.experimental.sidecar.protocolVersion).
local M = {}

--- The version in <repo>/sidecar/__init__.py, or nil when the plugin is not inside a sidecar checkout.
function M.plugin_version(root)
  root = root or require('sidecar.install').repo_root()
  local file = root and (root .. '/sidecar/__init__.py')
  if not file or vim.fn.filereadable(file) ~= 1 then
    return nil
  end
  for _, line in ipairs(vim.fn.readfile(file)) do
    local v = line:match('^__version__%s*=%s*"([^"]+)"')
    if v then
      return v
    end
  end
  return nil
end

--- The protocol version in an initialize result, or nil when the server does not report one.
function M.server_protocol(result)
  local caps = type(result) == 'table' and result.capabilities or nil
  local exp = type(caps) == 'table' and caps.experimental or nil
  local sidecar = type(exp) == 'table' and exp.sidecar or nil
  local v = type(sidecar) == 'table' and sidecar.protocolVersion or nil
  if type(v) == 'number' and v == math.floor(v) then
    return v
  end
  return nil
end

--- nil when the server speaks our protocol; else what to tell the user, in words.
--- private: the server is the :SidecarInstall environment (reinstalling it fixes an old one).
function M.warning(result, private, expected, plugin_version)
  expected = expected or require('sidecar.protocol').protocol_version
  local got = M.server_protocol(result)
  if got == expected then
    return nil
  end
  plugin_version = plugin_version or M.plugin_version() or '?'
  local info = type(result) == 'table' and result.serverInfo or nil
  local server = 'the sidecar server'
    .. ((info and info.version) and (' (version ' .. tostring(info.version) .. ')') or '')
  local ours = string.format('this plugin (version %s) speaks protocol %d', plugin_version, expected)
  local what
  if got == nil then
    what = string.format(
      '%s is older than this plugin (version %s, protocol %d): it does not report a protocol version.',
      server,
      plugin_version,
      expected
    )
  elseif got < expected then
    what = string.format('%s speaks protocol %d, and %s: the server is older.', server, got, ours)
  else
    what = string.format('%s speaks protocol %d, and %s: the server is newer than the plugin.', server, got, ours)
  end
  local fix
  if private then
    fix = "Reinstall it from this plugin's checkout with :SidecarUpdate"
      .. ((got and got > expected) and ', or update the plugin.' or '.')
  else
    fix = 'The server is the cmd from setup(): upgrade that sidecar (pipx upgrade / uv tool upgrade / pip install -U), '
      .. "or remove cmd and run :SidecarInstall to use one installed from this plugin's checkout."
  end
  return what:sub(1, 1):upper() .. what:sub(2) .. ' Some features may fail. ' .. fix
end

--- Called when a server answered initialize: remember and say what does not match (state.protocol_warning).
function M.on_server_init(result, cmd)
  local state = require('sidecar.state')
  local private = cmd ~= nil and cmd[1] == require('sidecar.install').python()
  state.protocol_warning = M.warning(result, private)
  if state.protocol_warning then
    vim.schedule(function()
      vim.notify('sidecar: ' .. state.protocol_warning, vim.log.levels.WARN)
    end)
  end
end

return M
