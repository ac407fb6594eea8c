-- The plugin-manager specs in docs/neovim.md (lazy.nvim, packer.nvim) work with the repository's layout: each is
-- read from the doc as written and run, in a clean Neovim (no minimal_init: nothing on 'runtimepath' but what the
-- spec adds), against a copy of the repository laid out as a plugin manager clones it. Its install hook must give
-- the :Sidecar… commands, help tags (:help sidecar) and a :SidecarInstall that installs from that clone; its config
-- hook must give require('sidecar'), and the plugin must report the clone's version.
-- The child Neovim has no Python on PATH, so :SidecarInstall stops at its first step (the full install is
-- test_install's): what is checked here is where it installs from.
local T = require('sidecar_test')

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local repo = vim.fn.fnamemodify(here, ':h:h:h')

--- The Lua code block after `<!-- spec: NAME -->` in docs/neovim.md.
local function spec_from_docs(name)
  local doc = table.concat(vim.fn.readfile(repo .. '/docs/neovim.md'), '\n')
  local at = doc:find('<!-- spec: ' .. name .. ' -->', 1, true)
  T.ok(at ~= nil, 'docs/neovim.md has a "<!-- spec: ' .. name .. ' -->" block')
  local code = doc:match('```lua\n(.-)\n```', at)
  T.ok(code ~= nil, 'a lua code block follows the ' .. name .. ' marker')
  return code
end

--- A copy of what a plugin manager clones: the plugin folder and the files it reads from the repository root.
local function clone(dir)
  vim.fn.mkdir(dir .. '/editors', 'p')
  vim.fn.mkdir(dir .. '/sidecar', 'p')
  vim.fn.system({ 'cp', '-R', repo .. '/editors/nvim', dir .. '/editors/nvim' })
  T.eq(vim.v.shell_error, 0, 'copying editors/nvim')
  vim.fn.delete(dir .. '/editors/nvim/doc/tags') -- a clone has none: the spec must build them
  for _, f in ipairs({ 'pyproject.toml', 'sidecar/__init__.py' }) do
    vim.fn.writefile(vim.fn.readfile(repo .. '/' .. f, 'b'), dir .. '/' .. f, 'b')
  end
end

-- Runs in the child: the spec's hooks as its manager calls them, then what a user would try. Results go to a file.
local CHILD = [[
local spec_file, manager, dir, out = unpack(vim.g.layout_args)
local spec = dofile(spec_file)
local r = { manager = manager, repository = spec[1] }
local plugin = manager == 'lazy' and { dir = dir, name = 'sidecar' } or { install_path = dir, name = 'sidecar' }
local hook = manager == 'lazy' and spec.build or spec.run
r.hook_ok, r.hook_err = pcall(hook, plugin)
r.commands = vim.fn.exists(':SidecarChat') == 2 and vim.fn.exists(':SidecarInstall') == 2
r.tags = vim.fn.filereadable(dir .. '/editors/nvim/doc/tags') == 1
local install = require('sidecar.install')
vim.wait(20000, function() return install.status ~= nil and not install.status:match('^installing') end, 50)
r.install_status = install.status
r.repo_root = install.repo_root()
local log = vim.fn.filereadable(install.log_path()) == 1 and vim.fn.readfile(install.log_path()) or {}
r.install_log = table.concat(log, '\n')
if manager == 'packer' then
  vim.opt.rtp:append(dir .. '/' .. spec.rtp) -- what packer does with `rtp` before `config`
end
r.config_ok, r.config_err = pcall(spec.config, plugin)
r.setup_called = require('sidecar.state').cfg ~= nil
r.help_ok = pcall(vim.cmd, 'help sidecar')
r.help_file = vim.fn.expand('%:p')
r.version = require('sidecar.version').plugin_version()
pcall(require('sidecar.client').stop)
vim.fn.writefile({ vim.fn.json_encode(r) }, out)
vim.cmd('qall!')
]]

local function run_child(manager, spec_code, work)
  local dir = work .. '/' .. manager .. '/sidecar'
  clone(dir)
  local spec_file = work .. '/' .. manager .. '-spec.lua'
  vim.fn.writefile(vim.split('return ' .. spec_code, '\n'), spec_file)
  local child_file = work .. '/child.lua'
  vim.fn.writefile(vim.split(CHILD, '\n'), child_file)
  local out = work .. '/' .. manager .. '-result.json'
  local home = work .. '/' .. manager .. '-home'
  local args = string.format(
    'let g:layout_args = [%s, %s, %s, %s]',
    vim.fn.string(spec_file),
    vim.fn.string(manager),
    vim.fn.string(dir),
    vim.fn.string(out)
  )
  -- no Python on PATH (see the top); XDG dirs of its own; no user config (--clean)
  local argv = {
    '/usr/bin/env',
    'PATH=' .. work .. '/no-bin',
    'XDG_DATA_HOME=' .. home .. '/data',
    'XDG_STATE_HOME=' .. home .. '/state',
    'XDG_CACHE_HOME=' .. home .. '/cache',
    'XDG_CONFIG_HOME=' .. home .. '/config',
    vim.v.progpath,
    '--headless',
    '--clean',
    '-n',
    '-i',
    'NONE',
    '-c',
    args,
    '-c',
    'luafile ' .. child_file,
  }
  local output = vim.fn.system(argv)
  T.log('%s child (exit %d): %s', manager, vim.v.shell_error, output)
  T.ok(vim.fn.filereadable(out) == 1, manager .. ': the child wrote its results')
  return vim.fn.json_decode(table.concat(vim.fn.readfile(out), '\n')), dir
end

T.run('test_layout', function()
  local work = vim.fn.tempname()
  vim.fn.mkdir(work .. '/no-bin', 'p')
  local want_version = vim.fn.systemlist({ T.env('SIDECAR_TEST_PYTHON'), '-m', 'sidecar', '--version' })[1]
  for _, m in ipairs({ { 'lazy', 'lazy.nvim' }, { 'packer', 'packer.nvim' } }) do
    local manager, doc_name = m[1], m[2]
    T.step(doc_name .. ': the documented spec installs and configures the plugin from a clone', function()
      local r, dir = run_child(manager, spec_from_docs(doc_name), work)
      T.log('%s: %s', manager, vim.inspect(r))
      T.eq(type(r.repository), 'string', 'the spec names the repository first')
      -- :SidecarInstall, the hook's last line, says "no Python" at ERROR level, which headless Neovim raises
      T.ok(
        r.hook_ok or tostring(r.hook_err):find('sidecar: no Python 3.11 or newer found', 1, true) ~= nil,
        'the install hook ran to :SidecarInstall: ' .. tostring(r.hook_err)
      )
      T.ok(r.commands, 'the :Sidecar… commands exist after the install hook')
      T.ok(r.tags, 'the install hook built editors/nvim/doc/tags')
      T.eq(r.repo_root, dir, ':SidecarInstall installs from the clone')
      T.contains(r.install_log, 'installing from ' .. dir, 'the install log names the clone')
      T.match(r.install_status or '', '^failed: no Python', 'without Python the install stops at its first step')
      T.ok(r.config_ok, 'the config hook ran: ' .. tostring(r.config_err))
      T.ok(r.setup_called, "the config hook called require('sidecar').setup()")
      T.ok(r.help_ok, ':help sidecar works')
      T.eq(r.help_file, dir .. '/editors/nvim/doc/sidecar.txt', ":help sidecar opens the clone's help file")
      T.eq('sidecar ' .. tostring(r.version), want_version, 'the plugin reports the version of its checkout')
    end)
  end
  vim.fn.delete(work, 'rf')
end)
