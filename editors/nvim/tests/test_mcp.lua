-- MCP servers against the real sidecar and two real MCP servers (tests/mcp_client/server.py, written with the mcp
-- SDK): :SidecarMcp lists them with status and tools, :SidecarMcp restart NAME, :checkhealth sidecar's MCP section.
local T = require('sidecar_test')

local function health_text()
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd('checkhealth sidecar')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  if #vim.api.nvim_list_tabpages() > tabs then
    vim.cmd('tabclose')
  else
    vim.cmd('bwipeout!')
  end
  return text
end

local function by_name(servers, name)
  for _, s in ipairs(servers or {}) do
    if s.name == name then
      return s
    end
  end
end

T.run('test_mcp', function()
  T.workspace({})
  local python = T.env('SIDECAR_TEST_PYTHON')
  local repo = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h:h')
  local server_py = repo .. '/tests/mcp_client/server.py'
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local sidecar = T.start_sidecar({
    settings = {
      mcpServers = {
        calc = { command = python, args = { server_py, 'basic', dir } },
        broken = { command = python, args = { server_py, 'dies' } },
      },
    },
  })
  local state = require('sidecar.state')

  T.step('sidecar/mcpStatus reaches the state: one ready, one failed', function()
    T.wait(function()
      local calc, broken = by_name(state.mcp_servers, 'calc'), by_name(state.mcp_servers, 'broken')
      return calc and calc.status == 'ready' and broken and broken.status == 'failed'
    end, 30000, 'calc ready and broken failed')
  end)

  T.step(':SidecarMcp lists the servers with status and tools', function()
    local answer
    require('sidecar.mcp').run('', function(err, result)
      answer = { err = err, result = result }
    end)
    T.wait(function()
      return answer ~= nil
    end, 10000, 'the sidecar/listMcpServers answer')
    T.eq(answer.err, nil, 'no error')
    local lines = table.concat(require('sidecar.mcp').lines(answer.result), '\n')
    T.log('%s', lines)
    T.contains(lines, 'calc: ready', 'the ready server')
    T.contains(lines, 'mcp_calc_add', 'its tools')
    T.contains(lines, 'broken: failed', 'the failed server')
    T.contains(lines, 'cannot open the database', 'its stderr in the error')
    T.eq(require('sidecar.mcp').summary(answer.result), 'MCP: 1 ready, 1 failed', 'the counts')
    T.ok(vim.api.nvim_get_commands({}).SidecarMcp ~= nil, 'the :SidecarMcp command exists')
  end)

  T.step(':checkhealth sidecar has the MCP section', function()
    local text = health_text()
    T.contains(text, 'MCP: 1 ready, 1 failed', 'the counts')
    T.contains(text, 'MCP server calc: ready', 'a ready server')
    T.contains(text, 'MCP server broken: failed', 'the failed one')
    T.contains(text, ':SidecarMcp restart broken', 'the way to restart it')
  end)

  T.step(':SidecarMcp restart NAME restarts it (and an unknown name is told)', function()
    local pids = #vim.fn.glob(dir .. '/pid-*', false, true)
    local answer
    require('sidecar.mcp').run('restart calc', function(err, result)
      answer = { err = err, result = result }
    end)
    T.wait(function()
      return answer ~= nil
    end, 10000, 'the sidecar/restartMcpServer answer')
    T.eq(answer.result, { restarted = true }, 'restarted')
    T.wait(function()
      return #vim.fn.glob(dir .. '/pid-*', false, true) > pids
    end, 30000, 'a new calc process')
    T.wait(function()
      local calc = by_name(state.mcp_servers, 'calc')
      return calc and calc.status == 'ready'
    end, 30000, 'calc ready again')
    answer = nil
    require('sidecar.mcp').run('restart nosuch', function(err, result)
      answer = { err = err, result = result }
    end)
    T.wait(function()
      return answer ~= nil
    end, 10000, 'the answer for an unknown name')
    T.eq(answer.result, { restarted = false }, 'nothing restarted')
  end)

  T.step(':SidecarMcp disable NAME stops it (status disabled, no tools); enable starts it again', function()
    local answer
    require('sidecar.mcp').run('disable calc', function(err, result)
      answer = { err = err, result = result }
    end)
    T.wait(function()
      return answer ~= nil
    end, 10000, 'the sidecar/setMcpServerEnabled answer')
    T.eq(answer.result, { applied = true }, 'disabled')
    T.wait(function()
      local calc = by_name(state.mcp_servers, 'calc')
      return calc and calc.status == 'disabled' and #calc.tools == 0
    end, 30000, 'calc disabled in the status')
    local alive = 0
    for _, f in ipairs(vim.fn.glob(dir .. '/pid-*', false, true)) do
      local pid = tonumber(f:match('pid%-(%d+)$'))
      if
        vim.fn.filereadable('/proc/' .. pid .. '/stat') == 1
        and not vim.fn.readfile('/proc/' .. pid .. '/stat')[1]:match('%) Z ')
      then
        alive = alive + 1
      end
    end
    T.eq(alive, 0, 'no calc process left')
    answer = nil
    require('sidecar.mcp').run('enable calc', function(err, result)
      answer = { err = err, result = result }
    end)
    T.wait(function()
      return answer ~= nil
    end, 10000, 'the answer to enable')
    T.eq(answer.result, { applied = true }, 'enabled')
    T.wait(function()
      local calc = by_name(state.mcp_servers, 'calc')
      return calc and calc.status == 'ready'
    end, 30000, 'calc ready again')
  end)

  T.step(':SidecarMcp prompt NAME ARGS sends the expanded prompt as your message; prompt names complete', function()
    T.wait(function()
      return #(state.mcp_prompts or {}) > 0
    end, 10000, 'the prompts listed after mcpStatus')
    T.eq(require('sidecar.mcp').complete('rev', 'SidecarMcp prompt rev'), { 'review' }, 'the prompt completes')
    local answer
    require('sidecar.mcp').run('prompt review app.py --focus="naming"', function(err, result)
      answer = { err = err, result = result }
    end)
    T.wait(function()
      return answer ~= nil
    end, 10000, 'the sidecar/getMcpPrompt answer')
    T.eq(answer.result, { text = 'Please review app.py focusing on naming' }, 'the expanded text')
    T.wait(function()
      return require('sidecar.chat').text():find('Please review app.py focusing on naming', 1, true) ~= nil
        and (state.turns_in_flight or 0) == 0
    end, 30000, "the prompt sent as the user's message and answered")
    answer = nil
    require('sidecar.mcp').run('prompt review', function(err, result)
      answer = { err = err, result = result }
    end)
    T.wait(function()
      return answer ~= nil
    end, 10000, 'the answer without the required argument')
    T.eq(answer.result, { error = 'Missing required argument: --code' }, 'the missing argument told')
  end)
  sidecar.stop()
end)
