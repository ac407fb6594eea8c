-- :SidecarRewind! against the real sidecar and the fake Gemini: the conversation and the files the agent
-- changed go back together. An open buffer is restored in place (workspace/applyEdit), a file the agent created is
-- removed, a file the user changed since is listed and kept unless the user chooses to overwrite it; the float lists
-- the files while vim.ui.select asks; :SidecarRewind without ! leaves the files alone.
local T = require('sidecar_test')

T.run('test_rewind_files', function()
  T.fake_reset()
  local dir = T.workspace({
    ['a.txt'] = 'original a\n',
    ['c.txt'] = 'original c\n',
    ['d.txt'] = 'original d\n',
    ['e.txt'] = 'original e\n',
    ['f.txt'] = 'original f\n',
    ['g.txt'] = 'original g\n',
    ['h.txt'] = 'original h\n',
  })
  -- autoEdit: the agent's edits run without asking (they are checkpointed in every approval mode)
  local sidecar = T.start_sidecar({ settings = { tokenLimit = 100000, approvalMode = 'autoEdit' } })
  local chat = require('sidecar.chat')
  local uv = vim.uv or vim.loop
  sidecar.chat()

  local function path(name)
    return dir .. '/' .. name
  end

  local function disk(name)
    local f = io.open(path(name), 'rb')
    if not f then
      return nil
    end
    local s = f:read('*a')
    f:close()
    return s
  end

  local function write_disk(name, text)
    local f = assert(io.open(path(name), 'wb'))
    f:write(text)
    f:close()
  end

  --- What the user sees of a file: its loaded buffer's lines, else the disk's.
  local function seen(name)
    local buf = vim.fn.bufnr(path(name))
    if buf > 0 and vim.api.nvim_buf_is_loaded(buf) then
      return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
    end
    return disk(name)
  end

  local function say(text, calls)
    if calls then
      local steps = {}
      for i, c in ipairs(calls) do
        steps[i] = { kind = 'function_call', match = 'chat', name = c[1], args = c[2], id = 'call-' .. text .. i }
      end
      T.http('POST', '/_control/script', { steps = steps })
    end
    local turn = sidecar.send(text)
    T.wait(function()
      return turn.done
    end, 30000, 'the turn "' .. text .. '"')
    T.eq(turn.error, nil, 'turn error of "' .. text .. '"')
  end

  --- Answer the next vim.ui.select calls in order, each with the first item `picks[i]` accepts; records what was
  --- asked (prompt, kind, the items as shown, the floats' text at that moment).
  local function answer_selects(picks)
    local orig = vim.ui.select
    local asked = {}
    vim.ui.select = function(items, opts, on_choice)
      local floats = {}
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_config(w).relative ~= '' then
          floats[#floats + 1] =
            table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), '\n')
        end
      end
      local shown = {}
      for i, it in ipairs(items) do
        shown[i] = opts.format_item and opts.format_item(it) or tostring(it)
      end
      asked[#asked + 1] = { prompt = opts.prompt, kind = opts.kind, items = shown, floats = floats }
      local pick = picks[#asked]
      if #asked >= #picks then
        vim.ui.select = orig
      end
      for i, it in ipairs(items) do
        if pick and pick(it, shown[i]) then
          return on_choice(it)
        end
      end
      on_choice(nil)
    end
    return asked
  end

  local function message(text)
    return function(e)
      return e.text == text
    end
  end
  local function labelled(label)
    return function(_, shown)
      return shown == label
    end
  end

  --- :SidecarRewind! (or without !) at a message, answering the pickers; waits for the message back on the input line.
  local function rewind(cmd, text, choice)
    local asked = answer_selects({ message(text), choice and labelled(choice) or nil })
    vim.cmd(cmd)
    T.wait(function()
      return chat.input() == text
    end, 20000, 'the rewound message back on the input line')
    return asked
  end

  T.step('the plugin tells the server it applies workspace edits (restores of open buffers go through them)', function()
    local caps = sidecar.client.get().config.capabilities
    T.eq(caps.workspace.applyEdit, true, 'workspace.applyEdit advertised')
    T.ok(vim.tbl_contains(caps.workspace.workspaceEdit.resourceOperations or {}, 'delete'), 'delete operations too')
  end)

  T.step(':SidecarRewind! lists the files, then restores an open buffer and removes a created file', function()
    local a = vim.fn.bufadd(path('a.txt'))
    vim.fn.bufload(a)
    say('nv before the edits')
    say('nv edit files', {
      { 'replace', { path = 'a.txt', old_string = 'original a', new_string = 'agent a' } },
      { 'write_file', { path = 'new.txt', content = 'made by the agent\n' } },
    })
    say('nv a later message')
    T.eq(seen('a.txt'), 'agent a\n', 'the agent edited the open buffer')
    T.eq(seen('new.txt'), 'made by the agent\n', 'the agent created new.txt')

    local asked = rewind('SidecarRewind!', 'nv edit files', 'Rewind and restore')
    T.eq(#asked, 2, 'asked for the message, then to confirm: ' .. vim.inspect(asked))
    T.eq(asked[2].kind, 'sidecar.rewindFiles', 'the confirmation')
    T.eq(asked[2].items, { 'Rewind and restore', 'Cancel' }, 'no conflict: restore or cancel')
    T.contains(asked[2].prompt, 'restore 2 files', 'the question counts the files')
    local float = table.concat(asked[2].floats, '\n')
    T.contains(float, 'Put back as they were before your message:\n  a.txt', 'a.txt listed, workspace-relative')
    T.contains(float, 'Removed (the agent created them):\n  new.txt', 'new.txt listed as removed')
    local closed = true
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      closed = closed and vim.api.nvim_win_get_config(w).relative == ''
    end
    T.ok(closed, 'the float closes with the answer')

    T.wait(function()
      return seen('a.txt') == 'original a\n'
    end, 10000, 'a.txt back in its open buffer')
    T.ok(vim.api.nvim_buf_is_loaded(a), 'restored in the buffer, which stays open')
    T.wait(function()
      return uv.fs_stat(path('new.txt')) == nil
    end, 10000, 'new.txt removed from disk')
    T.wait(function()
      return chat.text():find('restored a.txt; removed new.txt', 1, true)
    end, 10000, 'the note names what was restored and removed')
    local _, times = chat.text():gsub('rewound to before “nv edit files”', '')
    T.eq(times, 1, 'the note is in the chat once')
    T.contains(chat.text(), 'rewound to before “nv edit files”', 'the note names the message by its words')
    -- once the answer is in (the note is shown), no buffer is left holding the removed file: a :w would bring it back
    local nb = vim.fn.bufnr(path('new.txt'))
    T.ok(nb < 0 or not vim.api.nvim_buf_is_loaded(nb), 'no buffer left holding the removed file')
  end)

  T.step('a file the user changed since is listed as a conflict and kept', function()
    chat.set_input('')
    say('nv edit c', { { 'replace', { path = 'c.txt', old_string = 'original c', new_string = 'agent c' } } })
    T.eq(seen('c.txt'), 'agent c\n', 'the agent edited c.txt')
    -- the user changes it afterwards, and saves
    local c = vim.fn.bufadd(path('c.txt'))
    vim.fn.bufload(c)
    vim.api.nvim_buf_set_lines(c, 0, -1, false, { 'mine c' })
    vim.api.nvim_buf_call(c, function()
      vim.cmd('silent write!')
    end)
    T.eq(disk('c.txt'), 'mine c\n', 'the user saved c.txt')

    local asked = rewind('SidecarRewind!', 'nv edit c', 'Restore others, keep conflicting files')
    T.eq(
      asked[2].items,
      { 'Restore others, keep conflicting files', 'Overwrite my changes too', 'Cancel' },
      'keep or overwrite the conflict'
    )
    T.contains(asked[2].prompt, "1 file changed since the agent's edit", 'the question names the conflict')
    T.contains(
      table.concat(asked[2].floats, '\n'),
      "Changed since the agent's edit (kept unless you overwrite them):\n  c.txt — ",
      'c.txt listed with its reason'
    )
    T.wait(function()
      return chat.text():find("kept c.txt (changed since the agent's edit)", 1, true)
    end, 10000, 'the note says c.txt was kept')
    T.eq(seen('c.txt'), 'mine c\n', "the user's change is kept in the buffer")
    T.eq(disk('c.txt'), 'mine c\n', 'and on disk')
  end)

  T.step('… unless the user chooses to overwrite it (force)', function()
    chat.set_input('')
    say('nv edit d', { { 'replace', { path = 'd.txt', old_string = 'original d', new_string = 'agent d' } } })
    local d = vim.fn.bufadd(path('d.txt'))
    vim.fn.bufload(d)
    vim.api.nvim_buf_set_lines(d, 0, -1, false, { 'mine d' })
    vim.api.nvim_buf_call(d, function()
      vim.cmd('silent write!')
    end)
    rewind('SidecarRewind!', 'nv edit d', 'Overwrite my changes too')
    T.wait(function()
      return seen('d.txt') == 'original d\n'
    end, 10000, 'd.txt back to its content before the message')
    T.wait(function()
      return chat.text():find('restored d.txt', 1, true)
    end, 10000, 'the note names d.txt')
  end)

  T.step('an unsaved change in a buffer is a conflict too: named, and kept unless overwritten', function()
    chat.set_input('')
    local g = vim.fn.bufadd(path('g.txt'))
    vim.fn.bufload(g)
    say('nv edit g', { { 'replace', { path = 'g.txt', old_string = 'original g', new_string = 'agent g' } } })
    T.eq(seen('g.txt'), 'agent g\n', 'the agent edited the open buffer')
    vim.api.nvim_buf_call(g, function()
      vim.cmd('silent write!')
    end)
    -- the user goes on typing in it and does not save
    vim.api.nvim_buf_set_lines(g, 0, -1, false, { 'mine g, unsaved' })
    local asked = rewind('SidecarRewind!', 'nv edit g', 'Restore others, keep conflicting files')
    T.eq(
      asked[2].items,
      { 'Restore others, keep conflicting files', 'Overwrite my changes too', 'Cancel' },
      'keep or overwrite the unsaved change: ' .. vim.inspect(asked)
    )
    T.contains(
      table.concat(asked[2].floats, '\n'),
      "Changed since the agent's edit (kept unless you overwrite them):\n  g.txt — ",
      'g.txt named as a conflict'
    )
    T.wait(function()
      return chat.text():find("kept g.txt (changed since the agent's edit)", 1, true)
    end, 10000, 'the note says g.txt was kept')
    T.eq(seen('g.txt'), 'mine g, unsaved\n', 'the unsaved change is still in the buffer')
    T.eq(disk('g.txt'), 'agent g\n', 'the disk is untouched')
    vim.api.nvim_buf_call(g, function()
      vim.cmd('silent edit!')
    end)
  end)

  T.step('a file open only in a hidden buffer is restored on disk too, and leaves no unsaved buffer', function()
    chat.set_input('')
    say('nv edit h', { { 'replace', { path = 'h.txt', old_string = 'original h', new_string = 'agent h' } } })
    local h = vim.fn.bufnr(path('h.txt'))
    T.ok(h > 0 and vim.api.nvim_buf_is_loaded(h), 'the edit loaded h.txt in a buffer')
    T.eq(#vim.fn.win_findbuf(h), 0, 'which no window shows')
    vim.api.nvim_buf_call(h, function()
      vim.cmd('silent write')
    end) -- e.g. a :wall: the disk has the agent's text
    T.eq(disk('h.txt'), 'agent h\n', "the agent's text saved")
    rewind('SidecarRewind!', 'nv edit h', 'Rewind and restore')
    T.wait(function()
      return chat.text():find('restored h.txt', 1, true)
    end, 10000, 'the note names h.txt')
    T.eq(disk('h.txt'), 'original h\n', 'h.txt is back on disk')
    T.eq(seen('h.txt'), 'original h\n', 'and in its buffer')
    T.eq(vim.bo[h].modified, false, 'no unsaved buffer left behind (:qa would stop at it)')
  end)

  T.step('Cancel at the confirmation changes nothing', function()
    chat.set_input('')
    say('nv edit e', { { 'replace', { path = 'e.txt', old_string = 'original e', new_string = 'agent e' } } })
    local asked = answer_selects({ message('nv edit e'), labelled('Cancel') })
    local res
    sidecar.rewind('', function(err, r)
      res = { err = err, r = r }
    end, { files = true })
    T.wait(function()
      return res
    end, 20000, 'the cancelled rewind')
    T.eq(res.err and res.err.message, 'cancelled', 'cancelled')
    T.eq(#asked, 2, 'asked twice')
    T.eq(seen('e.txt'), 'agent e\n', 'e.txt untouched')
  end)

  T.step(':SidecarRewind without ! rewinds the conversation only', function()
    rewind('SidecarRewind', 'nv edit e')
    T.wait(function()
      return chat.text():find('Files the agent changed were not touched', 1, true)
    end, 10000, 'the note says files were not touched')
    T.eq(seen('e.txt'), 'agent e\n', "e.txt keeps the agent's edit")
  end)

  T.step(
    'with the checkpointing setting off, :SidecarRewind! says so (the edits made meanwhile cannot come back)',
    function()
      chat.set_input('')
      sidecar.update_settings({ checkpointing = false })
      T.wait(function()
        local got
        sidecar.client.request('sidecar/listCheckpoints', vim.empty_dict(), function(_, r)
          got = r or false
        end)
        T.wait(function()
          return got ~= nil
        end, 10000, 'sidecar/listCheckpoints')
        return got and got.checkpointing == false
      end, 10000, 'checkpointing off in the server')
      say('nv edit f', { { 'replace', { path = 'f.txt', old_string = 'original f', new_string = 'agent f' } } })
      local asked = rewind('SidecarRewind!', 'nv edit f')
      T.eq(#asked, 1, 'nothing saved, nothing to confirm: only the message was asked')
      T.wait(function()
        return chat.text():find('checkpointing is off (setting checkpointing)', 1, true)
      end, 10000, 'the note says checkpointing is off')
      T.eq(seen('f.txt'), 'agent f\n', "f.txt keeps the agent's edit")
    end
  )
end)
