-- The issue's scenario end to end: real sidecar (stdio) + fake Gemini, driven like a user would.
-- Open a file, move the cursor, select text, :SidecarSend hello, the streamed reply lands in the
-- chat buffer, statusline() shows the usage; the chat's input line; :SidecarCompress lowers the
-- percentage; the model's next request carries the full IDE context.
local T = require('sidecar_test')

local IDE_FULL = "Here is the user's editor context as a JSON object. This is for your information only."

T.run('test_e2e', function()
  T.fake_reset()
  local dir = T.workspace({
    ['main.py'] = table.concat({
      'import sys',
      '',
      'def greet(name):',
      '    message = "hello " + name',
      '    return message',
      '',
      'print(greet(sys.argv[1]))',
      '',
    }, '\n'),
    ['util.py'] = 'def helper():\n    return 42\n',
  })
  local main_py = dir .. '/main.py'
  local sidecar, state, chat
  local deltas, progress_titles, context_sends = {}, {}, {}

  T.step('setup() starts the sidecar for the workspace root and passes settings', function()
    sidecar = T.start_sidecar()
    state = sidecar.state
    chat = require('sidecar.chat')
    T.eq(state.root, dir, 'workspace root')
    T.eq(state.usage.tokenLimit, 4000, 'tokenLimit setting reached the server')
    T.eq(state.usage.compressionThreshold, 0.9, 'compressionThreshold setting reached the server')
    T.ok(type(state.session_id) == 'string' and state.session_id ~= '', 'sessionId from sidecar/tokenUsage')
    T.match(sidecar.statusline(), '^✦ %d+%% [%d.]+K?/4K$', 'statusline after start')
    local expected = require('sidecar.compat').nvim_011 and 'vim.lsp.start' or 'vim.lsp.start_client'
    T.eq(state.start_method, expected, 'start API for this Neovim')
    -- Count streamed deltas and progress titles (wrapping the plugin's handlers).
    local handlers = require('sidecar.client').handlers
    local on_delta, on_progress = handlers['sidecar/messageDelta'], handlers['$/progress']
    handlers['sidecar/messageDelta'] = function(err, params, ctx)
      deltas[#deltas + 1] = params
      return on_delta(err, params, ctx)
    end
    -- Record the turns in flight whenever the IDE context is sent.
    local client = require('sidecar.client')
    local orig_notify, orig_request = client.notify, client.request
    client.notify = function(method, params)
      if method == 'sidecar/ideContext' then
        context_sends[#context_sends + 1] = { in_flight = state.turns_in_flight, params = params }
      end
      return orig_notify(method, params)
    end
    client.request = function(method, params, cb)
      if method == 'sidecar/sendMessage' then
        context_sends[#context_sends + 1] = { message = params.text }
      end
      return orig_request(method, params, cb)
    end
    handlers['$/progress'] = function(err, params, ctx, cfg)
      if params and params.value and params.value.kind == 'begin' then
        progress_titles[#progress_titles + 1] = params.value.title
      end
      return on_progress(err, params, ctx, cfg)
    end
  end)

  T.step('open a file, move the cursor, select text, :SidecarSend hello', function()
    vim.cmd('edit util.py')
    vim.cmd('edit main.py')
    T.feed('4G0w') -- line 4, on "message"
    T.feed('ve') -- select "message"
    -- ':' from Visual mode inserts '<,'> like a user would get.
    T.feed(':SidecarSend hello<CR>', 50)
    T.wait(function()
      return chat.text():find('Fake Gemini reply #1: you said "hello"', 1, true)
    end, 20000, 'the reply in the chat buffer')
    local turn = chat.turns()[1]
    T.wait(function()
      return turn.done
    end, 5000, 'the sendMessage answer')
    T.ok(#deltas >= 2, 'the reply was streamed in several sidecar/messageDelta: ' .. #deltas)
    local text = chat.text()
    T.contains(text, '## You\n\nhello\n\n## Gemini\n\nFake Gemini reply #1', 'chat layout')
    T.eq(turn.error, nil, 'no error')
    T.ok(vim.tbl_contains(progress_titles, 'Gemini'), 'work-done progress "Gemini" during the turn')
    -- The chat opened without taking the cursor.
    T.eq(vim.api.nvim_buf_get_name(0), main_py, 'cursor stays in main.py')
    T.ok(chat.window() ~= nil, 'chat window visible')
    local buf = chat.bufnr()
    T.eq(vim.bo[buf].buftype, 'prompt', 'the chat has an input line')
    -- The context went out before the message, and nothing while the turn ran (the cursor leaving
    -- the selection after the command must not change what this turn's request sees).
    local last_before
    for i, c in ipairs(context_sends) do
      if c.message then
        T.eq(c.message, 'hello', 'the message')
        last_before = context_sends[i - 1]
        break
      end
    end
    T.ok(last_before and last_before.params, 'the IDE context was sent just before the message')
    T.eq(last_before.params.openFiles[1].selectedText, 'message', 'the selection went with the message')
    for _, c in ipairs(context_sends) do
      T.ok(c.message or c.in_flight == 0, 'no IDE context sent while a turn runs')
    end
  end)

  T.step('statusline() shows the usage pushed with sidecar/tokenUsage', function()
    T.wait(function()
      return state.usage.promptTokenCount > 0
    end, 5000, 'a non-zero prompt token count')
    local u = state.usage
    local pct = 100 * u.promptTokenCount / u.tokenLimit
    T.ok(math.abs(u.percentUsed - pct) < 0.06, 'percentUsed matches the counts: ' .. vim.inspect(u))
    local fmt = require('sidecar.status')
    local want = string.format('✦ %d%% %s/4K', math.floor(pct + 0.5), fmt.format_count(u.promptTokenCount))
    T.eq(sidecar.statusline(), want, 'statusline')
    T.ok(u.percentUsed > 0 and u.percentUsed < 90, 'percent in range: ' .. u.percentUsed)
  end)

  local function ide_context_of(req)
    for _, t in ipairs(T.request_texts(req)) do
      if t.role == 'user' and t.text:sub(1, #IDE_FULL) == IDE_FULL then
        return vim.json.decode(t.text:match('```json%s*(.-)%s*```'))
      end
    end
    return nil
  end

  local function last_stream_request()
    local reqs = T.fake_requests()
    for i = #reqs, 1, -1 do
      if reqs[i].kind == 'stream' and not reqs[i].summary then -- summaries stream too
        return reqs[i]
      end
    end
    return nil
  end

  local function check_full_context(ctx, what, selected)
    T.ok(ctx, what .. ': the request carries the full IDE context')
    T.eq(ctx.activeFile.path, main_py, what .. ': active file')
    T.eq(ctx.activeFile.cursor, { line = 4, character = 5 }, what .. ': 1-based cursor')
    T.eq(ctx.activeFile.selectedText, selected, what .. ': selected text')
    local others = {}
    for _, f in ipairs(ctx.otherOpenFiles or {}) do
      others[#others + 1] = type(f) == 'table' and f.path or f
    end
    T.eq(others, { dir .. '/util.py' }, what .. ': other open files')
  end

  T.step('the first request carried the IDE context: file, cursor, selection', function()
    check_full_context(ide_context_of(last_stream_request()), 'first turn', 'message')
  end)

  T.step("the chat's input line sends a message", function()
    sidecar.chat()
    T.eq(vim.api.nvim_get_current_buf(), chat.bufnr(), ':SidecarChat focuses the chat')
    T.feed('iwhat is in the file?<CR><Esc>', 50)
    T.wait(function()
      return chat.text():find('Fake Gemini reply #2: you said "what is in the file?"', 1, true)
    end, 20000, 'the second reply')
    local text = chat.text()
    T.contains(text, '## You\n\nwhat is in the file?\n', 'the typed message is shown once')
    local lines = vim.api.nvim_buf_get_lines(chat.bufnr(), 0, -1, false)
    T.eq(lines[#lines], '> ', 'a fresh input line')
    vim.cmd('wincmd p')
    T.eq(vim.api.nvim_buf_get_name(0), main_py, 'back in main.py')
  end)

  T.step('a longer conversation raises the percentage', function()
    local filler = string.rep('The quick brown fox jumps over the lazy dog. ', 14)
    local start = state.usage.percentUsed
    for i = 1, 4 do
      local turn = sidecar.send(string.format('note %d: %s', i, filler))
      T.wait(function()
        return turn.done
      end, 20000, 'turn ' .. i)
      T.eq(turn.error, nil, 'turn ' .. i .. ' error')
    end
    T.ok(
      state.usage.percentUsed > start + 10,
      'usage grew by more than 10 points: ' .. start .. ' -> ' .. state.usage.percentUsed
    )
  end)

  -- Checks that need server features still landing are one line each at the end.
  local before
  local function step_compress()
    T.step(':SidecarCompress shows progress, the message, and lowers the percentage', function()
      before = state.usage.percentUsed
      state.last_compressed = nil
      vim.cmd('SidecarCompress keep the notes about the fox')
      T.wait(function()
        return state.last_compressed
      end, 30000, 'sidecar/compressed')
      T.eq(state.last_compressed.status, 'COMPRESSED', 'status')
      T.match(state.last_compressed.message, 'compressed from [%d,]+ to [%d,]+ tokens', 'user-facing message')
      T.ok(vim.tbl_contains(progress_titles, 'Compressing conversation'), '$/progress "Compressing conversation"')
      T.contains(chat.text(), state.last_compressed.message, 'the message in the chat buffer')
      T.wait(function()
        return state.usage.percentUsed < before
      end, 10000, 'a lower percentage')
      T.match(sidecar.statusline(), '^✦ %d+%% [%d.]+K?/4K$', 'statusline after compaction')
    end)
  end

  local function step_context_after_compress()
    T.step("the model's next request carries the full IDE context again", function()
      -- Nothing changed in the editor since the last turn: without the forced full resend after
      -- a compaction the request would carry no editor context at all.
      T.fake_reset()
      local turn = sidecar.send('and now?')
      T.wait(function()
        return turn.done
      end, 20000, 'the turn after compaction')
      T.eq(turn.error, nil, 'turn error')
      local got = ide_context_of(last_stream_request())
      T.log('context after compaction: %s', vim.inspect(got))
      check_full_context(got, 'after compaction', nil)
    end)
  end

  step_compress()
  step_context_after_compress()

  T.step('a model error shows in the chat and as a notification', function()
    T.http('POST', '/_control/script', { steps = { { kind = 'status', status = 500, match = 'chat' } } })
    local notified = {}
    local orig = vim.notify
    vim.notify = function(msg, level)
      notified[#notified + 1] = { msg = msg, level = level }
    end
    local turn = sidecar.send('this one fails')
    T.wait(function()
      return turn.done
    end, 20000, 'the failed turn')
    vim.notify = orig
    T.match(turn.error or '', '^error: .*500', 'turn error')
    T.contains(chat.text(), '✗ ' .. turn.error, 'error in the chat')
    local _, times = chat.text():gsub(vim.pesc(turn.error:gsub('^error: ', '')), '')
    T.eq(times, 1, 'the error once in the chat (the server notice and the answer carry the same text)')
    local found = false
    for _, n in ipairs(notified) do
      found = found or (n.level == vim.log.levels.ERROR and n.msg:find('500', 1, true) ~= nil)
    end
    T.ok(found, 'an error notification: ' .. vim.inspect(notified))
  end)

  T.step('a retried reply drops the failed attempt and says why', function()
    T.http('POST', '/_control/script', {
      steps = {
        {
          kind = 'finish',
          text = 'a half',
          thought = 'pondering',
          finishReason = 'MALFORMED_FUNCTION_CALL',
          match = 'chat',
        },
      },
    })
    local turn = sidecar.send('answer after a glitch')
    T.wait(function()
      return turn.done
    end, 20000, 'the retried turn')
    T.eq(turn.error, nil, 'the retry succeeded')
    local text = chat.text()
    T.contains(
      text,
      "↻ Gemini's reply was unusable (the model produced a malformed tool call); retrying, attempt 2 of 4.",
      'the retry and its reason in the chat'
    )
    T.contains(text, 'you said "answer after a glitch"', 'the reply of the second attempt')
    T.ok(not text:find('a half', 1, true), "the failed attempt's text is gone")
  end)

  T.step('a blocked prompt is named in the chat', function()
    T.http(
      'POST',
      '/_control/script',
      { steps = { { kind = 'blocked', blockReason = 'PROHIBITED_CONTENT', match = 'chat' } } }
    )
    local orig = vim.notify
    vim.notify = function() end
    local turn = sidecar.send('a blocked one')
    T.wait(function()
      return turn.done
    end, 20000, 'the blocked turn')
    vim.notify = orig
    T.contains(turn.error or '', 'blockReason PROHIBITED_CONTENT', 'the policy named')
    T.contains(chat.text(), 'Gemini blocked the prompt', 'shown in the chat')
  end)

  T.step(':SidecarCancel stops a streaming reply', function()
    T.http('POST', '/_control/script', { steps = { { kind = 'delay', chunkDelay = 0.5, match = 'chat' } } })
    local turn = sidecar.send('a slow one')
    T.wait(function()
      return #turn.segments > 0
    end, 10000, 'the first delta')
    vim.cmd('SidecarCancel')
    T.wait(function()
      return turn.done
    end, 10000, 'the cancelled turn')
    T.eq(turn.error, 'cancelled', 'turn cancelled')
    T.contains(chat.text(), '⊘ cancelled', 'cancel shown in the chat')
    -- not `> cancelled`: that looks like the input line
    T.ok(not vim.tbl_contains(vim.split(chat.text(), '\n', { plain = true }), '> cancelled'), 'no prompt-like line')
    T.http('POST', '/_control/reset')
    local after = sidecar.send('still there?')
    T.wait(function()
      return after.done
    end, 20000, 'a turn after the cancel')
    T.eq(after.error, nil, 'the conversation goes on after a cancel')
  end)

  T.step('update_settings() reaches the server; an automatic compaction is reported', function()
    -- A window where the history, not the tool declarations and system prompt, is what fills it up:
    -- compacting it then really saves tokens (the sidecar skips or refuses compactions that cannot).
    sidecar.update_settings({ tokenLimit = 20000, compressionThreshold = 0.5 })
    T.wait(function()
      return state.usage.tokenLimit == 20000
    end, 5000, 'usage with the new settings')
    state.last_compressed = nil
    local filler = string.rep('Lorem ipsum dolor sit amet, consectetur adipiscing elit. ', 120)
    for i = 1, 10 do
      local turn = sidecar.send(string.format('more %d: %s', i, filler))
      T.wait(function()
        return turn.done
      end, 20000, 'turn ' .. i)
      if state.last_compressed then
        break
      end
    end
    T.wait(function()
      return state.last_compressed
    end, 20000, 'an automatic compaction')
    T.eq(state.last_compressed.trigger, 'auto', 'trigger')
    T.eq(state.last_compressed.status, 'COMPRESSED', 'status')
    T.contains(chat.text(), state.last_compressed.message, 'the message in the chat')
  end)

  -- Sessions and transcripts, through the commands; effects observed in the editor.
  local function capture_notify()
    local got = {}
    local orig = vim.notify
    vim.notify = function(msg, level)
      got[#got + 1] = { msg = msg, level = level }
      return orig(msg, level)
    end
    return got, function()
      vim.notify = orig
    end
  end

  local first_session = state.session_id
  local function step_transcript()
    T.step(':SidecarTranscript shows messages and the compaction', function()
      vim.cmd('SidecarTranscript')
      local name = 'sidecar://transcript/' .. first_session
      local buf = T.wait(function()
        local b = vim.fn.bufnr(name)
        return b > 0 and vim.api.nvim_get_current_buf() == b and b
      end, 10000, 'the transcript buffer')
      local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
      T.contains(text, 'hello', 'the first message')
      T.contains(text, 'Fake Gemini reply #1', 'the first reply')
      T.match(text, 'compaction %(manual%) COMPRESSED: [%d,]+ → [%d,]+ tokens', 'the manual compaction')
      T.match(text, 'compaction %(auto%) COMPRESSED: [%d,]+ → [%d,]+ tokens', 'the automatic compaction')
      vim.cmd('close')
    end)
  end

  local function step_undo()
    T.step(':SidecarUndoCompaction restores the history', function()
      local got, restore = capture_notify()
      vim.cmd('SidecarUndoCompaction')
      local n = T.wait(function()
        for _, n in ipairs(got) do
          if n.msg:find('^sidecar: ') then
            return n
          end
        end
      end, 10000, 'the undo message')
      restore()
      T.eq(n.level, vim.log.levels.INFO, 'restored (info, not a warning): ' .. n.msg)
      -- (a message longer than the command line is cut there and whole in the chat)
      local said = n.msg:gsub('^sidecar: ', ''):gsub('… %(:SidecarChat shows all%)$', '')
      T.contains(chat.text(), said, 'the message in the chat')
    end)
  end

  local second_session
  local function step_new()
    T.step(':SidecarNew starts an empty session', function()
      vim.cmd('SidecarNew')
      second_session = T.wait(function()
        return state.session_id ~= first_session and state.session_id
      end, 10000, 'a new session id')
      T.wait(function()
        return state.usage.sessionId == second_session
      end, 5000, 'usage of the new session')
      T.contains(chat.text(), 'new session ' .. second_session, 'noted in the chat')
      T.ok(not chat.text():find('Fake Gemini reply #1', 1, true), 'the chat was cleared')
      local turn = sidecar.send('first message of the second session')
      T.wait(function()
        return turn.done
      end, 20000, 'a turn in the new session')
    end)
  end

  local function step_resume()
    T.step(':SidecarResume picks a session with vim.ui.select and loads its transcript', function()
      local orig = vim.ui.select
      local offered
      vim.ui.select = function(items, opts, on_choice)
        offered = vim.tbl_map(function(it)
          return opts.format_item(it)
        end, items)
        for _, it in ipairs(items) do
          if it.sessionId == first_session then
            return on_choice(it)
          end
        end
        on_choice(nil)
      end
      vim.cmd('SidecarResume')
      T.wait(function()
        return offered
      end, 10000, 'the session picker')
      vim.ui.select = orig
      T.ok(#offered >= 2, 'both sessions offered: ' .. vim.inspect(offered))
      T.contains(offered[1], '[current]', 'newest (the current session) first')
      T.wait(function()
        return state.session_id == first_session
      end, 10000, 'the resumed session')
      T.wait(function()
        return chat.text():find('Fake Gemini reply #1', 1, true)
      end, 10000, 'the chat holding the resumed transcript')
      T.ok(not chat.text():find('first message of the second session', 1, true), 'not the other session')
      local turn = sidecar.send('back in the first session')
      T.wait(function()
        return turn.done
      end, 20000, 'a turn in the resumed session')
      T.eq(state.usage.sessionId, first_session, 'usage of the resumed session')
    end)
  end

  step_transcript()
  step_undo()
  step_new()
  step_resume()

  -- Tools: sidecar/confirmToolCall answered with :SidecarConfirm and vim.ui.select, edits through
  -- workspace/applyEdit.
  --- Wait for the turn; a question that waits is answered as the user does: :SidecarConfirm.
  local function wait_answering(turn, ms, what)
    local confirm = require('sidecar.confirm')
    T.wait(function()
      if confirm.waiting[1] and not confirm.waiting[1].asking then
        vim.cmd('SidecarConfirm')
      end
      return turn.done
    end, ms, what)
  end

  local function stub_select(decision, asked)
    local orig = vim.ui.select
    vim.ui.select = function(items, opts, on_choice)
      -- what is on screen while the user chooses: floating windows' text (the diff)
      local floats = {}
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_config(w).relative ~= '' then
          floats[#floats + 1] =
            table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), '\n')
        end
      end
      asked[#asked + 1] = { prompt = opts.prompt, kind = opts.kind, floats = floats }
      for _, it in ipairs(items) do
        if it.decision == decision then
          return on_choice(it)
        end
      end
      on_choice(nil)
    end
    return function()
      vim.ui.select = orig
    end
  end

  local function tool_line(turn, name)
    for _, seg in ipairs(turn.segments) do
      if seg.kind == 'tool' and seg.line:find('tool ' .. name, 1, true) then
        return seg.line
      end
    end
  end

  local function step_tool_allowed()
    T.step('a confirmed write_file edits the buffer through workspace/applyEdit', function()
      T.http('POST', '/_control/script', {
        steps = {
          {
            kind = 'function_call',
            match = 'chat',
            name = 'write_file',
            args = { path = 'notes.txt', content = 'written by the model\n' },
            id = 'call-1',
          },
        },
      })
      local asked = {}
      local restore = stub_select('allow', asked)
      local turn = sidecar.send('please write notes.txt')
      wait_answering(turn, 20000, 'the tool turn')
      restore()
      T.eq(turn.error, nil, 'turn error')
      T.eq(#asked, 1, 'asked once')
      T.eq(asked[1].kind, 'sidecar.confirmToolCall', 'select kind')
      T.contains(asked[1].prompt, 'write_file', 'the prompt names the tool')
      local buf = vim.fn.bufnr(dir .. '/notes.txt')
      T.ok(buf > 0, 'a buffer for notes.txt')
      -- The buffer holds exactly the content (Neovim would show an extra empty last line for an
      -- insert into a new, empty document: see lua/sidecar/edits.lua).
      T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { 'written by the model' }, 'edited text')
      T.eq(vim.bo[buf].modified, true, 'edited in the editor, not saved')
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent write')
      end)
      local f = assert(io.open(dir .. '/notes.txt', 'rb'))
      T.eq(f:read('*a'), 'written by the model\n', 'the saved file')
      f:close()
      T.match(tool_line(turn, 'write_file') or '', 'done', 'tool status in the chat')
      T.contains(chat.text(), 'write_file returned', 'the model got the tool result')
    end)
    T.step('a confirmed replace edits an open buffer in place', function()
      T.http('POST', '/_control/script', {
        steps = {
          {
            kind = 'function_call',
            match = 'chat',
            name = 'replace',
            args = { path = 'main.py', old_string = '    return message', new_string = '    return message.upper()' },
            id = 'call-3',
          },
        },
      })
      local asked = {}
      local restore = stub_select('allow', asked)
      local turn = sidecar.send('shout the greeting')
      wait_answering(turn, 20000, 'the tool turn')
      restore()
      T.eq(#asked, 1, 'asked once')
      local buf = vim.fn.bufnr(main_py)
      T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), {
        'import sys',
        '',
        'def greet(name):',
        '    message = "hello " + name',
        '    return message.upper()',
        '',
        'print(greet(sys.argv[1]))',
      }, 'main.py after the edit')
      T.match(tool_line(turn, 'replace') or '', 'done', 'tool status in the chat')
      -- the diff is in sight while answering, and in the chat where it happened (before the reply)
      T.eq(#asked[1].floats, 1, 'one float while asked')
      T.contains(asked[1].floats[1], '+    return message.upper()', 'the diff in the float')
      T.contains(asked[1].floats[1], 'replace', 'the question in the float')
      local closed = true
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        closed = closed and vim.api.nvim_win_get_config(w).relative == ''
      end
      T.ok(closed, 'the float closes with the answer')
      -- a fenced diff block, not every line in _…_
      local text = chat.text()
      local diff_at = text:find('```diff\n', 1, true)
      T.ok(diff_at, 'a fenced diff block in the chat')
      T.contains(text, '\n+    return message.upper()\n', 'the diff line as it is')
      T.ok(not text:find('_+    return message.upper()_', 1, true), 'not italicised')
      local reply_at = text:find('replace returned', diff_at, true)
      T.ok(reply_at, 'the reply after the diff, in the order things happened')
      -- no `Workspace edit sidecar edit` for every edit
      T.ok(not vim.fn.execute('messages'):find('Workspace edit', 1, true), 'no edit label printed')
    end)
  end

  local function step_tool_denied()
    T.step('a denied run_shell_command does not run', function()
      T.http('POST', '/_control/script', {
        steps = {
          {
            kind = 'function_call',
            match = 'chat',
            name = 'run_shell_command',
            args = { command = 'touch denied.txt' },
            id = 'call-2',
          },
        },
      })
      local asked = {}
      local restore = stub_select('deny', asked)
      local turn = sidecar.send('please run a command')
      wait_answering(turn, 20000, 'the tool turn')
      restore()
      T.eq(#asked, 1, 'asked once')
      T.match(tool_line(turn, 'run_shell_command') or '', 'denied', 'denied in the chat')
      T.eq(vim.loop.fs_stat(dir .. '/denied.txt'), nil, 'the command did not run')
    end)
  end

  -- WAITS ON SERVER (tools wired into turns: sidecar/toolCall, sidecar/confirmToolCall, applyEdit):
  step_tool_allowed()
  step_tool_denied()
end)
