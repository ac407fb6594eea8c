-- What a newcomer trips on, headless: the documented minimal setup warns about nothing; long notices fit
-- one line (the rest goes to the chat); help works where the plugin was cloned; pickers show local times, first words
-- and branches; notes land in the running turn; :SidecarStatus, the delete advice, the health advice, the log file,
-- :SidecarUpdate's restart hint and the new chat's hint. (What the screen shows: test_terminal.lua, in tmux.)
local T = require('sidecar_test')

--- Lines added to :messages since `mark` (a count from messages_mark()).
local function messages_mark()
  return #vim.split(vim.fn.execute('messages'), '\n', { plain = true })
end

local function messages_since(mark)
  local lines = vim.split(vim.fn.execute('messages'), '\n', { plain = true })
  return { unpack(lines, mark + 1) }
end

--- Capture vim.notify calls until the returned function is called.
local function capture_notify()
  local got, orig = {}, vim.notify
  vim.notify = function(msg, level)
    got[#got + 1] = { msg = msg, level = level }
    return orig(msg, level)
  end
  return got, function()
    vim.notify = orig
  end
end

T.run('test_newcomer', function()
  local chat = require('sidecar.chat')
  local pickers = require('sidecar.pickers')
  local ui = require('sidecar.ui')

  T.step('#6 :help sidecar works from a fresh clone (doc/tags is made when missing)', function()
    -- a copy of the plugin as a plugin manager clones it: no doc/tags (it is not in the repository)
    local here = vim.api.nvim_get_runtime_file('plugin/sidecar.lua', false)[1]
    local plugin = vim.fn.fnamemodify(here, ':p:h:h')
    local copy = vim.fn.tempname() .. '-clone'
    vim.fn.mkdir(copy .. '/plugin', 'p')
    vim.fn.mkdir(copy .. '/doc', 'p')
    vim.fn.writefile(vim.fn.readfile(plugin .. '/plugin/sidecar.lua'), copy .. '/plugin/sidecar.lua')
    vim.fn.writefile(vim.fn.readfile(plugin .. '/doc/sidecar.txt'), copy .. '/doc/sidecar.txt')
    T.eq(vim.fn.filereadable(copy .. '/doc/tags'), 0, 'no tags in the clone')
    vim.g.loaded_sidecar = nil
    vim.cmd('source ' .. vim.fn.fnameescape(copy .. '/plugin/sidecar.lua'))
    T.eq(vim.fn.filereadable(copy .. '/doc/tags'), 1, 'tags generated when the plugin loaded')
    local saved = vim.o.runtimepath
    vim.opt.runtimepath:remove(plugin) -- only the clone can answer :help sidecar
    vim.opt.runtimepath:prepend(copy)
    local ok, err = pcall(vim.cmd, 'help sidecar-chat')
    vim.o.runtimepath = saved
    T.ok(ok, ':help sidecar-chat: ' .. tostring(err))
    T.eq(vim.fn.expand('%:t'), 'sidecar.txt', 'the help file opened')
    vim.cmd('helpclose')
  end)

  T.step('#2 a long notice is one line that fits, and whole in the chat', function()
    local long = 'no Gemini backend is configured, so replies come from the embedded offline fake Gemini. '
      .. 'Set sidecar.apiKey or GEMINI_API_KEY to talk to the Gemini API, or GOOGLE_GENAI_USE_VERTEXAI=true '
      .. '(or sidecar.backend "vertex") with a project for Vertex AI.'
    local got, restore = capture_notify()
    require('sidecar.handlers')['window/showMessage'](
      nil,
      { type = 3, message = 'Sidecar: ' .. long },
      { client_id = 0 }
    )
    restore()
    T.eq(#got, 1, 'one notice')
    T.ok(not got[1].msg:find('\n'), 'one line')
    T.ok(vim.fn.strdisplaywidth(got[1].msg) < vim.v.echospace, 'fits the command line: ' .. got[1].msg)
    T.contains(chat.text(), long, 'the whole text in the chat')
    local short = 'resumed session s1 (3 messages)'
    got, restore = capture_notify()
    ui.tell(short)
    restore()
    T.eq(got[1].msg, 'sidecar: ' .. short, 'a short notice as it is')
  end)

  T.step('#17 a new chat says what to do', function()
    T.contains(chat.text(), 'press Enter', 'the hint atop the chat')
    T.contains(chat.text(), ':help sidecar-chat', 'and where to read more')
  end)

  T.step('#4 #5 a note during a turn lands in it, where it happened; a diff is a fenced block', function()
    local turn = chat.begin_turn('write it')
    chat.on_delta({ turnId = 't-1', text = 'Let me write the file.' })
    chat.note('sidecar: allow tool write_file?\n```diff\n-old line\n+new line\n```')
    chat.note('tool write_file: allow')
    chat.note('tool write_file: allow') -- a second call of the same tool: said again
    chat.on_delta({ turnId = 't-1', text = 'Done: the file is written.' })
    chat.finish(turn, nil, { turnId = 't-1', text = 'Let me write the file.Done: the file is written.' })
    local text = chat.text()
    local before = text:find('Let me write the file.', 1, true)
    local diff = text:find('```diff\n-old line\n+new line\n```', 1, true)
    local after = text:find('Done: the file is written.', 1, true)
    T.ok(
      before and diff and after and before < diff and diff < after,
      'reply, diff, rest of the reply in that order: ' .. text
    )
    T.contains(text, '_sidecar: allow tool write_file?_', 'prose in italics')
    T.ok(not text:find('_+new line_', 1, true), 'diff lines as they are')
    local _, allowed = text:gsub('_tool write_file: allow_', '')
    T.eq(allowed, 2, 'each confirmation told')
    chat.note('a note between turns')
    T.match(chat.text(), 'Done: the file is written%.\n+_a note between turns_\n$', 'after the turn, at the end')
    -- a compaction message too long for the command line: cut there, once in the chat
    local long = 'Compression saved too little to be worth it (2,048 → 1,998 tokens, under 10%); the conversation is '
      .. 'unchanged, and automatic compression only truncates old tool outputs until a compression succeeds.'
    ui.on_compressed({
      status = 'COMPRESSION_FAILED_INSUFFICIENT_REDUCTION',
      message = long,
      trigger = 'auto',
      originalTokenCount = 2048,
      newTokenCount = 1998,
    })
    local _, times = chat.text():gsub(vim.pesc(long), '')
    T.eq(times, 1, 'the compaction message once in the chat')
  end)

  T.step('#7 #9 pickers: local time, first words, branches marked', function()
    local tz_hours = os.difftime(os.time(), os.time(os.date('!*t'))) / 3600
    local utc = '2026-03-04T10:20:30.123Z'
    local want = os.date(
      '%Y-%m-%d %H:%M',
      os.time({ year = 2026, month = 3, day = 4, hour = 10, min = 20, sec = 30 }) + tz_hours * 3600
    )
    T.eq(pickers.local_time(utc, '2000-01-01'), want, 'UTC ISO time in local time')
    T.eq(pickers.local_time('yesterday'), 'yesterday', 'other text as it is')
    local big = 'Please refactor the parser so that it keeps byte offsets. ' .. string.rep('More detail here. ', 250)
    T.ok(#big > 4000, 'a 4 KB message')
    local item = pickers.message_item({ id = 'm1', time = utc, text = big })
    T.ok(vim.fn.strchars(item) <= 80 and not item:find('\n'), 'one short line: ' .. item)
    T.match(item, '^' .. vim.pesc(want) .. '  Please refactor the parser', 'time and first words')
    local sessions = {
      { sessionId = 'aaaa1111-parent', title = 'Parser work', lastUpdated = utc, messageCount = 4 },
      {
        sessionId = 'bbbb2222-branch',
        title = 'Parser work (branch)',
        lastUpdated = utc,
        messageCount = 2,
        parentSessionId = 'aaaa1111-parent',
      },
    }
    local line = pickers.session_item(sessions[2], sessions, 'bbbb2222-branch')
    T.contains(line, '⑂ branch of Parser work', 'a branch names its parent')
    T.contains(line, '[current]', 'the live one marked')
    T.ok(not line:find('T10:20', 1, true), 'no raw ISO time: ' .. line)
    T.ok(not pickers.session_item(sessions[1], sessions):find('branch', 1, true), 'the parent is no branch')
  end)

  T.step('#16 :SidecarStatus shows what the tooltip shows', function()
    local state = require('sidecar.state')
    state.usage = {
      sessionId = 's1',
      model = 'gemini-2.5-flash',
      promptTokenCount = 471234,
      tokenLimit = 1048576,
      percentUsed = 44.9,
      compressionThreshold = 0.5,
      source = 'api',
      backend = 'Gemini API',
      cachedTokenCount = 120000,
    }
    state.last_compressed = { status = 'COMPRESSED', originalTokenCount = 9120, newTokenCount = 2310, trigger = 'auto' }
    local mark = messages_mark()
    vim.cmd('SidecarStatus')
    local shown = table.concat(messages_since(mark), '\n')
    for _, want in ipairs({
      'Tokens: 471,234 / 1,048,576 (44.9% of the context window)',
      'Model: gemini-2.5-flash',
      'Backend: Gemini API',
      'Cached: 120,000 tokens',
      'Auto-compress at: 50% (524,288 tokens)',
      'Source: api (reported by Gemini',
      'Last compaction: compressed, 9,120 → 2,310 tokens (auto)',
    }) do
      T.contains(shown, want, ':SidecarStatus')
    end
    state.usage, state.last_compressed = nil, nil
  end)

  T.step('#16 the delete advice names the command that runs the server; health advises the environment', function()
    local actions = require('sidecar.actions')
    local state = require('sidecar.state')
    state.cmd = { '/home/u/.local/share/nvim/sidecar/venv/bin/python', '-m', 'sidecar' }
    local msg = 'Session s2 was moved to the trash; `sidecar sessions restore s2` brings it back within 30 days.'
    T.contains(
      actions.cli_advice(msg),
      "`'/home/u/.local/share/nvim/sidecar/venv/bin/python' '-m' 'sidecar' " .. 'sessions restore s2`',
      'the full command'
    )
    state.cmd = { 'sidecar' }
    T.eq(actions.cli_advice(msg), msg, '`sidecar` on PATH: as it is')
    state.cmd = nil
    local health =
      table.concat(vim.fn.readfile(vim.api.nvim_get_runtime_file('lua/sidecar/health.lua', false)[1]), '\n')
    T.ok(not health:find("'set $GEMINI_API_KEY, or settings.apiKey", 1, true), 'no advice to put the key in settings')
  end)

  T.step('#14 the default server command logs to a file (stderr: errors only)', function()
    local config = require('sidecar.config')
    local args = config.log_args(config.resolve({}))
    T.eq(args[1], '--log-file', 'a log file for the default command')
    T.match(args[2], '/sidecar%.log$', 'in the log folder: ' .. tostring(args[2]))
    T.eq(config.log_args(config.resolve({ cmd = { 'my-sidecar' } })), {}, 'not added to a command of your own')
    T.eq(config.log_args(config.resolve({ log_file = false })), {}, 'log_file = false: stderr')
  end)

  T.step('a misspelt setting is named, with the one it meant (the server ignores unknown names silently)', function()
    local config = require('sidecar.config')
    T.eq(config.unknown_settings({ compresionThreshold = 0.5, model = 'm', tokenlimit = 9, zzz = 1 }), {
      { name = 'compresionThreshold', suggestion = 'compressionThreshold' },
      { name = 'tokenlimit', suggestion = 'tokenLimit' },
      { name = 'zzz' },
    }, 'unknown settings')
    T.eq(config.unknown_settings({}), {}, 'none')
  end)

  -- The documented minimal setup against a real server, with the embedded fake (no key, no baseUrl).
  local sidecar
  T.step('#1 #2 setup({}) starts without a settings warning and without a message longer than a line', function()
    T.workspace({})
    local mark = messages_mark()
    sidecar = require('sidecar')
    sidecar.setup({ cmd = { T.env('SIDECAR_TEST_PYTHON'), '-m', 'sidecar' } })
    local client = require('sidecar.client')
    T.wait(function()
      return client.get()
    end, 10000, 'the client')
    local cfg = client.get().config
    T.eq(vim.json.encode(cfg.init_options), '{}', 'init options are an object')
    T.eq(vim.json.encode(cfg.settings.sidecar), '{}', 'the settings section is an object')
    T.wait(function()
      return sidecar.state.status == 'running' and sidecar.state.usage
    end, 30000, 'the sidecar')
    local turn = sidecar.send('hello')
    T.wait(function()
      return turn.done
    end, 30000, 'the first reply (the embedded fake announces itself)')
    T.wait(function()
      return chat.text():find('embedded offline fake', 1, true)
    end, 10000, 'the notice in the chat')
    local said = messages_since(mark)
    for _, line in ipairs(said) do
      T.ok(not line:find('invalid', 1, true), 'no settings warning: ' .. line)
      T.ok(vim.fn.strdisplaywidth(line) < vim.o.columns, 'every message fits one line: ' .. line)
    end
  end)

  T.step('#17 :SidecarUpdate says to restart a running server', function()
    local install = require('sidecar.install')
    local orig = install.install
    install.install = function(opts)
      opts.on_done(nil) -- as when the rebuild succeeded
    end
    local got, restore = capture_notify()
    vim.cmd('SidecarUpdate')
    restore()
    install.install = orig
    local all = table.concat(
      vim.tbl_map(function(n)
        return n.msg
      end, got),
      '\n'
    )
    T.contains(all, ':SidecarRestart', 'the restart hint')
  end)
end)
