-- The plan block as a user sees it, in a real terminal: a second Neovim (this version) runs in tmux with the
-- documented setup, the fake Gemini scripts a turn that sets the todo list, writes a file (the turn waits for the
-- user's answer: the list is on screen while the turn runs) and sets the list again; the screen is read with
-- `tmux capture-pane` and every wait is on what the screen shows.
local T = require('sidecar_test')

local SOCKET = 'sidecar-plan-test-' .. vim.fn.getpid()

local function tmux(args)
  local out = vim.fn.system(vim.list_extend({ 'tmux', '-L', SOCKET }, args))
  return out, vim.v.shell_error
end

local function screen()
  return (tmux({ 'capture-pane', '-p', '-t', 'nv' }))
end

--- Wait until the screen shows `text` (plain); returns the screen.
local function wait_screen(text, ms, what)
  local last = ''
  local ok, err = pcall(T.wait, function()
    last = screen()
    return last:find(text, 1, true) and last
  end, ms or 20000, what or text)
  if not ok then
    error(tostring(err) .. '\n---- screen ----\n' .. last, 2)
  end
  return last
end

local function keys(...)
  tmux(vim.list_extend({ 'send-keys', '-t', 'nv' }, { ... }))
end

local function write(path, lines)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  vim.fn.writefile(lines, path)
end

local function stop()
  tmux({ 'kill-server' })
  T.wait(function()
    local _, code = tmux({ 'has-session' })
    return code ~= 0
  end, 10000, 'the tmux server gone')
end

T.run('test_terminal_plan', function()
  T.ok(vim.fn.executable('tmux') == 1, 'tmux is installed (editors/nvim/tests/install-nvim.sh installs it)')
  local home = vim.fn.tempname() .. '-plan'
  local plugin = vim.fn.fnamemodify(vim.api.nvim_get_runtime_file('plugin/sidecar.lua', false)[1], ':p:h:h')
  write(
    home .. '/bin/sidecar',
    { '#!/bin/sh', 'exec ' .. vim.fn.shellescape(T.env('SIDECAR_TEST_PYTHON')) .. ' -m sidecar "$@"' }
  )
  vim.fn.setfperm(home .. '/bin/sidecar', 'rwxr-xr-x')
  write(home .. '/init.lua', {
    'vim.opt.rtp:append(' .. vim.inspect(plugin) .. ')',
    "vim.cmd('runtime plugin/sidecar.lua')",
    'vim.opt.swapfile = false',
    'vim.opt.laststatus = 2',
    [[vim.cmd([=[set statusline=%f\ %m%=%{%v:lua.require'sidecar'.statusline({'highlight':v:true})%}]=])]],
    "require('sidecar').setup({})",
  })
  local project = home .. '/project'
  write(project .. '/main.py', { 'print("hello")', '' })
  vim.fn.mkdir(project .. '/.git', 'p')

  local env = {
    'PATH=' .. home .. '/bin:' .. vim.env.PATH,
    'XDG_CONFIG_HOME=' .. home .. '/config',
    'XDG_DATA_HOME=' .. home .. '/data',
    'XDG_STATE_HOME=' .. home .. '/state',
    'XDG_CACHE_HOME=' .. home .. '/cache',
    'SIDECAR_HOME=' .. home .. '/sidecar-home',
    'PYTHONPATH=' .. (vim.env.PYTHONPATH or ''),
    'TERM=xterm-256color',
    'GEMINI_API_KEY=dummy',
    'GOOGLE_GEMINI_BASE_URL=' .. T.env('SIDECAR_TEST_BASEURL'),
  }
  local cmd = 'cd '
    .. vim.fn.shellescape(project)
    .. ' && exec env -u GOOGLE_API_KEY '
    .. table.concat(vim.tbl_map(vim.fn.shellescape, env), ' ')
    .. ' '
    .. vim.fn.shellescape(vim.v.progpath)
    .. ' --clean -n -u '
    .. vim.fn.shellescape(home .. '/init.lua')
    .. ' main.py'

  local ok, err = pcall(function()
    T.step('the plan block shows the todo list while the turn runs and follows its update', function()
      T.fake_reset()
      local todos = function(first, second)
        return {
          { description = 'PLAN-ONE read main', status = first },
          { description = 'PLAN-TWO write notes', status = second },
        }
      end
      T.http('POST', '/_control/script', {
        steps = {
          {
            kind = 'function_call',
            match = 'chat',
            name = 'write_todos',
            id = 'plan-1',
            args = { todos = todos('in_progress', 'pending') },
          },
          {
            kind = 'function_call',
            match = 'chat',
            name = 'write_file',
            id = 'plan-2',
            args = { path = 'notes.txt', content = 'noted\n' },
          },
          {
            kind = 'function_call',
            match = 'chat',
            name = 'write_todos',
            id = 'plan-3',
            args = { todos = todos('completed', 'in_progress') },
          },
        },
      })
      local _, code = tmux({ 'new-session', '-d', '-s', 'nv', '-x', '100', '-y', '40', cmd })
      T.eq(code, 0, 'tmux started')
      wait_screen('✦', 30000, 'the statusline')
      keys(':SidecarSend plan it, write the notes, update the plan', 'Enter')
      -- the turn waits for the answer to the write: the first list is on screen meanwhile
      local s = wait_screen(':SidecarConfirm', 30000, 'the notice of the question')
      s = wait_screen('Plan (0/2 done)', 15000, 'the plan block during the turn')
      T.log('the screen while the turn waits:\n%s', s)
      T.ok(s:find('[>] 1. PLAN-ONE read main (in progress)', 1, true), 'the item in progress\n' .. s)
      T.ok(s:find('[ ] 2. PLAN-TWO write notes (pending)', 1, true), 'the pending item\n' .. s)
      keys(':SidecarConfirm', 'Enter')
      wait_screen('Allow always', 30000, 'the choices')
      keys('1', 'Enter')
      s = wait_screen('Plan (1/2 done)', 30000, 'the plan block updated by the same turn')
      T.log('the screen after the update:\n%s', s)
      T.ok(s:find('[x] 1. PLAN-ONE read main (done)', 1, true), 'the first item done\n' .. s)
      T.ok(s:find('[>] 2. PLAN-TWO write notes (in progress)', 1, true), 'the second in progress\n' .. s)
      T.ok(not s:find('Plan (0/2 done)', 1, true), 'one block, the old list gone\n' .. s)
      keys(':qa!', 'Enter')
      stop()
    end)
  end)
  stop()
  if not ok then
    error(err, 0)
  end
end)
