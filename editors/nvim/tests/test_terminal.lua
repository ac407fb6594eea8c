-- What a user sees, in a real terminal: a second Neovim (this version) runs in tmux with the documented setup and is
-- driven by keys; the screen is read with `tmux capture-pane` and every wait is on what the screen shows.
-- setup({}) starts without a warning or a Press-ENTER prompt (the embedded fake's long notice fits one line);
-- the chat; a tool confirmation with its diff in sight above the choices; no prompt after the edit.
-- A confirmation never takes keys typed in another buffer: it waits for :SidecarConfirm while Insert mode goes on.
local T = require('sidecar_test')

local SOCKET = 'sidecar-test-' .. vim.fn.getpid()
local PROMPT = 'Press ENTER'

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

--- The screen must hold no hit-enter prompt and no error message.
local function calm(s, what)
  T.ok(not s:find(PROMPT, 1, true), what .. ': no Press-ENTER prompt\n' .. s)
  T.ok(not s:match('E%d+:'), what .. ': no error message\n' .. s)
end

local function write(path, lines)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  vim.fn.writefile(lines, path)
end

T.run('test_terminal', function()
  T.ok(vim.fn.executable('tmux') == 1, 'tmux is installed (editors/nvim/tests/install-nvim.sh installs it)')
  local home = vim.fn.tempname() .. '-term'
  local plugin = vim.fn.fnamemodify(vim.api.nvim_get_runtime_file('plugin/sidecar.lua', false)[1], ':p:h:h')
  -- `sidecar` on PATH, as after `pipx install`: the documented setup({}) finds it
  write(
    home .. '/bin/sidecar',
    { '#!/bin/sh', 'exec ' .. vim.fn.shellescape(T.env('SIDECAR_TEST_PYTHON')) .. ' -m sidecar "$@"' }
  )
  vim.fn.setfperm(home .. '/bin/sidecar', 'rwxr-xr-x')
  -- init.lua as docs/neovim.md tells users: the plugin on 'runtimepath', the statusline from the help file, setup({})
  write(home .. '/init.lua', {
    'vim.opt.rtp:append(' .. vim.inspect(plugin) .. ')',
    "vim.cmd('runtime plugin/sidecar.lua')",
    'vim.opt.swapfile = false',
    'vim.opt.laststatus = 2',
    [[vim.cmd([=[set statusline=%f\ %m%=%{%v:lua.require'sidecar'.statusline({'highlight':v:true})%}]=])]],
    "require('sidecar').setup({})",
  })
  local project = home .. '/project'
  write(project .. '/main.py', { 'def greet(name):', '    message = "hello " + name', '    return message', '' })
  vim.fn.mkdir(project .. '/.git', 'p')

  -- lazy.nvim's documented spec on the first start: the plugin is loaded (config: setup) and then built (build:
  -- :SidecarInstall), in one go; nothing is installed yet and no `sidecar` is on PATH
  write(home .. '/init-lazy.lua', {
    'vim.opt.rtp:append(' .. vim.inspect(plugin) .. ')',
    "vim.cmd('runtime plugin/sidecar.lua')",
    'vim.opt.swapfile = false',
    "require('sidecar').setup({})",
    "vim.cmd('SidecarInstall')",
  })

  local function start(extra_env, init)
    local env = {
      'PATH=' .. home .. '/bin:' .. vim.env.PATH,
      'XDG_CONFIG_HOME=' .. home .. '/config',
      'XDG_DATA_HOME=' .. home .. '/data',
      'XDG_STATE_HOME=' .. home .. '/state',
      'XDG_CACHE_HOME=' .. home .. '/cache',
      'SIDECAR_HOME=' .. home .. '/sidecar-home',
      'PYTHONPATH=' .. (vim.env.PYTHONPATH or ''),
      'TERM=xterm-256color',
    }
    vim.list_extend(env, extra_env or {})
    local cmd = 'cd '
      .. vim.fn.shellescape(project)
      .. ' && exec env -u GEMINI_API_KEY -u GOOGLE_API_KEY '
      .. table.concat(vim.tbl_map(vim.fn.shellescape, env), ' ')
      .. ' '
      .. vim.fn.shellescape(vim.v.progpath)
      .. ' --clean -n -u '
      .. vim.fn.shellescape(init or (home .. '/init.lua'))
      .. ' main.py'
    local _, code = tmux({ 'new-session', '-d', '-s', 'nv', '-x', '100', '-y', '40', cmd })
    T.eq(code, 0, 'tmux started')
  end

  --- Stop the tmux server and wait until it is gone: a new-session sent while it exits fails.
  local function stop()
    tmux({ 'kill-server' })
    T.wait(function()
      local _, code = tmux({ 'has-session' })
      return code ~= 0
    end, 10000, 'the tmux server gone')
  end

  --- :SidecarStatus until its report shows `text`, each report dismissed; returns the last report's screen.
  local function status_until(text, ms)
    local deadline = vim.loop.now() + ms
    while true do
      keys(':SidecarStatus', 'Enter')
      local s = wait_screen('Auto-compress at:', 10000, ':SidecarStatus')
      keys('Enter')
      T.wait(function()
        return not screen():find('Auto-compress at:', 1, true)
      end, 10000, 'the report dismissed')
      if s:find(text, 1, true) then
        return s
      end
      if vim.loop.now() > deadline then
        error(string.format('timed out after %d ms waiting for %q in :SidecarStatus\n%s', ms, text, s), 2)
      end
    end
  end

  local ok, err = pcall(function()
    T.step('#1 #2 the documented setup({}) starts with no warning and no prompt; the chat answers', function()
      start()
      -- the statusline shows the usage once the server runs; "(fake)": the embedded fake answers
      local s = wait_screen('(fake)', 30000, 'the statusline with the usage')
      T.log('the screen after start-up:\n%s', s)
      T.ok(s:match('✦ %d+%%'), 'the statusline: ' .. s)
      calm(s, 'after start-up')
      keys(':SidecarSend hello there', 'Enter')
      s = wait_screen('you said "hello there"', 30000, 'the reply in the chat')
      -- the embedded fake's ~260-character notice came with the first reply: one line at most, never a prompt
      s = wait_screen('embedded offline fake', 10000, 'the notice, whole, in the chat')
      calm(s, 'after the first reply')
      keys(':messages', 'Enter')
      s = wait_screen('sidecar:', 10000, 'the messages')
      T.ok(not s:find('invalid', 1, true), 'no settings warning in :messages\n' .. s)
      keys('Escape')
      -- :SidecarStatus is a report the user asked for (it may end in a prompt, like :ls); the turn's usage comes
      -- after its reply is shown, so the report is asked again until it has the reported count
      s = status_until('Source: api', 30000)
      keys(':qa!', 'Enter')
      stop()
    end)

    T.step('#5 #15 a confirmation shows the diff above the choices; no prompt after the edit', function()
      T.fake_reset()
      T.http('POST', '/_control/script', {
        steps = {
          {
            kind = 'function_call',
            match = 'chat',
            name = 'replace',
            args = { path = 'main.py', old_string = '    return message', new_string = '    return message.upper()' },
            id = 'call-t1',
          },
        },
      })
      start({ 'GEMINI_API_KEY=dummy', 'GOOGLE_GEMINI_BASE_URL=' .. T.env('SIDECAR_TEST_BASEURL') })
      local s = wait_screen('✦', 30000, 'the statusline')
      calm(s, 'after start-up with a backend')
      keys(':SidecarSend shout the greeting', 'Enter')
      wait_screen(':SidecarConfirm', 30000, 'the notice of the question')
      keys(':SidecarConfirm', 'Enter')
      s = wait_screen('Allow always', 30000, 'the choices')
      T.log('the screen while asked:\n%s', s)
      T.ok(s:find('+    return message.upper()', 1, true), 'the diff in sight while choosing\n' .. s)
      T.ok(s:find('-    return message', 1, true), 'the removed line too\n' .. s)
      keys('1', 'Enter')
      s = wait_screen('I received the tool result', 30000, 'the reply after the tool')
      T.ok(not s:find('Allow always', 1, true), 'the question is gone\n' .. s)
      T.ok(not s:find('Workspace edit', 1, true), 'no edit label printed\n' .. s)
      calm(s, 'after the edit')
      keys(':qa!', 'Enter')
      stop()
    end)

    T.step("#1 after `u` on the agent's unsaved edit, its next edit is planned on the buffer's text", function()
      T.fake_reset()
      T.http('POST', '/_control/script', {
        steps = {
          {
            kind = 'function_call',
            match = 'chat',
            name = 'replace',
            id = 'call-u1',
            args = {
              path = 'main.py',
              old_string = '    return message',
              new_string = '    return message\n    # noted once',
            },
          },
          { kind = 'delay', match = 'chat', seconds = 0 }, -- the reply after the tool result
          {
            kind = 'function_call',
            match = 'chat',
            name = 'replace',
            id = 'call-u2',
            args = { path = 'main.py', old_string = '    # noted once', new_string = '    # noted twice' },
          },
        },
      })
      start({ 'GEMINI_API_KEY=dummy', 'GOOGLE_GEMINI_BASE_URL=' .. T.env('SIDECAR_TEST_BASEURL') })
      wait_screen('✦', 30000, 'the statusline')
      keys(':SidecarSend add a note', 'Enter')
      wait_screen(':SidecarConfirm', 30000, 'the notice of the question')
      keys(':SidecarConfirm', 'Enter')
      wait_screen('Allow always', 30000, 'the choices')
      keys('1', 'Enter')
      wait_screen('I received the tool result', 30000, 'the reply after the edit')
      -- the user takes the edit back in main.py's window (unsaved, so only the buffer knows)
      keys(':lua vim.api.nvim_set_current_win(vim.fn.bufwinid("main.py"))', 'Enter')
      keys('u')
      wait_screen('; before #', 10000, 'the undo')
      keys(':SidecarSend note it again', 'Enter')
      local s = wait_screen('was not found in main.py', 30000, 'the edit refused: the note is no longer there')
      T.log('the screen after the refused edit:\n%s', s)
      keys(':wall', 'Enter')
      keys(':lua vim.g.sidecar_saved = 1', 'Enter')
      T.wait(function()
        return screen():find('sidecar_saved = 1', 1, true)
      end, 10000, 'the buffers written')
      T.eq(
        vim.fn.readfile(project .. '/main.py'),
        { 'def greet(name):', '    message = "hello " + name', '    return message', '' },
        'main.py holds the text the user kept, nothing built on the undone edit'
      )
      calm(s, 'after the refused edit')
      keys(':qa!', 'Enter')
      stop()
    end)

    T.step('#2 :SidecarRewind! names an unsaved change in a buffer as a conflict and keeps it', function()
      T.fake_reset()
      T.http('POST', '/_control/script', {
        steps = {
          {
            kind = 'function_call',
            match = 'chat',
            name = 'replace',
            id = 'call-r1',
            args = {
              path = 'main.py',
              old_string = '    return message',
              new_string = '    return message.title()',
            },
          },
        },
      })
      start({ 'GEMINI_API_KEY=dummy', 'GOOGLE_GEMINI_BASE_URL=' .. T.env('SIDECAR_TEST_BASEURL') })
      wait_screen('✦', 30000, 'the statusline')
      keys(':SidecarSend title case it', 'Enter')
      wait_screen(':SidecarConfirm', 30000, 'the notice of the question')
      keys(':SidecarConfirm', 'Enter')
      wait_screen('Allow always', 30000, 'the choices')
      keys('1', 'Enter')
      wait_screen('I received the tool result', 30000, 'the reply after the edit')
      -- the user adds a line by hand in main.py and does not save
      keys(':lua vim.api.nvim_set_current_win(vim.fn.bufwinid("main.py"))', 'Enter')
      keys('G', 'o', '# mine, unsaved', 'Escape')
      wait_screen('# mine, unsaved', 10000, 'the hand edit')
      keys(':SidecarRewind!', 'Enter')
      wait_screen('title case it', 30000, 'the message to rewind to')
      keys('1', 'Enter')
      local s = wait_screen('Overwrite my changes too', 30000, 'the choices with a conflict')
      T.log('the screen while asked to rewind:\n%s', s)
      T.ok(s:find('main.py — changed since', 1, true), "main.py named as changed since the agent's edit\n" .. s)
      keys('1', 'Enter') -- restore others, keep conflicting files
      wait_screen('kept main.py', 30000, 'the note: main.py kept')
      keys(':wall', 'Enter')
      keys(':lua vim.g.sidecar_saved = 2', 'Enter')
      T.wait(function()
        return screen():find('sidecar_saved = 2', 1, true)
      end, 10000, 'the buffers written')
      local lines = vim.fn.readfile(project .. '/main.py')
      T.ok(vim.tbl_contains(lines, '# mine, unsaved'), 'the unsaved change is kept: ' .. vim.inspect(lines))
      T.ok(vim.tbl_contains(lines, '    return message.title()'), "and the agent's edit it was made on")
      keys(':qa!', 'Enter')
      stop()
      write(project .. '/main.py', { 'def greet(name):', '    message = "hello " + name', '    return message', '' })
    end)

    T.step('#4 a question that wraps in the confirmation float leaves the end of the diff in sight', function()
      T.fake_reset()
      local long = 'notes/' .. string.rep('a-rather-long-folder-name/', 3) .. 'GEMINI.md'
      T.http('POST', '/_control/script', {
        steps = {
          {
            kind = 'function_call',
            match = 'chat',
            name = 'write_file',
            id = 'call-w4',
            args = { path = long, content = '# Notes\nthe added line at the end\n' },
          },
        },
      })
      start({ 'GEMINI_API_KEY=dummy', 'GOOGLE_GEMINI_BASE_URL=' .. T.env('SIDECAR_TEST_BASEURL') })
      wait_screen('✦', 30000, 'the statusline')
      keys(':SidecarSend write the notes', 'Enter')
      wait_screen(':SidecarConfirm', 30000, 'the notice of the question')
      keys(':SidecarConfirm', 'Enter')
      local s = wait_screen('2: Deny', 30000, 'the choices (a file that instructs the agent: no allow always)')
      T.log('the screen while asked:\n%s', s)
      local float = s:match('┌.-└') or ''
      T.ok(float:find('+the added line at the end', 1, true), "the diff's last line in sight in the float\n" .. s)
      keys('2', 'Enter')
      wait_screen('denied', 30000, 'the denial')
      keys(':qa!', 'Enter')
      stop()
    end)

    T.step("#3 the first start in lazy.nvim's order: the install runs, no Press-ENTER prompt before it", function()
      -- no index: the install stops at its third step (pip), after the two this step watches
      start(
        { 'PATH=/usr/bin:/bin', 'PIP_NO_INDEX=1', 'XDG_DATA_HOME=' .. home .. '/data-lazy' },
        home .. '/init-lazy.lua'
      )
      local s = wait_screen('installing (2/3)', 30000, 'the install creating its environment')
      T.log('the screen while installing:\n%s', s)
      calm(s, 'at the first start')
      T.ok(not s:find('exit code', 1, true), 'no failed start of a server not installed yet\n' .. s)
      keys(':qa!', 'Enter')
      stop()
    end)

    T.step('keys typed in Insert mode while a question arrives stay in the buffer and answer nothing', function()
      T.fake_reset()
      T.http('POST', '/_control/script', {
        steps = {
          {
            kind = 'function_call',
            match = 'chat',
            name = 'run_shell_command',
            args = { command = 'touch APPROVED' },
            id = 'call-t2',
          },
        },
      })
      start({ 'GEMINI_API_KEY=dummy', 'GOOGLE_GEMINI_BASE_URL=' .. T.env('SIDECAR_TEST_BASEURL') })
      wait_screen('✦', 30000, 'the statusline')
      keys(':edit notes.txt', 'Enter')
      wait_screen('\nnotes.txt ', 10000, 'the new buffer in the statusline')
      -- the message goes, and the user is already typing (Insert mode) when its question arrives
      keys(':SidecarSend run the command', 'Enter', 'i')
      local typed, s = 0, ''
      local deadline = vim.loop.now() + 30000
      while vim.loop.now() < deadline do
        keys('-l', '1. first step')
        keys('Enter')
        typed = typed + 1
        s = screen()
        if s:find(':SidecarConfirm', 1, true) then
          break
        end
      end
      T.ok(s:find(':SidecarConfirm', 1, true), 'the question was announced while typing\n' .. s)
      keys('-l', '1. first step') -- and the user goes on typing after the notice
      keys('Enter', 'Escape')
      typed = typed + 1
      keys(':write', 'Enter')
      s = wait_screen('written', 10000, 'notes.txt saved')
      T.log('the screen after typing through the question:\n%s', s)
      T.ok(not s:find('Allow always', 1, true), 'no choices were shown by themselves\n' .. s)
      local lines = vim.fn.readfile(project .. '/notes.txt')
      local want = {}
      for _ = 1, typed do
        want[#want + 1] = '1. first step'
      end
      want[#want + 1] = ''
      T.eq(lines, want, 'every key typed landed in the buffer')
      T.eq(vim.fn.filereadable(project .. '/APPROVED'), 0, 'nothing was approved')
      calm(s, 'after typing through the question')
      -- now the user answers, deliberately
      keys(':SidecarConfirm', 'Enter')
      s = wait_screen('Allow always', 10000, 'the choices, when asked for')
      T.ok(s:find('touch APPROVED', 1, true), 'the question shows the command\n' .. s)
      T.eq(vim.fn.filereadable(project .. '/APPROVED'), 0, 'still nothing approved while the choices are shown')
      keys('1', 'Enter')
      T.wait(function()
        return vim.fn.filereadable(project .. '/APPROVED') == 1
      end, 30000, 'the approved command ran')
      s = wait_screen('I received the tool result', 30000, 'the reply after the tool')
      calm(s, 'after the answer')
      keys(':qa!', 'Enter')
      stop()
    end)
  end)
  stop()
  if not ok then
    error(err, 0)
  end
end)
