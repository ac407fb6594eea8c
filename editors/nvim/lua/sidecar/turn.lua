-- A turn of the conversation: sending the user's message (with the editor's context first), cancelling the running
-- turn, and what the chat's input line means (a message, or a /command).
local actions = require('sidecar.actions')
local chat = require('sidecar.chat')
local client = require('sidecar.client')
local context = require('sidecar.context')
local lifecycle = require('sidecar.lifecycle')
local protocol = require('sidecar.protocol')
local state = require('sidecar.state')
local status = require('sidecar.status')

local M = {}

local function notify(msg, level)
  require('sidecar.ui').tell(msg, level)
end

local current_turn = nil -- {turn, id}

--- Send a user message (opts.line1/line2: a range to send as the selected text).
function M.send(text, opts)
  opts = opts or {}
  lifecycle.ensure()
  text = vim.trim(text or '')
  if text == '' then
    notify('nothing to send', vim.log.levels.WARN)
    return
  end
  if opts.line1 and opts.line2 and (opts.range or 0) > 0 then
    context.set_selection_from_range(opts.line1, opts.line2)
  else
    context.capture()
  end
  -- The context must reach the server before the message it belongs to.
  context.flush(false)
  chat.ensure()
  local cfg = state.cfg.chat or {}
  if cfg.open_on_send ~= false and not chat.window() then
    chat.open({ focus = false })
  end
  local turn = chat.begin_turn(text)
  local entry = { turn = turn }
  current_turn = entry
  state.turns_in_flight = (state.turns_in_flight or 0) + 1
  ---@param result sidecar.SendMessageResult
  local _, id = client.request(protocol.method.sendMessage, { text = text }, function(err, result)
    if current_turn == entry then
      current_turn = nil
    end
    state.turns_in_flight = math.max((state.turns_in_flight or 1) - 1, 0)
    if state.turns_in_flight == 0 then
      context.flush(false) -- what changed in the editor during the turn
    end
    if not err and type(result) == 'table' and status.accept(result.usage) then
      state.session_id = result.usage.sessionId or state.session_id
    end
    chat.finish(turn, err, result)
    -- A model error was already told by the server (window/showMessage) and is in the chat: not a third time.
    if err and err.code ~= protocol.error.requestCancelled and err.code ~= protocol.error.modelError then
      notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
    end
  end)
  entry.id = id
  return turn
end

--- Cancel the running turn ($/cancelRequest).
function M.cancel()
  if current_turn and current_turn.id then
    client.cancel(current_turn.id)
  end
end

--- The chat's input line: /compress [focus], /new, /resume, /undo, /transcript, or a message to send.
function M.submit(text)
  local cmd, rest = text:match('^/(%a+)%s*(.*)$')
  if cmd == 'compress' then
    actions.compress(rest)
  elseif cmd == 'new' then
    actions.new_session()
  elseif cmd == 'resume' then
    actions.resume()
  elseif cmd == 'undo' then
    actions.undo_compaction()
  elseif cmd == 'transcript' then
    actions.transcript()
  else
    M.send(text)
  end
end

return M
