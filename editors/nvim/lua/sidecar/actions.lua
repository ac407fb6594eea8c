-- What the :Sidecar commands do beyond chatting: compaction, sessions (new, resume, fork, rewind, rename, delete),
-- transcripts, pinned facts and :SidecarStatus. Each takes an optional cb(err, result), called once the answer was
-- handled (tests and scripts wait on it).
local client = require('sidecar.client')
local pickers = require('sidecar.pickers')
local protocol = require('sidecar.protocol')
local state = require('sidecar.state')

local M = {}

local ensure = require('sidecar.lifecycle').ensure

local function tell(msg, level)
  return require('sidecar.ui').tell(msg, level) -- true: too long for the command line, so it is in the chat already
end

--- Told on the command line and in the chat, once each (a text too long for the command line is already in the chat).
local function say(msg, level)
  if not tell(msg, level) then
    require('sidecar.chat').note(msg)
  end
end

local function on_err(what)
  return function(err)
    tell(what .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
  end
end

local function done(cb, err, result)
  if cb then
    cb(err, result)
  end
end

--- Pick a session with vim.ui.select: `go(sessionId)` with the choice, or `cb` told that none was chosen.
local function pick_session(list, prompt, format_item, go, cb)
  vim.ui.select(list, { prompt = prompt, kind = 'sidecar.session', format_item = format_item }, function(choice)
    if choice then
      go(choice.sessionId)
    else
      done(cb, { message = 'no session chosen' })
    end
  end)
end

local function chat()
  return require('sidecar.chat')
end
local function context()
  return require('sidecar.context')
end

-- Compaction ---------------------------------------------------------------------------------------

function M.compress(instructions, cb)
  ensure()
  local params = vim.empty_dict()
  if instructions and vim.trim(instructions) ~= '' then
    params = { instructions = vim.trim(instructions) }
  end
  client.request(protocol.method.compress, params, function(err, result)
    require('sidecar.ui').on_compress_result(err, result)
    done(cb, err, result)
  end)
end

function M.undo_compaction(cb)
  ensure()
  client.call('undo compaction', protocol.method.undoCompaction, vim.empty_dict(), cb, function(result)
    local msg = result.message or (result.restored and 'compaction undone' or 'nothing to undo')
    say(msg, result.restored and vim.log.levels.INFO or vim.log.levels.WARN)
    done(cb, nil, result)
  end)
end

-- Sessions -----------------------------------------------------------------------------------------

function M.new_session(cb)
  ensure()
  client.call('new session', protocol.method.newSession, vim.empty_dict(), cb, function(result)
    state.session_id = result.sessionId or state.session_id
    chat().clear()
    chat().note('new session ' .. tostring(result.sessionId))
    tell('new session ' .. tostring(result.sessionId))
    context().reset_sent()
    context().flush(true)
    done(cb, nil, result)
  end)
end

--- Replace the chat with a session's transcript.
function M.load_into_chat(session_id, cb)
  client.call('transcript', protocol.method.getTranscript, { sessionId = session_id }, cb, function(t)
    chat().load(t)
    done(cb, nil, t)
  end)
end

--- Resume a session: the given id, or one picked with vim.ui.select from sidecar/listSessions.
--- cb gets the resumeSession answer once the chat holds the session's transcript.
function M.resume(session_id, cb)
  ensure()
  local function resume(id)
    client.call('resume', protocol.method.resumeSession, { sessionId = id }, cb, function(result)
      state.session_id = result.sessionId or id
      if not (result.forked and result.message) then
        tell(string.format('resumed session %s (%s messages)', state.session_id, tostring(result.messageCount)))
      end -- a branch: the server's own notice says so (window/showMessage), and the chat below
      context().reset_sent()
      context().flush(true)
      M.load_into_chat(state.session_id, function()
        if result.forked and result.message then
          chat().note(result.message)
        end
        done(cb, nil, result)
      end)
    end)
  end
  if session_id and session_id ~= '' then
    return resume(session_id)
  end
  client.call('list sessions', protocol.method.listSessions, vim.empty_dict(), cb, function(sessions)
    if type(sessions) ~= 'table' or #sessions == 0 then
      tell('no sessions to resume', vim.log.levels.WARN)
      return done(cb, { message = 'no sessions' })
    end
    pick_session(sessions, 'Resume sidecar session', function(s)
      return pickers.session_item(s, sessions, state.session_id)
    end, resume, cb)
  end)
end

function M.transcript(session_id, cb)
  ensure()
  local params = (session_id and session_id ~= '') and { sessionId = session_id } or vim.empty_dict()
  client.call('transcript', protocol.method.getTranscript, params, cb, function(t)
    local buf = require('sidecar.transcript').show(t)
    done(cb, nil, { transcript = t, bufnr = buf })
  end)
end

--- The live session's user messages (not rewound), for vim.ui.select.
local function user_messages(cb)
  client.call('transcript', protocol.method.getTranscript, vim.empty_dict(), function()
    cb(nil)
  end, function(t)
    local out = {}
    for _, e in ipairs(t.entries or {}) do
      if e.type == 'message' and e.kind == 'user' and not e.rewound then
        out[#out + 1] = e
      end
    end
    cb(out)
  end)
end

--- A user message id: the given one, or picked with vim.ui.select. `whole` adds "the whole session" (id false).
local function pick_message(message_id, prompt, whole, cb)
  if message_id and message_id ~= '' then
    return cb(message_id)
  end
  user_messages(function(list)
    if not list then
      return cb(nil)
    end
    local items = {}
    if whole then
      items[1] = { id = false, text = '(the whole session)' }
    end
    vim.list_extend(items, list)
    if #items == 0 then
      tell('no message of yours in this session yet', vim.log.levels.WARN)
      return cb(nil)
    end
    vim.ui.select(
      items,
      { prompt = prompt, kind = 'sidecar.message', format_item = pickers.message_item },
      function(choice)
        cb(choice and choice.id)
      end
    )
  end)
end

--- :SidecarFork [MESSAGE_ID]: a new live session with this one's history before that message (picked; or all of it).
function M.fork(message_id, cb)
  ensure()
  pick_message(message_id, 'Fork the session before', true, function(id)
    if id == nil then
      return done(cb, { message = 'no message chosen' })
    end
    local params = id and { beforeMessageId = id } or vim.empty_dict()
    client.call('fork', protocol.method.forkSession, params, cb, function(result)
      state.session_id = result.sessionId
      context().reset_sent()
      M.load_into_chat(result.sessionId, function()
        local msg = string.format(
          'forked into session %s (%s messages from %s, which is unchanged)',
          result.sessionId,
          tostring(result.messageCount),
          tostring(result.parentSessionId)
        )
        say(msg)
        done(cb, nil, result)
      end)
    end)
  end)
end

--- After a rewind: the chat reloaded (the rewound messages marked), the note, the message back on the input line.
local function rewound(result, note, cb)
  M.load_into_chat(state.session_id, function()
    say(note)
    chat().set_input(result.text)
    done(cb, nil, result)
  end)
end

--- A file the rewind removed (the agent had created it) may still have the buffer the agent's edit opened: wipe it,
--- so that no :w brings the file back (the server only removes it when it holds what the agent left).
local function forget_removed(paths)
  for _, path in ipairs(paths or {}) do
    local buf = vim.fn.bufnr(path)
    if buf > 0 and vim.api.nvim_buf_is_loaded(buf) and vim.fn.filereadable(path) == 0 then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
end

--- A file the rewind put back in a buffer no window shows (the agent's edit loaded it hidden) is saved: the user cannot
--- see that buffer, so "restored" must be true on disk, and :qa must not stop at an unsaved buffer (E37/E162).
local function save_hidden(paths)
  for _, path in ipairs(paths or {}) do
    local buf = vim.fn.bufnr(path)
    if buf > 0 and vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified and #vim.fn.win_findbuf(buf) == 0 then
      pcall(vim.api.nvim_buf_call, buf, function()
        vim.cmd('silent noautocmd keepalt write')
      end)
    end
  end
end

--- :SidecarRewind! : the files the agent changed from that message on are listed in a float while vim.ui.select asks
--- whether to restore them (and, when the user changed some since, whether to keep or overwrite those); then the
--- conversation and the files are rewound together.
local function rewind_files(id, cb)
  local rf = require('sidecar.rewind_files')
  local root = vim.fn.getcwd()
  local checkpointing -- false: the setting is off (said in the note); nil: unknown
  local function run(force)
    local params = { messageId = id, restoreFiles = true, force = force }
    client.call('rewind', protocol.method.rewind, params, cb, function(result)
      forget_removed(result.removed)
      save_hidden(result.restored)
      rewound(result, rf.summary(result.text, result, root, checkpointing), cb)
    end)
  end
  local function preview()
    client.request(protocol.method.previewRewind, { messageId = id }, function(err, plan)
      if err then
        if err.code == protocol.error.methodNotFound then
          err = { code = err.code, message = 'this sidecar cannot restore files (update it); nothing was rewound' }
        end
        on_err('rewind')(err)
        return done(cb, err)
      end
      if not rf.touches(plan) then
        return run(false) -- nothing to ask about: the conversation is rewound and the note says no file needed it
      end
      local question, items = rf.choices(plan)
      local close = require('sidecar.confirm_view').open_lines(vim.list_extend({ question, '' }, rf.lines(plan, root)))
      vim.ui.select(items, {
        prompt = question,
        kind = 'sidecar.rewindFiles',
        format_item = function(it)
          return it.label
        end,
      }, function(choice)
        close()
        if not choice or choice.cancel then
          tell('rewind cancelled: nothing changed')
          return done(cb, { message = 'cancelled' })
        end
        run(choice.force)
      end)
    end)
  end
  client.request(protocol.method.listCheckpoints, vim.empty_dict(), function(err, list)
    if not err and type(list) == 'table' then
      checkpointing = list.checkpointing
    end
    preview()
  end)
end

--- :SidecarRewind[!] [MESSAGE_ID]: drop that message and everything after it from the model's history; its text goes
--- back into the chat input line. With `opts.files` (the !), also restore the files the agent changed since.
function M.rewind(message_id, cb, opts)
  ensure()
  pick_message(message_id, 'Rewind to before', false, function(id)
    if not id then
      return done(cb, { message = 'no message chosen' })
    end
    if opts and opts.files then
      return rewind_files(id, cb)
    end
    client.call('rewind', protocol.method.rewind, { messageId = id }, cb, function(result)
      rewound(result, result.message, cb)
    end)
  end)
end

--- :SidecarRename {title}: rename the live session.
function M.rename(title, cb, session_id)
  ensure()
  local function go(t)
    if not t or vim.trim(t) == '' then
      return done(cb, { message = 'no title' })
    end
    local params = { sessionId = session_id or state.session_id, title = vim.trim(t) }
    client.call('rename', protocol.method.renameSession, params, cb, function(result)
      tell('session renamed to ' .. result.title)
      done(cb, nil, result)
    end)
  end
  if title and title ~= '' then
    return go(title)
  end
  vim.ui.input({ prompt = 'New session title: ' }, go)
end

--- The server's `sidecar sessions restore ID` advice with the command that runs this server (the `sidecar` script
--- is not on $PATH after :SidecarInstall).
function M.cli_advice(message)
  local cmd = state.cmd or require('sidecar.config').cmd(state.cfg or require('sidecar.config').resolve({}))
  if not message or (#cmd == 1 and cmd[1] == 'sidecar') then
    return message
  end
  local full = table.concat(vim.tbl_map(vim.fn.shellescape, cmd), ' ')
  return (message:gsub('`sidecar sessions ', function()
    return '`' .. full .. ' sessions '
  end))
end

--- :SidecarDelete [ID]: move a session (not the live one) to the trash; picked with vim.ui.select without an id.
function M.delete(session_id, cb)
  ensure()
  local function go(id)
    client.call('delete', protocol.method.deleteSession, { sessionId = id }, cb, function(result)
      result.message = M.cli_advice(result.message)
      tell(result.message)
      done(cb, nil, result)
    end)
  end
  if session_id and session_id ~= '' then
    return go(session_id)
  end
  client.call('list sessions', protocol.method.listSessions, vim.empty_dict(), cb, function(sessions)
    local others = vim.tbl_filter(function(s)
      return s.sessionId ~= state.session_id
    end, sessions or {})
    if #others == 0 then
      tell('no other session to delete (the live one cannot be)', vim.log.levels.WARN)
      return done(cb, { message = 'nothing to delete' })
    end
    pick_session(others, 'Delete sidecar session (to the trash for 30 days)', function(s)
      return pickers.session_item(s, sessions, state.session_id)
    end, go, cb)
  end)
end

--- :SidecarRestore [ID]: bring a deleted session back from the trash; picked with vim.ui.select without an id.
function M.restore(session_id, cb)
  ensure()
  local function go(id)
    client.call('restore', protocol.method.restoreSession, { sessionId = id }, cb, function(result)
      tell(result.message)
      done(cb, nil, result)
    end)
  end
  if session_id and session_id ~= '' then
    return go(session_id)
  end
  client.call('list deleted sessions', protocol.method.listDeletedSessions, vim.empty_dict(), cb, function(trash)
    if #trash.sessions == 0 then
      tell('no deleted session to restore', vim.log.levels.WARN)
      return done(cb, { message = 'nothing to restore' })
    end
    pick_session(
      trash.sessions,
      string.format('Restore a deleted sidecar session (kept %d days)', trash.keepDays),
      function(s)
        return string.format('deleted %s  %s', tostring(s.deletedAt), tostring(s.title or s.sessionId:sub(1, 8)))
      end,
      go,
      cb
    )
  end)
end

-- Pinned facts -------------------------------------------------------------------------------------

--- :SidecarPin {text}: pin a fact to the session (the model gets it verbatim, through every compaction).
function M.pin(text, cb)
  ensure()
  if not text or vim.trim(text) == '' then
    tell('usage: :SidecarPin {text}', vim.log.levels.WARN)
    return done(cb, { message = 'no text' })
  end
  client.call('pin', protocol.method.pin, { text = text }, cb, function(result)
    local warning = type(result.warning) == 'string' and (' (' .. result.warning .. ')') or ''
    tell('pinned ' .. result.pinId .. warning)
    done(cb, nil, result)
  end)
end

function M.unpin(pin_id, cb)
  ensure()
  client.call('unpin', protocol.method.unpin, { pinId = pin_id }, cb, function(result)
    tell('unpinned ' .. pin_id)
    done(cb, nil, result)
  end)
end

--- :SidecarPins: list the pinned facts; picking one offers to unpin it.
function M.pins(cb)
  ensure()
  client.call('pins', protocol.method.listPins, vim.empty_dict(), cb, function(result)
    local pins = result.pins or {}
    if #pins == 0 then
      tell('nothing is pinned in this session (:SidecarPin {text} adds a fact)')
      return done(cb, nil, result)
    end
    vim.ui.select(pins, {
      prompt = 'Pinned facts (pick one to unpin it)',
      kind = 'sidecar.pin',
      format_item = function(p)
        return p.pinId .. '  ' .. pickers.first_words(p.text, 70)
      end,
    }, function(choice)
      if choice then
        M.unpin(choice.pinId, function()
          done(cb, nil, result)
        end)
      else
        done(cb, nil, result)
      end
    end)
  end)
end

--- A user message id for other commands (:SidecarCompress up-to): the given one, or picked like :SidecarRewind's.
M.pick_message = pick_message

return M
