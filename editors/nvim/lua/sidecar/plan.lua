-- The model's todo list (it sets it with write_todos): kept from sidecar/todosChanged, drawn as the plan block of the
-- chat buffer (above the input line, updated live), and :SidecarPlan [clear] — a scratch buffer listing it, or
-- sidecar/clearTodos.
local client = require('sidecar.client')
local protocol = require('sidecar.protocol')
local state = require('sidecar.state')

local M = {}

M.BUFNAME = 'sidecar://plan'

local MARK = { pending = '[ ]', in_progress = '[>]', completed = '[x]', cancelled = '[-]' }
local LABEL = { pending = 'pending', in_progress = 'in progress', completed = 'done', cancelled = 'cancelled' }

--- The plan's lines: a head ("Plan (1/3 done)") and one line per item with its state; {} for no list.
---@param items sidecar.TodoItem[]|nil
---@return string[]
function M.lines(items)
  items = type(items) == 'table' and items or {}
  if #items == 0 then
    return {}
  end
  local done = 0
  for _, item in ipairs(items) do
    if item.status == 'completed' then
      done = done + 1
    end
  end
  local out = { string.format('Plan (%d/%d done)', done, #items) }
  for i, item in ipairs(items) do
    local status = tostring(item.status)
    out[#out + 1] =
      string.format('  %s %d. %s (%s)', MARK[status] or '[?]', i, tostring(item.description), LABEL[status] or status)
  end
  return out
end

local function plan_buf()
  local b = vim.fn.bufnr(M.BUFNAME)
  if b > 0 and vim.api.nvim_buf_is_valid(b) then
    return b
  end
end

local function fill(buf, items)
  local lines = M.lines(items)
  if #lines == 0 then
    lines = { 'The agent has no todo list in this session.' }
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- The whole list from the server (sidecar/todosChanged, or sidecar/getTodos's answer): kept, drawn in the chat, and
--- an open plan buffer follows.
---@param items sidecar.TodoItem[]|nil
function M.accept(items)
  state.todos = type(items) == 'table' and items or {}
  vim.schedule(function()
    require('sidecar.chat').set_plan(M.lines(state.todos))
    local buf = plan_buf()
    if buf then
      fill(buf, state.todos)
    end
  end)
end

--- Show the list in the plan scratch buffer (one buffer, reused; a split unless a window already shows it).
function M.show_buffer(items)
  local buf = plan_buf()
  if not buf then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, M.BUFNAME)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].filetype = 'markdown'
  end
  fill(buf, items)
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      vim.api.nvim_set_current_win(w)
      return buf
    end
  end
  vim.cmd('split')
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

local function tell(msg, level)
  require('sidecar.ui').tell(msg, level)
end

--- :SidecarPlan [show|clear]. cb(err, result) once answered (tests wait on it).
function M.run(args, cb)
  require('sidecar.lifecycle').ensure()
  local function finish(err, result)
    if cb then
      cb(err, result)
    end
  end
  local word = vim.trim(args or '')
  if word == '' or word == 'show' then
    client.request(protocol.method.getTodos, vim.empty_dict(), function(err, result)
      if err then
        tell('plan: ' .. tostring(err.message or vim.inspect(err)), vim.log.levels.ERROR)
      else
        M.accept(result.items)
        M.show_buffer(result.items)
      end
      finish(err, result)
    end)
  elseif word == 'clear' then
    client.request(protocol.method.clearTodos, vim.empty_dict(), function(err, result)
      if err then
        tell('plan clear: ' .. tostring(err.message or vim.inspect(err)), vim.log.levels.ERROR)
      else
        M.accept({})
        tell(
          result.cleared > 0 and ('cleared the plan (' .. result.cleared .. ' items)') or 'the plan is already empty'
        )
      end
      finish(err, result)
    end)
  else
    tell('unknown :SidecarPlan ' .. word .. ' (show or clear)', vim.log.levels.ERROR)
    finish({ message = 'unknown subcommand ' .. word }, nil)
  end
end

return M
