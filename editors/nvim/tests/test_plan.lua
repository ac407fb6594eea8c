-- The model's todo list against the real sidecar: a write_todos call (scripted in the fake Gemini) reaches the state
-- through sidecar/todosChanged and is drawn as the chat buffer's plan block above the input line, updated when the
-- model sets it again; :SidecarPlan shows it in a scratch buffer; :SidecarPlan clear clears it everywhere.
local T = require('sidecar_test')

local FIRST = {
  { description = 'PLAN-ONE read the parser', status = 'in_progress' },
  { description = 'PLAN-TWO fix the bug', status = 'pending' },
}
local SECOND = {
  { description = 'PLAN-ONE read the parser', status = 'completed' },
  { description = 'PLAN-TWO fix the bug', status = 'in_progress' },
  { description = 'PLAN-THREE old idea', status = 'cancelled' },
}

local function run(args)
  local answer
  require('sidecar.plan').run(args, function(err, result)
    answer = { err = err, result = result }
  end)
  T.wait(function()
    return answer ~= nil
  end, 15000, 'the answer to :SidecarPlan ' .. args)
  return answer
end

T.run('test_plan', function()
  T.workspace()
  local sidecar = T.start_sidecar({ settings = { tokenLimit = 100000 } })
  local chat = require('sidecar.chat')
  local state = require('sidecar.state')
  sidecar.chat()

  local function turn_with(todos, text)
    T.http('POST', '/_control/script', {
      steps = { { kind = 'function_call', match = 'chat', name = 'write_todos', args = { todos = todos } } },
    })
    local turn = sidecar.send(text)
    T.wait(function()
      return turn.done
    end, 30000, 'the turn "' .. text .. '"')
    T.eq(turn.error, nil, 'the turn succeeded')
  end

  T.step('a write_todos call shows as the plan block above the input line', function()
    T.eq(chat.plan_block(), nil, 'no plan block before the model sets a list')
    turn_with(FIRST, 'plan the work')
    T.wait(function()
      return #state.todos == 2 and chat.plan_block() ~= nil
    end, 15000, 'the list in the state and the block drawn')
    local block = chat.plan_block()
    local buf = chat.bufnr()
    T.eq(block.row, vim.api.nvim_buf_line_count(buf) - 1, 'drawn above the input line')
    T.eq(block.lines, {
      'Plan (0/2 done)',
      '  [>] 1. PLAN-ONE read the parser (in progress)',
      '  [ ] 2. PLAN-TWO fix the bug (pending)',
    }, 'the head and one line per item')
    T.ok(not chat.text():find('PLAN-ONE', 1, true), 'virtual lines: not text of the buffer')
  end)

  T.step('the block follows the next list and stays above the input line', function()
    turn_with(SECOND, 'go on')
    T.wait(function()
      local block = chat.plan_block()
      return block and block.lines[1] == 'Plan (1/3 done)'
    end, 15000, 'the block updated')
    local block = chat.plan_block()
    T.eq(block.row, vim.api.nvim_buf_line_count(chat.bufnr()) - 1, 'still above the input line')
    T.eq(block.lines[4], '  [-] 3. PLAN-THREE old idea (cancelled)', 'a cancelled item')
  end)

  T.step(':SidecarPlan shows the list in a scratch buffer', function()
    local answer = run('')
    T.eq(answer.err, nil, 'no error')
    local buf = vim.fn.bufnr(require('sidecar.plan').BUFNAME)
    T.ok(buf > 0 and vim.api.nvim_get_current_buf() == buf, 'the plan buffer in the current window')
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    T.eq(lines[1], 'Plan (1/3 done)', 'the head')
    T.eq(lines[3], '  [>] 2. PLAN-TWO fix the bug (in progress)', 'the item in progress')
    T.eq(vim.bo[buf].modifiable, false, 'read-only')
  end)

  T.step(':SidecarPlan clear clears the list, the block and the open buffer', function()
    local answer = run('clear')
    T.eq(answer.err, nil, 'no error')
    T.eq(answer.result.cleared, 3, 'three items cleared')
    T.wait(function()
      return chat.plan_block() == nil and #state.todos == 0
    end, 15000, 'the block gone')
    local buf = vim.fn.bufnr(require('sidecar.plan').BUFNAME)
    T.eq(
      vim.api.nvim_buf_get_lines(buf, 0, -1, false),
      { 'The agent has no todo list in this session.' },
      'the open plan buffer follows'
    )
    T.eq(run('').result.items, {}, 'the server has no list any more')
  end)
end)
