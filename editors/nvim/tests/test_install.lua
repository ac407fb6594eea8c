-- :SidecarInstall into a temporary stdpath('data') (run.sh gives each test its own XDG_DATA_HOME), then a turn
-- through the installed server with no `cmd` configured; :checkhealth reports the environment.
local T = require('sidecar_test')

T.run('test_install', function()
  T.workspace({})
  local install = require('sidecar.install')
  local data = vim.fn.stdpath('data')
  T.ok(
    vim.env.XDG_DATA_HOME and data:find(vim.env.XDG_DATA_HOME, 1, true) == 1,
    "stdpath('data') is the test's own: " .. data
  )
  T.eq(install.installed(), nil, 'nothing installed yet')

  local statuses = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'SidecarInstall',
    callback = function()
      statuses[#statuses + 1] = install.status
    end,
  })

  T.step(':SidecarInstall builds the private environment asynchronously, with progress', function()
    local ticks = 0
    local timer = vim.loop.new_timer()
    timer:start(
      0,
      100,
      vim.schedule_wrap(function()
        ticks = ticks + 1
      end)
    ) -- the editor keeps running meanwhile
    vim.cmd('SidecarInstall')
    T.ok(
      install.install_status():find('installing', 1, true) ~= nil,
      'install_status() for a statusline: ' .. install.install_status()
    )
    T.contains(require('sidecar.status').text(), 'installing (', 'the plugin statusline shows the install')
    T.wait(function()
      return install.status == 'installed' or (install.status or ''):find('^failed')
    end, 360000, 'the install')
    timer:stop()
    timer:close()
    T.eq(install.status, 'installed', 'install result (log: ' .. install.log_path() .. ')')
    T.ok(ticks > 5, 'Neovim stayed responsive during the install (timer ticks: ' .. ticks .. ')')
    local seen = table.concat(statuses, ' | ')
    T.contains(seen, 'installing (1/3): looking for Python 3.11+', 'progress step 1')
    T.contains(seen, 'installing (2/3): creating the environment', 'progress step 2')
    T.contains(seen, 'installing (3/3): installing the sidecar', 'progress step 3')
    local stamp = install.installed()
    T.ok(stamp ~= nil, 'the stamp is written')
    T.match(stamp.version, '^%d+%.%d+', 'installed version')
    T.eq(install.venv(), data .. '/sidecar/venv', "the venv lives under stdpath('data')/sidecar")
    T.eq(install.install_status(), '', 'statusline is quiet when idle')
  end)

  T.step('with no cmd the plugin starts the installed server, and a turn works', function()
    local sidecar = require('sidecar')
    sidecar.setup({ settings = T.settings() })
    T.wait(function()
      return sidecar.state.status == 'running' and sidecar.state.usage
    end, 60000, 'the installed sidecar')
    T.eq(sidecar.state.cmd[1], install.python(), 'server command is the private environment')
    local turn = sidecar.send('hello from the installed server')
    T.wait(function()
      return turn.done
    end, 30000, 'the turn')
    T.eq(turn.error, nil, 'no error')
    T.wait(function()
      return sidecar.state.usage.source == 'api'
    end, 10000, 'usage from Gemini after the turn')
    T.ok(sidecar.state.usage.promptTokenCount > 0, 'a prompt token count')
  end)

  T.step(':checkhealth sidecar reports the environment', function()
    vim.cmd('checkhealth sidecar')
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
    T.contains(text, 'Private server environment: sidecar ', 'health: environment')
    T.contains(text, install.venv(), 'health: path')
    T.match(text, 'Python 3%.%d+', 'health: Python version')
  end)
end)
