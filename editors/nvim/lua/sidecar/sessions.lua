-- Forking, rewinding, renaming and deleting sessions, and pinned facts (sidecar/forkSession, rewind, pin, …).
local client = require('sidecar.client')
local protocol = require('sidecar.protocol')
local state = require('sidecar.state')

local M = {}
local h = {} -- helpers from init.lua: ensure, notify, on_err, done, load_into_chat

function M.bind(helpers)
  h = helpers
end

local function first_line(text)
  return (tostring(text or ''):gsub('\n.*', ''))
end

--- The live session's user messages (not rewound), for vim.ui.select.
local function user_messages(cb)
  client.request(protocol.method.getTranscript, vim.empty_dict(), function(err, t)
    if err then
      h.on_err('transcript')(err)
      return cb(nil)
    end
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
    for _, e in ipairs(list) do
      items[#items + 1] = e
    end
    if #items == 0 then
      h.notify('no message of yours in this session yet', vim.log.levels.WARN)
      return cb(nil)
    end
    vim.ui.select(items, {
      prompt = prompt,
      kind = 'sidecar.message',
      format_item = function(e)
        return (e.id and (e.id .. '  ') or '') .. first_line(e.text)
      end,
    }, function(choice)
      if choice then
        cb(choice.id)
      else
        cb(nil)
      end
    end)
  end)
end

--- :SidecarFork [MESSAGE_ID]: a new live session with this one's history before that message (picked; or all of it).
function M.fork(message_id, cb)
  h.ensure()
  pick_message(message_id, 'Fork the session before', true, function(id)
    if id == nil then
      return h.done(cb, { message = 'no message chosen' })
    end
    local params = id and { beforeMessageId = id } or vim.empty_dict()
    client.request(protocol.method.forkSession, params, function(err, result)
      if err then
        h.on_err('fork')(err)
        return h.done(cb, err)
      end
      state.session_id = result.sessionId
      require('sidecar.context').reset_sent()
      h.load_into_chat(result.sessionId, function()
        local msg = string.format(
          'forked into session %s (%s messages from %s, which is unchanged)',
          result.sessionId,
          tostring(result.messageCount),
          tostring(result.parentSessionId)
        )
        require('sidecar.chat').note(msg)
        h.notify(msg)
        h.done(cb, nil, result)
      end)
    end)
  end)
end

--- :SidecarRewind [MESSAGE_ID]: drop that message and everything after it from the model's history; its text goes
--- back into the chat input line.
function M.rewind(message_id, cb)
  h.ensure()
  pick_message(message_id, 'Rewind to before', false, function(id)
    if not id then
      return h.done(cb, { message = 'no message chosen' })
    end
    client.request(protocol.method.rewind, { messageId = id }, function(err, result)
      if err then
        h.on_err('rewind')(err)
        return h.done(cb, err)
      end
      local chat = require('sidecar.chat')
      h.load_into_chat(state.session_id, function()
        chat.note(result.message)
        if chat.set_input then
          chat.set_input(result.text)
        end
        h.notify(result.message)
        h.done(cb, nil, result)
      end)
    end)
  end)
end

--- :SidecarRename {title}: rename the live session.
function M.rename(title, cb, session_id)
  h.ensure()
  local function go(t)
    if not t or vim.trim(t) == '' then
      return h.done(cb, { message = 'no title' })
    end
    local params = { sessionId = session_id or state.session_id, title = vim.trim(t) }
    client.request(protocol.method.renameSession, params, function(err, result)
      if err then
        h.on_err('rename')(err)
        return h.done(cb, err)
      end
      h.notify('session renamed to ' .. result.title)
      h.done(cb, nil, result)
    end)
  end
  if title and title ~= '' then
    return go(title)
  end
  vim.ui.input({ prompt = 'New session title: ' }, go)
end

--- :SidecarDelete [ID]: move a session (not the live one) to the trash; picked with vim.ui.select without an id.
function M.delete(session_id, cb)
  h.ensure()
  local function go(id)
    client.request(protocol.method.deleteSession, { sessionId = id }, function(err, result)
      if err then
        h.on_err('delete')(err)
        return h.done(cb, err)
      end
      h.notify(result.message)
      h.done(cb, nil, result)
    end)
  end
  if session_id and session_id ~= '' then
    return go(session_id)
  end
  client.request(protocol.method.listSessions, vim.empty_dict(), function(err, sessions)
    if err then
      h.on_err('list sessions')(err)
      return h.done(cb, err)
    end
    local others = {}
    for _, s in ipairs(sessions or {}) do
      if s.sessionId ~= state.session_id then
        others[#others + 1] = s
      end
    end
    if #others == 0 then
      h.notify('no other session to delete (the live one cannot be)', vim.log.levels.WARN)
      return h.done(cb, { message = 'nothing to delete' })
    end
    vim.ui.select(others, {
      prompt = 'Delete sidecar session (to the trash for 30 days)',
      kind = 'sidecar.session',
      format_item = function(s)
        return string.format('%s  %s', tostring(s.lastUpdated or ''), tostring(s.title or s.sessionId))
      end,
    }, function(choice)
      if choice then
        go(choice.sessionId)
      else
        h.done(cb, { message = 'no session chosen' })
      end
    end)
  end)
end

--- :SidecarRestore [ID]: bring a deleted session back from the trash; picked with vim.ui.select without an id.
function M.restore(session_id, cb)
  h.ensure()
  local function go(id)
    client.request(protocol.method.restoreSession, { sessionId = id }, function(err, result)
      if err then
        h.on_err('restore')(err)
        return h.done(cb, err)
      end
      h.notify(result.message)
      h.done(cb, nil, result)
    end)
  end
  if session_id and session_id ~= '' then
    return go(session_id)
  end
  client.request(protocol.method.listDeletedSessions, vim.empty_dict(), function(err, trash)
    if err then
      h.on_err('list deleted sessions')(err)
      return h.done(cb, err)
    end
    if #trash.sessions == 0 then
      h.notify('no deleted session to restore', vim.log.levels.WARN)
      return h.done(cb, { message = 'nothing to restore' })
    end
    vim.ui.select(trash.sessions, {
      prompt = string.format('Restore a deleted sidecar session (kept %d days)', trash.keepDays),
      kind = 'sidecar.session',
      format_item = function(s)
        return string.format('deleted %s  %s', tostring(s.deletedAt), tostring(s.title or s.sessionId:sub(1, 8)))
      end,
    }, function(choice)
      if choice then
        go(choice.sessionId)
      else
        h.done(cb, { message = 'no session chosen' })
      end
    end)
  end)
end

--- :SidecarPin {text}: pin a fact to the session (the model gets it verbatim, through every compaction).
function M.pin(text, cb)
  h.ensure()
  if not text or vim.trim(text) == '' then
    h.notify('usage: :SidecarPin {text}', vim.log.levels.WARN)
    return h.done(cb, { message = 'no text' })
  end
  client.request(protocol.method.pin, { text = text }, function(err, result)
    if err then
      h.on_err('pin')(err)
      return h.done(cb, err)
    end
    local warning = type(result.warning) == 'string' and (' (' .. result.warning .. ')') or ''
    h.notify('pinned ' .. result.pinId .. warning)
    h.done(cb, nil, result)
  end)
end

function M.unpin(pin_id, cb)
  h.ensure()
  client.request(protocol.method.unpin, { pinId = pin_id }, function(err, result)
    if err then
      h.on_err('unpin')(err)
      return h.done(cb, err)
    end
    h.notify('unpinned ' .. pin_id)
    h.done(cb, nil, result)
  end)
end

--- :SidecarPins: list the pinned facts; picking one offers to unpin it.
function M.pins(cb)
  h.ensure()
  client.request(protocol.method.listPins, vim.empty_dict(), function(err, result)
    if err then
      h.on_err('pins')(err)
      return h.done(cb, err)
    end
    local pins = result.pins or {}
    if #pins == 0 then
      h.notify('nothing is pinned in this session (:SidecarPin {text} adds a fact)')
      return h.done(cb, nil, result)
    end
    vim.ui.select(pins, {
      prompt = 'Pinned facts (pick one to unpin it)',
      kind = 'sidecar.pin',
      format_item = function(p)
        return p.pinId .. '  ' .. first_line(p.text)
      end,
    }, function(choice)
      if choice then
        M.unpin(choice.pinId, function()
          h.done(cb, nil, result)
        end)
      else
        h.done(cb, nil, result)
      end
    end)
  end)
end

return M
