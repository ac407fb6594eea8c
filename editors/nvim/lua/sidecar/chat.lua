-- The chat buffer: a prompt buffer whose last line is the input line; replies stream in above it
-- from sidecar/messageDelta.
local state = require('sidecar.state')
local protocol = require('sidecar.protocol')

local M = {}

--- What the input line's text is handed to, and what Ctrl-C on it does (given by init.lua: sidecar/turn.lua).
---@type fun(text: string)
M.on_submit = function() end
---@type fun()
M.on_interrupt = function() end

local NAME = 'sidecar://chat'
local PROMPT = '> '
local ns = vim.api.nvim_create_namespace('sidecar_chat')
local plan_ns = vim.api.nvim_create_namespace('sidecar_plan')
local plan_lines = {} -- the plan block: the model's todo list (sidecar/plan.lua), drawn above the input line

local buf = nil
local turns = {} -- turnId -> turn
local unbound = {} -- turns sent but without a turnId yet (FIFO: turns run in arrival order)
local order = {} -- every turn, oldest first (for tests and :SidecarCancel)

local function valid()
  return buf and vim.api.nvim_buf_is_valid(buf)
end

function M.bufnr()
  return valid() and buf or nil
end

local function split_lines(text)
  return vim.split(text, '\n', { plain = true })
end

--- Draw the plan block just above the input line, as virtual lines (not text of the buffer: the conversation
--- above it stays what was said, and the block follows the input line down).
local function place_plan()
  if not valid() then
    return
  end
  vim.api.nvim_buf_clear_namespace(buf, plan_ns, 0, -1)
  if #plan_lines == 0 then
    return
  end
  local virt = {}
  for i, line in ipairs(plan_lines) do
    virt[#virt + 1] = { { line, i == 1 and 'Title' or 'Comment' } }
  end
  local n = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_extmark(buf, plan_ns, n - 1, 0, { virt_lines = virt, virt_lines_above = true })
end

--- Insert lines just above the input line; returns the 0-based row of the first one.
local function insert(lines)
  local n = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, n - 1, n - 1, false, lines)
  place_plan()
  return n - 1
end

local function follow()
  local n = vim.api.nvim_buf_line_count(buf)
  local cur = vim.api.nvim_get_current_win()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if win ~= cur and vim.api.nvim_win_get_buf(win) == buf then
      pcall(vim.api.nvim_win_set_cursor, win, { n, 0 })
    end
  end
end

local function on_submit(text)
  -- Vim leaves the typed line in the buffer and adds a new prompt line: replace the typed line
  -- with our own rendering of the message.
  local n = vim.api.nvim_buf_line_count(buf)
  if n >= 2 then
    vim.api.nvim_buf_set_lines(buf, n - 2, n - 1, false, {})
  end
  vim.bo[buf].modified = false
  text = vim.trim(text or '')
  if text == '' then
    return
  end
  M.on_submit(text)
end

function M.ensure()
  if valid() then
    return buf
  end
  local existing = vim.fn.bufnr(NAME)
  if existing > 0 then
    pcall(vim.api.nvim_buf_delete, existing, { force = true })
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, NAME)
  vim.bo[buf].buftype = 'prompt'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  vim.fn.prompt_setprompt(buf, PROMPT)
  vim.fn.prompt_setcallback(buf, on_submit)
  vim.fn.prompt_setinterrupt(buf, function()
    M.on_interrupt()
  end)
  vim.keymap.set('n', '<C-c>', function()
    M.on_interrupt()
  end, { buffer = buf, desc = 'sidecar: cancel the running turn' })
  turns, unbound, order = {}, {}, {}
  M.hint()
  place_plan()
  return buf
end

--- What to do here, atop an empty chat (and after a new session).
M.HINT = 'Type a message on the `> ` line below and press Enter (Ctrl-C cancels a reply). '
  .. '/compress [focus], /new, /resume, /undo, /transcript; :help sidecar-chat'

function M.hint()
  if valid() and vim.api.nvim_buf_line_count(buf) <= 1 then
    M.note(M.HINT)
    -- Neovim draws a prompt buffer's `> ` only once Insert mode starts there: draw it, so the hint points at it
    local n = vim.api.nvim_buf_line_count(buf)
    if vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] == '' then
      vim.api.nvim_buf_set_lines(buf, n - 1, n, false, { PROMPT })
      vim.bo[buf].modified = false
    end
  end
end

function M.window()
  if not valid() then
    return nil
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
  return nil
end

--- Show the chat buffer; opts.focus moves the cursor there (else the current window stays current).
function M.open(opts)
  opts = opts or {}
  M.ensure()
  local win = M.window()
  if not win then
    local cur = vim.api.nvim_get_current_win()
    local split = (state.cfg and state.cfg.chat and state.cfg.chat.split) or 'botright 15split'
    vim.cmd(split)
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
    vim.wo[win].wrap = true
    vim.wo[win].linebreak = true
    vim.wo[win].number = false
    pcall(vim.api.nvim_win_set_cursor, win, { vim.api.nvim_buf_line_count(buf), 0 })
    if not opts.focus and vim.api.nvim_win_is_valid(cur) then
      vim.api.nvim_set_current_win(cur)
    end
  elseif opts.focus then
    vim.api.nvim_set_current_win(win)
  end
  return win
end

-- Turns -----------------------------------------------------------------------------------------

local function render_lines(turn)
  local lines = {}
  for _, seg in ipairs(turn.segments) do
    if seg.kind == 'text' then
      for _, l in ipairs(split_lines(seg.text)) do
        lines[#lines + 1] = l
      end
    elseif seg.kind == 'note' then
      if #lines > 0 and lines[#lines] ~= '' then
        lines[#lines + 1] = ''
      end
      vim.list_extend(lines, M.note_lines(seg.text))
    else
      lines[#lines + 1] = seg.line
    end
  end
  if #lines == 0 or (#lines == 1 and lines[1] == '') then
    lines = { turn.done and '' or '…' }
  end
  if turn.error then
    -- not `> …`: that is what the input line looks like
    lines[#lines + 1] = ''
    lines[#lines + 1] = (turn.error == 'cancelled' and '⊘ ' or '✗ ') .. turn.error
  end
  return lines
end

local function render(turn)
  if not valid() then
    return
  end
  local pos = vim.api.nvim_buf_get_extmark_by_id(buf, ns, turn.mark, {})
  if not pos or not pos[1] then
    return
  end
  local row = pos[1]
  local lines = render_lines(turn)
  vim.api.nvim_buf_set_lines(buf, row, row + turn.nlines, false, lines)
  turn.nlines = #lines
  turn.mark = vim.api.nvim_buf_set_extmark(buf, ns, row, 0, { id = turn.mark })
  vim.bo[buf].modified = false
  follow()
end

local function new_turn(user_text)
  M.ensure()
  local header = {}
  if user_text then
    header = { '## You', '' }
    vim.list_extend(header, split_lines(user_text))
    header[#header + 1] = ''
  end
  header[#header + 1] = '## Gemini'
  header[#header + 1] = ''
  insert(header)
  local row = insert({ '…', '' })
  local turn = {
    segments = {},
    nlines = 1,
    done = false,
    mark = vim.api.nvim_buf_set_extmark(buf, ns, row, 0, {}),
  }
  order[#order + 1] = turn
  vim.bo[buf].modified = false
  follow()
  return turn
end

--- A user message was sent: show it with an empty reply that the deltas fill.
function M.begin_turn(user_text)
  local turn = new_turn(user_text)
  unbound[#unbound + 1] = turn
  return turn
end

local function bind(turn_id)
  local turn = turns[turn_id]
  if turn then
    return turn
  end
  turn = table.remove(unbound, 1) or new_turn(nil)
  turn.turnId = turn_id
  turns[turn_id] = turn
  return turn
end

local function append_text(turn, text)
  local last = turn.segments[#turn.segments]
  if last and last.kind == 'text' then
    last.text = last.text .. text
  else
    turn.segments[#turn.segments + 1] = { kind = 'text', text = text }
  end
end

function M.on_delta(params)
  if type(params) ~= 'table' or type(params.text) ~= 'string' then
    return
  end
  local turn = bind(params.turnId or '?')
  append_text(turn, params.text)
  render(turn)
end

--- "Gemini's reply was unusable (…); retrying, attempt 2 of 4."
function M.retry_line(params)
  return string.format(
    "↻ Gemini's reply was unusable (%s); retrying, attempt %s of %s.",
    tostring(params.message or params.reason or '?'),
    tostring(params.attempt or '?'),
    tostring(params.maxAttempts or '?')
  )
end

--- sidecar/retry: the attempt that failed is dropped (its text was the last text segment of the round under
--- way) and a line says why; the next attempt streams into a fresh text segment.
function M.on_retry(params)
  if type(params) ~= 'table' then
    return
  end
  local turn = bind(params.turnId or '?')
  local last = turn.segments[#turn.segments]
  if last and last.kind == 'text' then
    turn.segments[#turn.segments] = nil
  end
  turn.segments[#turn.segments + 1] = { kind = 'retry', line = M.retry_line(params) }
  turn.segments[#turn.segments + 1] = { kind = 'text', text = '' }
  render(turn)
end

local icons = { pending = '…', running = '⚙', done = '✓', error = '✗', denied = '⊘', cancelled = '⊘' }

function M.on_tool_call(params)
  if type(params) ~= 'table' then
    return
  end
  local turn = bind(params.turnId or '?')
  local line = string.format(
    '%s tool %s: %s%s',
    icons[params.status] or '•',
    params.name or '?',
    params.status or '?',
    (params.summary and params.summary ~= '') and (' — ' .. params.summary) or ''
  )
  for i, seg in ipairs(turn.segments) do
    if seg.kind == 'tool' and seg.callId == params.callId then
      seg.line = line
      -- its question, diff and answer (notes) came after its first line: the outcome goes below them
      local asked = false
      for j = i + 1, #turn.segments do
        asked = asked or turn.segments[j].kind == 'note'
      end
      if asked and params.status ~= 'pending' and params.status ~= 'running' then
        table.remove(turn.segments, i)
        if turn.segments[i] and turn.segments[i].kind == 'text' and turn.segments[i].text == '' then
          table.remove(turn.segments, i)
        end
        turn.segments[#turn.segments + 1] = seg
        turn.segments[#turn.segments + 1] = { kind = 'text', text = '' }
      end
      render(turn)
      return
    end
  end
  turn.segments[#turn.segments + 1] = { kind = 'tool', callId = params.callId, line = line }
  -- Text after a tool call starts a new paragraph.
  turn.segments[#turn.segments + 1] = { kind = 'text', text = '' }
  render(turn)
end

--- The sendMessage request answered: the result text is authoritative.
function M.finish(turn, err, result)
  if not turn then
    return
  end
  for i, t in ipairs(unbound) do
    if t == turn then
      table.remove(unbound, i)
      break
    end
  end
  turn.done = true
  if err then
    -- the server's notice of this error, put in the turn as a note, is said again by the error line below
    for i = #turn.segments, 1, -1 do
      local seg = turn.segments[i]
      if seg.kind == 'note' and type(err.message) == 'string' and seg.text:find(err.message, 1, true) then
        table.remove(turn.segments, i)
      end
    end
    if err.code == protocol.error.requestCancelled then
      turn.error = 'cancelled'
    else
      turn.error = 'error: ' .. (err.message or vim.inspect(err))
    end
  elseif type(result) == 'table' then
    if result.turnId and not turn.turnId then
      turn.turnId = result.turnId
      turns[result.turnId] = turn
    end
    local has_tools = false -- (or retry lines and notes: they stay shown, in the order they came)
    for _, seg in ipairs(turn.segments) do
      has_tools = has_tools or seg.kind ~= 'text'
    end
    if not has_tools and type(result.text) == 'string' then
      turn.segments = { { kind = 'text', text = result.text } }
    end
  end
  render(turn)
end

--- A note's lines: prose in italics, a fenced block (```diff … ```) as it is.
function M.note_lines(text)
  local lines, fenced = {}, false
  -- one line of prose is a remark, in italics; several (a list of MCP servers, say) are shown as they are: italics
  -- line by line make a list hard to read
  local prose = 0
  for _, l in ipairs(split_lines(text)) do
    if l:match('^```') then
      fenced = not fenced
    elseif not fenced and vim.trim(l) ~= '' then
      prose = prose + 1
    end
  end
  fenced = false
  for _, l in ipairs(split_lines(text)) do
    if l:match('^```') then
      fenced = not fenced
      lines[#lines + 1] = l
    elseif fenced or vim.trim(l) == '' or prose > 1 then
      lines[#lines + 1] = l
    else
      lines[#lines + 1] = '_' .. l .. '_'
    end
  end
  lines[#lines + 1] = ''
  return lines
end

--- The turn running now (the newest one not answered yet), or nil.
local function running_turn()
  for i = #order, 1, -1 do
    if not order[i].done then
      return order[i]
    end
  end
  return nil
end

--- An informational line in the chat (compaction results, session changes, restarts, a tool's diff). While a turn
--- runs it goes into that turn where it happened (before the reply that follows it); the chat buffer is made if
--- there is none yet, so that :SidecarChat shows it later.
function M.note(text)
  text = tostring(text or '')
  M.ensure()
  local turn = running_turn()
  if turn then
    turn.segments[#turn.segments + 1] = { kind = 'note', text = text }
    turn.segments[#turn.segments + 1] = { kind = 'text', text = '' }
    render(turn)
    return
  end
  insert(M.note_lines(text))
  vim.bo[buf].modified = false
  follow()
end

--- Put text on the input line (after a rewind: the message taken back, ready to edit and send again).
--- A prompt buffer's input is one line: the message's lines are joined with spaces.
function M.set_input(text)
  if not valid() then
    return
  end
  local n = vim.api.nvim_buf_line_count(buf)
  local one = table.concat(split_lines(text or ''), ' ')
  vim.api.nvim_buf_set_lines(buf, n - 1, n, false, { PROMPT .. one })
  vim.bo[buf].modified = false
end

--- The text on the input line (without the prompt).
function M.input()
  if not valid() then
    return ''
  end
  local n = vim.api.nvim_buf_line_count(buf)
  local line = vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] or ''
  return line:sub(1, #PROMPT) == PROMPT and line:sub(#PROMPT + 1) or line
end

--- Empty the transcript part of the buffer (keeps the input line).
function M.clear()
  if not valid() then
    return
  end
  local n = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, 0, n - 1, false, {})
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  turns, unbound, order = {}, {}, {}
  vim.bo[buf].modified = false
  place_plan()
end

--- Replace the chat with a session's transcript (after :SidecarResume).
function M.load(transcript)
  M.ensure()
  M.clear()
  local lines = require('sidecar.transcript').chat_lines(transcript)
  if #lines > 0 then
    insert(lines)
  end
  vim.bo[buf].modified = false
  follow()
end

--- Transcript text (everything above the input line).
--- Show `lines` (sidecar/plan.lua's rendering of the todo list; {} for none) as the plan block above the input line.
---@param lines string[]
function M.set_plan(lines)
  plan_lines = lines or {}
  place_plan()
end

--- The plan block as drawn: the 0-based row of the line it stands above, and its lines (nil when none is drawn).
---@return { row: integer, lines: string[] }|nil
function M.plan_block()
  if not valid() then
    return nil
  end
  local marks = vim.api.nvim_buf_get_extmarks(buf, plan_ns, 0, -1, {})
  if #marks == 0 then
    return nil
  end
  return { row = marks[1][2], lines = vim.deepcopy(plan_lines) }
end

function M.text()
  if not valid() then
    return ''
  end
  local n = vim.api.nvim_buf_line_count(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, n - 1, false), '\n')
end

function M.turns()
  return order
end

return M
