-- Versions: the plugin reports the package version of its checkout (the same as `sidecar --version`), and a server
-- that does not speak the plugin's wire protocol is named in words (old private venv: :SidecarUpdate), in a
-- notification and in :checkhealth; the real server of this checkout is not.
local T = require('sidecar_test')

local function health_text()
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd('checkhealth sidecar')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  if #vim.api.nvim_list_tabpages() > tabs then
    vim.cmd('tabclose')
  else
    vim.cmd('bwipeout!')
  end
  return text
end

T.run('test_version', function()
  T.workspace({})
  local version = require('sidecar.version')
  local protocol = require('sidecar.protocol').protocol_version
  local python = T.env('SIDECAR_TEST_PYTHON')

  T.step('the plugin version is the package version of its checkout', function()
    local out = vim.fn.systemlist({ python, '-m', 'sidecar', '--version' })
    T.eq(vim.v.shell_error, 0, 'sidecar --version exit code')
    T.eq('sidecar ' .. tostring(version.plugin_version()), out[1], 'plugin version vs sidecar --version')
    T.match(version.plugin_version(), '^%d+%.%d+%.%d+$', 'a release number')
    T.eq(type(protocol), 'number', 'protocol.lua carries the protocol version')
  end)

  T.step('the words for a server that does not match', function()
    local function result(v, server_version)
      return {
        serverInfo = { name = 'sidecar', version = server_version or '0.0.9' },
        capabilities = v and { experimental = { sidecar = { protocolVersion = v } } } or {},
      }
    end
    T.eq(version.warning(result(protocol), true), nil, 'same protocol: nothing to say')
    T.eq(
      version.warning(result(nil), true, 2, '0.2.0'),
      'The sidecar server (version 0.0.9) is older than this plugin (version 0.2.0, protocol 2): it does not report a '
        .. "protocol version. Some features may fail. Reinstall it from this plugin's checkout with :SidecarUpdate.",
      'a server from before the check'
    )
    T.contains(
      version.warning(result(1), true, 2, '0.2.0'),
      'speaks protocol 1, and this plugin (version 0.2.0) speaks protocol 2: the server is older.',
      'older'
    )
    T.contains(version.warning(result(3), true, 2, '0.2.0'), 'the server is newer than the plugin.', 'newer')
    T.contains(
      version.warning(result(3), true, 2, '0.2.0'),
      ':SidecarUpdate, or update the plugin.',
      'newer: both fixes'
    )
    T.contains(
      version.warning(result(1), false, 2, '0.2.0'),
      'The server is the cmd from setup(): upgrade that sidecar',
      'a configured cmd is not reinstalled by :SidecarUpdate'
    )
    T.eq(version.server_protocol(result('1')), nil, 'a string is not a protocol version')
  end)

  local sidecar = T.start_sidecar({})
  T.step('the real server of this checkout matches: no warning', function()
    T.eq(sidecar.state.protocol_warning, nil, 'protocol warning')
    local text = health_text()
    T.contains(text, 'Plugin version: ' .. version.plugin_version() .. ', wire protocol ' .. protocol, 'plugin version')
    T.ok(not text:find('Protocol:', 1, true), 'no protocol error in :checkhealth')
  end)

  T.step('an old private server is named in a notification and in :checkhealth', function()
    local said = {}
    local notify = vim.notify
    vim.notify = function(msg, level)
      said[#said + 1] = { msg = msg, level = level }
    end
    version.on_server_init(
      { serverInfo = { name = 'sidecar', version = '0.0.1' }, capabilities = {} },
      { require('sidecar.install').python(), '-m', 'sidecar' }
    )
    T.wait(function()
      return #said > 0
    end, 5000, 'the warning')
    vim.notify = notify
    T.eq(said[1].level, vim.log.levels.WARN, 'a warning')
    T.contains(said[1].msg, 'sidecar: The sidecar server (version 0.0.1) is older than this plugin', 'in words')
    T.contains(said[1].msg, ':SidecarUpdate', 'reinstall offered')
    T.contains(health_text(), 'Protocol: The sidecar server (version 0.0.1) is older', ':checkhealth says it too')
  end)

  T.step(':checkhealth warns when the private environment is older than the checkout', function()
    local install = require('sidecar.install')
    vim.fn.mkdir(vim.fn.fnamemodify(install.python(), ':h'), 'p')
    vim.loop.fs_symlink(python, install.python())
    vim.fn.writefile({
      vim.fn.json_encode({
        version = '0.0.1',
        python = python,
        pythonVersion = '3.11.7',
        installer = 'pip',
        at = '2026-01-01T00:00:00Z',
      }),
    }, install.dir() .. '/installed.json')
    local text = health_text()
    T.contains(
      text,
      "The private environment has sidecar 0.0.1, this plugin's checkout is " .. version.plugin_version(),
      'the stale environment named'
    )
    T.contains(text, 'run :SidecarUpdate to reinstall it from the checkout', 'the fix named')
  end)
end)
