-- sidecar/confirmToolCall: the question waits until the user chooses to answer it (:SidecarConfirm), then
-- vim.ui.select asks; the answer goes to the server then.
--
-- Why it waits: the built-in vim.ui.select is an inputlist() that reads the keyboard the moment it is called, so a
-- question arriving while the user types in another buffer took those keys as its answer (`1. first step<Enter>`
-- approved a shell command). So a question never reads a key by itself: it is announced (a one-line notice, the
-- chat), Insert mode goes on undisturbed, and only :SidecarConfirm (a command or a mapping the user runs) shows the
-- choices, after dropping the keys still waiting to be read (typeahead), so that nothing typed before the choices
-- were on screen can answer them.
local state = require('sidecar.state')

local M = {}

M.choices = {
  { label = 'Allow', decision = 'allow' },
  { label = 'Allow always', decision = 'allowAlways' },
  { label = 'Deny', decision = 'deny' },
}

--- Questions waiting for the user, oldest first: { params = ..., reply = function(decision) }.
M.waiting = {}

--- The choices for one request: a call that asks every time (params.askReason set: a protected path, a file with
--- several hard links) offers Allow and Deny only, since the server counts "allow always" as once for it; an MCP
--- call (params.mcpServer set) also offers to allow every tool of its server.
function M.choices_for(params)
  if type(params.askReason) == 'string' and params.askReason ~= '' then
    return { M.choices[1], M.choices[3] }
  end
  if type(params.mcpServer) ~= 'string' or params.mcpServer == '' then
    return M.choices
  end
  return {
    M.choices[1],
    M.choices[2],
    { label = 'Allow always for this server (' .. params.mcpServer .. ')', decision = 'allowAlwaysServer' },
    M.choices[3],
  }
end

-- The whole description, never cut: it holds the full shell command the user approves (long text wraps).
local function one_line(s)
  return (tostring(s or ''):gsub('%s+', ' '))
end

function M.prompt(params)
  local text = string.format('sidecar: allow tool %s?', tostring(params.toolName or '?'))
  if params.description and params.description ~= '' then
    text = text .. ' ' .. one_line(params.description)
  end
  return text
end

--- The question in the chat, with its diff; `waits`: it waits for :SidecarConfirm (said in the chat, which stays in
--- sight: a notice on the command line is soon covered by Insert mode's "-- INSERT --").
local function show_details(params, waits)
  local chat = require('sidecar.chat')
  local lines = { M.prompt(params) .. (waits and ' (waiting for you: :SidecarConfirm answers)' or '') }
  if params.diff and params.diff ~= '' then
    lines[#lines + 1] = '```diff'
    vim.list_extend(lines, vim.split(params.diff, '\n', { plain = true }))
    lines[#lines + 1] = '```'
  end
  chat.note(table.concat(lines, '\n'))
end

--- Drop the keys typed but not yet read: they were meant for what the user was doing, not for this question.
function M.flush_typeahead()
  while vim.fn.getchar(0) ~= 0 do
  end
end

--- Ask with vim.ui.select; `done(choice)` once, with the item or nil (dismissed, or the select failed).
local function select(params, done)
  local called = false
  local function once(item)
    if not called then
      called = true
      done(item)
    end
  end
  local ok, err = pcall(vim.ui.select, M.choices_for(params), {
    prompt = M.prompt(params),
    kind = 'sidecar.confirmToolCall',
    format_item = function(item)
      return item.label
    end,
  }, once)
  if not ok then
    vim.notify('sidecar: vim.ui.select failed: ' .. tostring(err), vim.log.levels.ERROR)
    once(nil)
  end
end

--- Before Neovim 0.11 a server request's handler must return its answer, and the LSP client sends it at once. To
--- answer later, find (on the call stack) the request being handled and the function that sends its response:
--- the next response the client would send (the placeholder this handler returns) is dropped once, and the
--- returned function sends the real one. nil when this Neovim's client is not built that way.
local function answer_later()
  for level = 3, 20 do
    local info = debug.getinfo(level, 'f')
    if not info then
      return nil
    end
    local fn = info.func
    local decoded, send_at, send, client
    for i = 1, 200 do
      local name, value = debug.getupvalue(fn, i)
      if not name then
        break
      end
      if name == 'decoded' and type(value) == 'table' then
        decoded = value
      elseif name == 'send_response' and type(value) == 'function' then
        send_at, send = i, value
      elseif
        name == 'self'
        and type(value) == 'table'
        and rawget(value, 'send_response') == nil
        and type(value.send_response) == 'function'
      then
        client = value
      end
    end
    if decoded and decoded.id ~= nil and (send or client) then
      local id = decoded.id
      if send then -- 0.7, 0.8: a local function of the rpc module, shared by every response
        debug.setupvalue(fn, send_at, function()
          debug.setupvalue(fn, send_at, send)
        end)
        return function(result)
          send(id, nil, result)
        end
      end
      client.send_response = function(self) -- 0.9, 0.10: a method; this field hides it once
        self.send_response = nil
      end
      return function(result)
        client:send_response(id, nil, result)
      end
    end
  end
  return nil
end

local function announce(params)
  local count = #M.waiting
  local more = count > 1 and string.format(' (%d questions waiting)', count) or ''
  require('sidecar.ui').tell(
    string.format('tool %s asks to run: :SidecarConfirm to answer%s', tostring(params.toolName or '?'), more),
    vim.log.levels.WARN
  )
end

--- Handler for the server request. The question waits in M.waiting until :SidecarConfirm answers it; the
--- response is sent then (0.11: the handler's coroutine resumes; before: see answer_later).
function M.handle(_, params, ctx)
  params = type(params) == 'table' and params or {}
  local co = coroutine.running()
  local later = not co and answer_later() or nil
  pcall(show_details, params, co ~= nil or later ~= nil)
  if not co and not later then
    -- This Neovim can neither wait in a coroutine nor answer later: ask now, without the keys typed before.
    M.flush_typeahead()
    local choice, done = nil, false
    local close = require('sidecar.confirm_view').open(params, M.prompt(params))
    select(params, function(item)
      choice, done = item, true
    end)
    if not done then
      vim.wait((state.cfg and state.cfg.confirm_timeout_ms) or 120000, function()
        return done
      end, 20)
    end
    close()
    return { decision = M.decided(params, choice) }
  end
  local question = { params = params, client_id = type(ctx) == 'table' and ctx.client_id or nil }
  local result
  question.reply = function(decision)
    result = { decision = decision }
    if co then
      local ok, err = coroutine.resume(co)
      if not ok then
        vim.notify('sidecar: confirmToolCall: ' .. tostring(err), vim.log.levels.ERROR)
      end
    else
      local ok, err = pcall(later, result)
      if not ok then
        vim.notify('sidecar: could not send the answer: ' .. tostring(err), vim.log.levels.WARN)
      end
    end
  end
  M.waiting[#M.waiting + 1] = question
  pcall(announce, params)
  if not co then
    return { decision = 'deny' } -- never sent: answer_later dropped it; the user's answer follows
  end
  coroutine.yield()
  return result
end

--- The decision for a choice (nil: dismissed = deny), told in the chat.
function M.decided(params, choice)
  local decision = (type(choice) == 'table' and choice.decision) or 'deny'
  pcall(require('sidecar.chat').note, string.format('tool %s: %s', tostring(params.toolName or '?'), decision))
  return decision
end

--- :SidecarConfirm: show the oldest waiting question (its diff in a float) and ask; the answer goes to the server.
function M.answer()
  -- a question of a sidecar that has exited (a crash, :SidecarRestart) can no longer be answered
  while M.waiting[1] and M.waiting[1].client_id and not vim.lsp.get_client_by_id(M.waiting[1].client_id) do
    local gone = table.remove(M.waiting, 1)
    pcall(
      require('sidecar.chat').note,
      string.format('tool %s: not answered (its sidecar has exited)', tostring(gone.params.toolName or '?'))
    )
  end
  local question = M.waiting[1]
  if not question then
    require('sidecar.ui').tell('no tool is waiting for an answer')
    return
  end
  if question.asking then
    return
  end
  question.asking = true
  M.flush_typeahead()
  local close = require('sidecar.confirm_view').open(question.params, M.prompt(question.params))
  select(question.params, function(choice)
    close()
    for i, q in ipairs(M.waiting) do
      if q == question then
        table.remove(M.waiting, i)
        break
      end
    end
    question.reply(M.decided(question.params, choice))
    if #M.waiting > 0 then
      pcall(announce, M.waiting[1].params)
    end
  end)
end

return M
