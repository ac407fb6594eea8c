-- Rendering of sidecar/getTranscript results: the full transcript buffer, and the chat view.
local pickers = require('sidecar.pickers')

local M = {}

--- 9120 -> "9,120"
function M.thousands(n)
  n = tonumber(n)
  if not n then
    return '?'
  end
  local s = tostring(math.floor(n))
  local neg = s:sub(1, 1) == '-'
  if neg then
    s = s:sub(2)
  end
  local out = s:reverse():gsub('(%d%d%d)', '%1,'):reverse():gsub('^,', '')
  return (neg and '-' or '') .. out
end

local function lines_of(text)
  return vim.split(tostring(text or ''), '\n', { plain = true })
end

local function add(out, list)
  for _, l in ipairs(list) do
    out[#out + 1] = l
  end
end

local headers = {
  user = '## You',
  model = '## Gemini',
  toolCall = '### Tool call',
  toolResult = '### Tool result',
  ideContext = '### IDE context',
  info = '### Info',
  error = '### Error',
  summary = '### Conversation summary',
}

function M.compaction_line(e)
  local s = string.format(
    '── compaction (%s) %s: %s → %s tokens',
    e.trigger or '?',
    e.status or '?',
    M.thousands(e.originalTokenCount),
    M.thousands(e.newTokenCount)
  )
  if e.undone then
    s = s .. ' (undone)'
  end
  if e.edited then
    s = s .. ', your edited summary'
  end
  if type(e.rating) == 'string' then
    s = s .. ', rated ' .. (e.rating == 'good' and 'good' or 'lost something')
    if type(e.ratingNote) == 'string' then
      s = s .. ': ' .. e.ratingNote
    end
  end
  return s .. ' ──'
end

--- Where a branch starts (a `fork` entry): the entries above it are the parent session's.
function M.fork_line(e)
  local why = e.reason == 'locked' and ' (it was open in another window)' or ''
  return '── branch of session ' .. tostring(e.parentSessionId or '?') .. ' starts here' .. why .. ' ──'
end

local REWOUND = '  (rewound: the model no longer sees it)'
local MASKED = '  (masked: the model sees previews; the full outputs are saved)'

--- Every entry, with its time: the :SidecarTranscript buffer.
function M.full_lines(t)
  local out = { '# Sidecar transcript — session ' .. tostring(t.sessionId or '?'), '' }
  for _, e in ipairs(t.entries or {}) do
    if e.type == 'compaction' then
      add(out, { M.compaction_line(e) .. '  ' .. pickers.local_time(e.time), '' })
      if type(e.snapshot) == 'string' and e.snapshot ~= '' then
        add(out, { '### Summary the model continues from', '' })
        add(out, lines_of(e.snapshot))
        out[#out + 1] = ''
      end
    elseif e.type == 'fork' then
      add(out, { M.fork_line(e) .. '  ' .. pickers.local_time(e.time), '' })
    else
      local h = (headers[e.kind] or ('## ' .. tostring(e.kind or e.role or '?')))
        .. (e.rewound and REWOUND or '')
        .. (e.masked and MASKED or '')
      out[#out + 1] = h .. '  ' .. pickers.local_time(e.time)
      out[#out + 1] = ''
      add(out, lines_of(e.text))
      out[#out + 1] = ''
    end
  end
  return out
end

--- A toolCall entry's own words (lines) and its tool names: from `toolCalls` (data), else the `→ name(…)` lines
--- of the text — never the text's first word.
function M.split_tool_call(e)
  local prose, arrows = {}, {}
  for _, l in ipairs(lines_of(e.text)) do
    local name = l:match('^→ ([%a_][%w_.%-]*)')
    if name then
      arrows[#arrows + 1] = name
    else
      prose[#prose + 1] = l
    end
  end
  while #prose > 0 and vim.trim(prose[#prose]) == '' do
    table.remove(prose)
  end
  local calls = {}
  if type(e.toolCalls) == 'table' and #e.toolCalls > 0 then
    for _, c in ipairs(e.toolCalls) do
      calls[#calls + 1] = tostring(c.name)
    end
  else
    calls = arrows
  end
  return prose, calls
end

--- The conversation as the chat buffer shows it (user and model text, tools, compactions).
function M.chat_lines(t)
  local out = {}
  for _, e in ipairs(t.entries or {}) do
    if e.type == 'compaction' then
      add(out, { '_' .. M.compaction_line(e) .. '_', '' })
    elseif e.type == 'fork' then
      add(out, { '_' .. M.fork_line(e) .. '_', '' })
    elseif e.kind == 'user' or e.kind == 'model' then
      add(out, { headers[e.kind] .. (e.rewound and REWOUND or ''), '' })
      add(out, lines_of(e.text))
      out[#out + 1] = ''
    elseif e.kind == 'toolCall' then
      local prose, calls = M.split_tool_call(e)
      if #prose > 0 then
        add(out, { headers.model, '' })
        add(out, prose)
        out[#out + 1] = ''
      end
      for _, name in ipairs(calls) do
        add(out, { '⚙ ' .. name, '' })
      end
    elseif e.kind == 'info' or e.kind == 'error' then
      add(out, { '_' .. (lines_of(e.text)[1] or '') .. '_', '' })
    end
  end
  return out
end

--- Show a transcript in a scratch buffer (split).
function M.show(t)
  local name = 'sidecar://transcript/' .. tostring(t.sessionId or 'current')
  local existing = vim.fn.bufnr(name)
  local buf
  if existing > 0 and vim.api.nvim_buf_is_valid(existing) then
    buf = existing
  else
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].filetype = 'markdown'
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.full_lines(t))
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  local win
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      win = w
    end
  end
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd('split')
    vim.api.nvim_win_set_buf(0, buf)
  end
  return buf
end

return M
