-- Preview, edit and apply a summary in a real terminal: a second Neovim runs in tmux with the documented setup and is
-- driven by keys; :SidecarCompress preview shows the proposed summary in a buffer, the user rewrites it, `:w` applies
-- it without a prompt, and the model's next request carries the edited text. Then :SidecarCompress up-to (a message of
-- yours picked in the vim.ui.select list) and :SidecarModel (a model picked the same way) show their results on the
-- command line and in the statusline, with no Press-ENTER prompt left behind. Every wait is on the screen.
local T = require('sidecar_test')

local SOCKET = 'sidecar-test-compaction-' .. vim.fn.getpid()

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

--- The screen's last non-empty line: where Neovim echoes a message.
local function command_line()
  local lines = vim.split(vim.trim(screen()), '\n', { plain = true })
  return lines[#lines] or ''
end

local function keys(...)
  tmux(vim.list_extend({ 'send-keys', '-t', 'nv' }, { ... }))
end

local function write(path, lines)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  vim.fn.writefile(lines, path)
end

T.run('test_terminal_compaction', function()
  T.ok(vim.fn.executable('tmux') == 1, 'tmux is installed (editors/nvim/tests/install-nvim.sh installs it)')
  T.fake_reset()
  local home = vim.fn.tempname() .. '-term'
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

  local function stop()
    tmux({ 'kill-server' })
    T.wait(function()
      local _, code = tmux({ 'has-session' })
      return code ~= 0
    end, 10000, 'the tmux server gone')
  end

  local ok, err = pcall(function()
    T.step(':SidecarCompress preview, the summary rewritten in its buffer, :w applies it', function()
      local _, code = tmux({ 'new-session', '-d', '-s', 'nv', '-x', '110', '-y', '45', cmd })
      T.eq(code, 0, 'tmux started')
      wait_screen('✦', 30000, 'the statusline')
      for _, word in ipairs({ 'ALPHA', 'BRAVO', 'CHARLIE' }) do
        keys(':SidecarSend ' .. word .. ' is a step' .. string.rep(' of the plan', 50), 'Enter')
        wait_screen('you said "' .. word, 30000, 'the reply to ' .. word)
      end
      keys(':SidecarCompress preview', 'Enter')
      local s = wait_screen('<state_snapshot>', 60000, 'the proposed summary in its buffer')
      T.ok(s:find('compaction-preview', 1, true), 'the preview buffer is in sight\n' .. s)
      T.ok(s:find(':w applies it', 1, true), 'the notice says how to apply it\n' .. s)
      keys('gg', 'd', 'G', 'i', 'EDITED-IN-TERMINAL keep the charlie step', 'Escape')
      wait_screen('EDITED-IN-TERMINAL keep the charlie step', 10000, 'the edit')
      keys(':w', 'Enter')
      s = wait_screen('Chat history compressed', 60000, 'the summary applied')
      T.log('the screen after :w:\n%s', s)
      T.ok(not s:find('Press ENTER', 1, true), 'no Press-ENTER prompt\n' .. s)
      T.ok(not s:match('E%d+:'), 'no error message\n' .. s)
      T.ok(not s:find('compaction-preview', 1, true), 'the preview buffer closed\n' .. s)
      T.fake_reset()
      keys(':SidecarSend what now', 'Enter')
      wait_screen('you said "what now', 30000, 'the reply after the compaction')
      local sent = ''
      for _, r in ipairs(T.fake_requests()) do
        if r.kind == 'stream' then
          sent = vim.json.encode(r.body.contents)
        end
      end
      T.contains(sent, 'EDITED-IN-TERMINAL keep the charlie step', 'the edited summary reached the model')
    end)

    T.step(':SidecarCompress up-to: a message of yours picked in the list, the result shown, no prompt left', function()
      for _, word in ipairs({ 'DELTA', 'ECHO', 'FOXTROT' }) do
        keys(':SidecarSend ' .. word .. ' is a step' .. string.rep(' of the plan', 50), 'Enter')
        wait_screen('you said "' .. word, 30000, 'the reply to ' .. word)
      end
      T.wait(function()
        return not command_line():find('Chat history compressed', 1, true)
      end, 10000, 'the earlier compaction message gone from the command line')
      keys(':SidecarCompress up-to', 'Enter')
      local s = wait_screen('Summarise everything before', 30000, 'the list of your messages')
      T.log('the message picker:\n%s', s)
      local n = s:match('(%d+): [^\n]*FOXTROT is a step')
      T.ok(n, 'FOXTROT is in the list\n' .. s)
      keys(n, 'Enter')
      T.wait(function()
        return command_line():find('sidecar: Chat history compressed', 1, true)
      end, 60000, 'the up-to compaction result on the command line')
      s = screen()
      T.log('the screen after picking:\n%s', s)
      T.ok(not s:find('Press ENTER', 1, true), 'no Press-ENTER prompt\n' .. s)
      T.ok(not s:find('Type number', 1, true), 'the list is gone\n' .. s)
      T.ok(not s:match('E%d+:'), 'no error message\n' .. s)
      T.fake_reset()
      keys(':SidecarSend after the cut', 'Enter')
      wait_screen('you said "after the cut', 30000, 'the reply after the up-to compaction')
      local sent = ''
      for _, r in ipairs(T.fake_requests()) do
        if r.kind == 'stream' then
          sent = vim.json.encode(r.body.contents)
        end
      end
      local said = function(word)
        return word .. ' is a step' .. string.rep(' of the plan', 50)
      end
      T.contains(sent, said('FOXTROT'), 'the picked message is kept word for word')
      T.ok(not sent:find(said('DELTA'), 1, true), 'what came before it is summarised, not kept\n' .. sent)
    end)

    T.step(':SidecarModel: a model picked in the list, the switch confirmed on the screen', function()
      local before = screen()
      T.ok(not before:find('/256K', 1, true), 'the statusline does not show a 256K window yet\n' .. before)
      keys(':SidecarModel', 'Enter')
      local s = wait_screen('Type number', 30000, 'the list of models')
      T.log('the model picker:\n%s', s)
      T.ok(s:find('Model', 1, true), 'the list is titled Model\n' .. s)
      T.ok(not s:find('gemini-embedding-001', 1, true), 'no model that cannot chat\n' .. s)
      local n = s:match('(%d+): [^\n]*gemma%-4%-31b%-it')
      T.ok(n, 'gemma-4-31b-it is in the list\n' .. s)
      keys(n, 'Enter')
      s = wait_screen('Model switched to gemma-4-31b-it', 30000, 'the switch confirmed')
      T.log('the screen after the switch:\n%s', s)
      T.ok(not s:find('Press ENTER', 1, true), 'no Press-ENTER prompt\n' .. s)
      T.ok(not s:find('Type number', 1, true), 'the list is gone\n' .. s)
      T.ok(not s:match('E%d+:'), 'no error message\n' .. s)
      wait_screen('/256K', 20000, "the statusline with the new model's window")
      keys(':qa!', 'Enter')
    end)
  end)
  stop()
  if not ok then
    error(err, 0)
  end
end)
