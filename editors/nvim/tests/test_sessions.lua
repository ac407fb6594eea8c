-- Branching and tidying sessions from Neovim: :SidecarFork, :SidecarRewind, :SidecarRename,
-- :SidecarDelete, :SidecarPin / :SidecarPins, against the real sidecar and the fake Gemini. Pickers are answered by
-- stubbing vim.ui.select / vim.ui.input like a user picking an item.
local T = require('sidecar_test')

T.run('test_sessions', function()
  T.fake_reset()
  T.workspace({ ['a.py'] = 'x = 1\n' })
  local sidecar = T.start_sidecar({ settings = { tokenLimit = 100000 } })
  local state = sidecar.state
  local chat = require('sidecar.chat')
  sidecar.chat()

  local function say(text)
    local turn = sidecar.send(text)
    T.wait(function()
      return turn.done
    end, 20000, 'the turn "' .. text .. '"')
  end

  --- Answer the next vim.ui.select with the first item for which pick(item) is true; returns what was offered.
  local function answer_select(pick)
    local orig = vim.ui.select
    local offered = {}
    vim.ui.select = function(items, opts, on_choice)
      vim.ui.select = orig
      for _, it in ipairs(items) do
        offered[#offered + 1] = opts.format_item(it)
      end
      for _, it in ipairs(items) do
        if pick(it) then
          return on_choice(it)
        end
      end
      on_choice(nil)
    end
    return offered
  end

  --- A request's answer (waited for).
  local function rpc(method, params)
    local got
    sidecar.client.request(method, params or vim.empty_dict(), function(err, r)
      got = { err = err, result = r }
    end)
    T.wait(function()
      return got
    end, 10000, method)
    T.ok(not got.err, method .. ': ' .. vim.inspect(got.err))
    return got.result
  end

  --- Ask `method` until its answer satisfies `pred` (the state wanted, not the next answer).
  local function until_answer(method, pred, what)
    for _ = 1, 500 do
      local r = rpc(method)
      if pred(r) then
        return r
      end
      T.sleep(20)
    end
    error('timed out waiting for ' .. what)
  end

  local function transcript()
    return rpc('sidecar/getTranscript')
  end

  local function user_entries(t)
    local out = {}
    for _, e in ipairs(t.entries) do
      if e.type == 'message' and e.kind == 'user' then
        out[#out + 1] = e
      end
    end
    return out
  end

  local parent
  T.step('three messages, then :SidecarFork picks the second one with vim.ui.select', function()
    say('nv one')
    say('nv two')
    say('nv three')
    parent = state.session_id
    local offered = answer_select(function(e)
      return e.text == 'nv two'
    end)
    vim.cmd('SidecarFork')
    T.wait(function()
      return state.session_id ~= parent
    end, 10000, 'the forked session')
    T.contains(offered[1], 'whole session', 'forking everything is offered first')
    T.eq(#offered, 4, 'the whole session and the three messages: ' .. vim.inspect(offered))
    T.wait(function()
      return chat.text():find('forked into session', 1, true)
    end, 10000, 'the fork note')
    local texts = vim.tbl_map(function(e)
      return e.text
    end, user_entries(transcript()))
    T.eq(texts, { 'nv one' }, 'the fork holds the history before the picked message')
  end)

  T.step(':SidecarRewind takes a message back into the input line and marks it in the chat', function()
    say('nv rewind me')
    say('nv after it')
    answer_select(function(e)
      return e.text == 'nv rewind me'
    end)
    vim.cmd('SidecarRewind')
    T.wait(function()
      return chat.input() == 'nv rewind me'
    end, 10000, 'the message back on the input line')
    T.wait(function()
      return chat.text():find('rewound: the model no longer sees it', 1, true)
    end, 10000, 'the rewound messages marked in the chat')
    T.contains(chat.text(), 'Files the agent changed were not touched', 'the rewind says files were not touched')
    local marks = {}
    for _, e in ipairs(user_entries(transcript())) do
      marks[e.text] = e.rewound or false
    end
    T.eq(marks, { ['nv one'] = false, ['nv rewind me'] = true, ['nv after it'] = true }, 'rewound in the transcript')
    T.fake_reset()
    say('nv fresh')
    local reqs = T.fake_requests()
    local sent = table.concat(
      vim.tbl_map(function(t)
        return t.text
      end, T.request_texts(reqs[#reqs])),
      '\n'
    )
    T.ok(not sent:find('nv rewind me', 1, true), 'the model no longer sees the rewound message')
  end)

  T.step(':SidecarPin reaches the model; :SidecarPins lists it and unpins the picked one', function()
    vim.cmd('SidecarPin NV-PIN: the build needs Python 3.11')
    until_answer('sidecar/listPins', function(r)
      return #r.pins == 1
    end, 'the pin recorded')
    T.fake_reset()
    say('nv with a pin')
    local reqs = T.fake_requests()
    T.contains(
      vim.fn.json_encode(reqs[#reqs].body.systemInstruction),
      'NV-PIN: the build needs Python 3.11',
      'the pin in the system instruction'
    )
    local offered = answer_select(function(p)
      return p.text:find('NV-PIN', 1, true) ~= nil
    end)
    vim.cmd('SidecarPins')
    until_answer('sidecar/listPins', function(r)
      return #r.pins == 0
    end, 'the pin removed')
    T.contains(offered[1], 'NV-PIN', 'the pin was listed')
  end)

  T.step(':SidecarRename names the session; :SidecarDelete moves another one to the trash', function()
    vim.cmd('SidecarRename Neovim branch')
    local listed = until_answer('sidecar/listSessions', function(r)
      for _, s in ipairs(r) do
        if s.sessionId == state.session_id and s.title == 'Neovim branch' then
          return true
        end
      end
      return false
    end, 'the new title in listSessions')
    local branch_of
    for _, s in ipairs(listed) do
      if s.sessionId == state.session_id then
        branch_of = s.parentSessionId
      end
    end
    T.eq(branch_of, parent, 'the fork is listed with its parent')
    -- a session of its own to delete
    local live = state.session_id
    sidecar.new_session()
    T.wait(function()
      return state.session_id ~= live
    end, 10000, 'a new session')
    say('nv to delete')
    local doomed = state.session_id
    sidecar.resume(live)
    T.wait(function()
      return state.session_id == live
    end, 10000, 'back in the branch')
    answer_select(function(s)
      return s.sessionId == doomed
    end)
    vim.cmd('SidecarDelete')
    until_answer('sidecar/listSessions', function(r)
      for _, s in ipairs(r) do
        if s.sessionId == doomed then
          return false
        end
      end
      return true
    end, 'the deleted session gone from the list')
    -- :SidecarRestore picks it from the trash and brings it back
    local offered = answer_select(function(s)
      return s.sessionId == doomed
    end)
    vim.cmd('SidecarRestore')
    until_answer('sidecar/listSessions', function(r)
      for _, s in ipairs(r) do
        if s.sessionId == doomed then
          return true
        end
      end
      return false
    end, 'the restored session back in the list')
    T.contains(offered[1], 'nv to delete', 'the trash was offered, with titles')
  end)

  T.step(':SidecarResume of a session another window holds continues in a branch and says so', function()
    local held = state.session_id
    local file = vim.fn.glob(os.getenv('SIDECAR_HOME') .. '/sessions/*/' .. held .. '.jsonl')
    T.ok(file ~= '', 'the session file of ' .. held)
    sidecar.new_session()
    T.wait(function()
      return state.session_id ~= held
    end, 10000, 'a new session')
    -- another process takes the session's lock, as a second editor window recording it would
    local locked = false
    local holder = vim.fn.jobstart({
      T.env('SIDECAR_TEST_PYTHON'),
      '-c',
      'import fcntl, sys, time\nf = open(sys.argv[1], "ab")\nfcntl.flock(f, fcntl.LOCK_EX)\nprint("locked", flush=True)\ntime.sleep(60)',
      file,
    }, {
      on_stdout = function(_, data)
        if table.concat(data):find('locked') then
          locked = true
        end
      end,
    })
    T.ok(holder > 0, 'the lock holder started')
    T.wait(function()
      return locked
    end, 10000, 'the other process holding the lock')
    local before = #vim.split(vim.fn.execute('messages'), '\n', { plain = true })
    local answer
    sidecar.resume(held, function(err, r)
      answer = err or r
    end)
    T.wait(function()
      return answer
    end, 10000, 'the resume answer')
    vim.fn.jobstop(holder)
    T.eq(answer.forked, true, 'a branch, not an unrecorded session')
    T.ok(state.session_id ~= held and state.session_id == answer.sessionId, 'the chat follows the branch')
    local notice = '('
      .. held:sub(1, 8)
      .. ') is open in another window; continuing in a new branch ('
      .. answer.sessionId:sub(1, 8)
      .. ')'
    T.wait(function()
      return chat.text():find(notice, 1, true)
    end, 5000, 'the notice in words in the chat')
    -- told once: one line in the messages (the server's notice, shortened to fit: the id may be cut short there),
    -- once in the chat
    local lines = vim.split(vim.fn.execute('messages'), '\n', { plain = true })
    local told = {}
    for i = before + 1, #lines do
      if lines[i]:find('(' .. held:sub(1, 6), 1, true) then
        told[#told + 1] = lines[i]
      end
    end
    T.eq(#told, 1, 'the notice in the messages, once: ' .. vim.inspect(told))
    T.ok(vim.fn.strdisplaywidth(told[1]) < vim.o.columns, 'the message fits one line (no Press-ENTER): ' .. told[1])
    local _, in_chat = chat.text():gsub(vim.pesc(notice), '')
    T.eq(in_chat, 1, 'the notice in the chat, once')
    say('nv said in the branch')
    local texts = vim.tbl_map(function(e)
      return e.text
    end, user_entries(transcript()))
    T.eq(texts[#texts], 'nv said in the branch', 'the branch records what is said')
  end)
end)
