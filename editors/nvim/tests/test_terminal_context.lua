-- What a user sees of :SidecarContext in a real terminal: a second Neovim (this version) runs in tmux with the
-- documented setup({}), chats once, opens the context float and closes it; the screen is read with
-- `tmux capture-pane` and every wait is on what the screen shows.
local T = require('sidecar_test')

local SOCKET = 'sidecar-ctx-' .. vim.fn.getpid()

local function tmux(args)
  local out = vim.fn.system(vim.list_extend({ 'tmux', '-L', SOCKET }, args))
  return out, vim.v.shell_error
end

local function screen()
  return (tmux({ 'capture-pane', '-p', '-t', 'nv' }))
end

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

T.run('test_terminal_context', function()
  T.ok(vim.fn.executable('tmux') == 1, 'tmux is installed (editors/nvim/tests/install-nvim.sh installs it)')
  local home = vim.fn.tempname() .. '-ctx'
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
  write(project .. '/main.py', { 'print("hi")', '' })
  write(project .. '/GEMINI.md', { 'PROJECT_RULE: tabs, not spaces.' })
  vim.fn.mkdir(project .. '/.git', 'p')
  local env = {
    'PATH=' .. home .. '/bin:' .. vim.env.PATH,
    'XDG_CONFIG_HOME=' .. home .. '/config',
    'XDG_DATA_HOME=' .. home .. '/data',
    'XDG_STATE_HOME=' .. home .. '/state',
    'XDG_CACHE_HOME=' .. home .. '/cache',
    'SIDECAR_HOME=' .. home .. '/sidecar-home',
    'HOME=' .. home,
    'PYTHONPATH=' .. (vim.env.PYTHONPATH or ''),
    'TERM=xterm-256color',
  }
  local cmd = 'cd '
    .. vim.fn.shellescape(project)
    .. ' && exec env -u GEMINI_API_KEY -u GOOGLE_API_KEY '
    .. table.concat(vim.tbl_map(vim.fn.shellescape, env), ' ')
    .. ' '
    .. vim.fn.shellescape(vim.v.progpath)
    .. ' --clean -n -u '
    .. vim.fn.shellescape(home .. '/init.lua')
    .. ' main.py'
  local ok, err = pcall(function()
    T.step(':SidecarContext shows the rows in a float; q closes it', function()
      local _, code = tmux({ 'new-session', '-d', '-s', 'nv', '-x', '120', '-y', '40', cmd })
      T.eq(code, 0, 'tmux started')
      wait_screen('(fake)', 30000, 'the statusline with the usage')
      keys(':SidecarSend hello there', 'Enter')
      wait_screen('you said "hello there"', 30000, 'the reply in the chat')
      keys(':SidecarContext', 'Enter')
      local s = wait_screen('Free in the window', 20000, 'the context float')
      T.log('the context float:\n%s', s)
      for _, want in ipairs({ 'Context window:', 'System prompt', 'Built-in tools', 'GEMINI.md (project)', 'Messages' }) do
        T.ok(s:find(want, 1, true), 'the float shows ' .. want .. '\n' .. s)
      end
      T.ok(s:find('█', 1, true), 'with bars\n' .. s)
      T.ok(not s:find('Press ENTER', 1, true) and not s:match('E%d+:'), 'no prompt, no error\n' .. s)
      keys('q')
      T.wait(function()
        return not screen():find('Free in the window', 1, true)
      end, 10000, 'the float closed')
      keys(':qa!', 'Enter')
    end)
  end)
  tmux({ 'kill-server' })
  if not ok then
    error(err, 0)
  end
end)
