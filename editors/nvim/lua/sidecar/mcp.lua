-- :SidecarMcp — the MCP servers the sidecar runs (status, tools, why one failed), `restart|disable|enable NAME`,
-- and `prompt NAME [ARGS]`: a server's prompt expanded and sent as your message.
local client = require('sidecar.client')
local protocol = require('sidecar.protocol')

local M = {}

--- The lines describing servers ({name, status, tools, error?}), one server a line plus its error.
function M.lines(servers)
  if type(servers) ~= 'table' or #servers == 0 then
    return { 'MCP: no servers configured (settings.mcpServers)' }
  end
  local lines = {}
  for _, s in ipairs(servers) do
    local tools = type(s.tools) == 'table' and s.tools or {}
    local line =
      string.format('%s: %s, %d tool%s', tostring(s.name), tostring(s.status), #tools, #tools == 1 and '' or 's')
    if #tools > 0 then
      line = line .. ' (' .. table.concat(tools, ', ') .. ')'
    end
    lines[#lines + 1] = line
    if type(s.error) == 'string' and s.error ~= '' then
      lines[#lines + 1] = '  error: ' .. s.error
    end
  end
  return lines
end

--- Counts per status, e.g. 'MCP: 2 ready, 1 failed' (nil when there are no servers).
function M.summary(servers)
  if type(servers) ~= 'table' or #servers == 0 then
    return nil
  end
  local counts, order = {}, { 'ready', 'starting', 'failed', 'disabled' }
  for _, s in ipairs(servers) do
    counts[s.status] = (counts[s.status] or 0) + 1
  end
  local parts = {}
  for _, k in ipairs(order) do
    if counts[k] then
      parts[#parts + 1] = counts[k] .. ' ' .. k
    end
  end
  return 'MCP: ' .. table.concat(parts, ', ')
end

local function tell(msg, level)
  require('sidecar.ui').tell(msg, level)
end

local function err_text(err)
  return tostring(type(err) == 'table' and err.message or vim.inspect(err))
end

--- One line per prompt: 'review (rev): code [focus] — Ask for a review.'
function M.prompt_lines(prompts)
  if type(prompts) ~= 'table' or #prompts == 0 then
    return { 'MCP: no ready server offers prompts' }
  end
  local lines = {}
  for _, p in ipairs(prompts) do
    local args = {}
    for _, a in ipairs(p.arguments or {}) do
      args[#args + 1] = a.required and a.name or ('[' .. a.name .. ']')
    end
    local line = string.format('%s (%s)', tostring(p.name), tostring(p.server))
    if #args > 0 then
      line = line .. ': ' .. table.concat(args, ' ')
    end
    if type(p.description) == 'string' and p.description ~= '' then
      line = line .. ' — ' .. p.description
    end
    lines[#lines + 1] = line
  end
  return lines
end

--- Ask for the ready servers' prompts and keep them for completion (after each sidecar/mcpStatus).
function M.refresh_prompts(cb)
  client.request(protocol.method.listMcpPrompts, vim.empty_dict(), function(err, result)
    if not err then
      require('sidecar.state').mcp_prompts = type(result) == 'table' and result or {}
    end
    if cb then
      cb(err, result)
    end
  end)
end

local ACTIONS = {
  restart = { method = 'restartMcpServer', field = 'restarted', done = 'restarted' },
  disable = {
    method = 'setMcpServerEnabled',
    enabled = false,
    field = 'applied',
    done = 'disabled (its process is stopped, its tools are not offered) until :SidecarMcp enable',
  },
  enable = { method = 'setMcpServerEnabled', enabled = true, field = 'applied', done = 'enabled' },
}

--- :SidecarMcp restart|disable|enable NAME.
local function server_action(verb, name, finish)
  local action = ACTIONS[verb]
  if not name then
    tell(':SidecarMcp ' .. verb .. ' needs a server name', vim.log.levels.ERROR)
    return finish({ message = 'no name' })
  end
  local params = { name = name }
  if action.enabled ~= nil then
    params.enabled = action.enabled
  end
  client.request(protocol.method[action.method], params, function(err, result)
    if err then
      tell('MCP server ' .. name .. ': ' .. verb .. ' failed: ' .. err_text(err), vim.log.levels.ERROR)
    elseif type(result) == 'table' and result[action.field] == false then
      local why = verb == 'restart' and ' (or it is disabled)' or ''
      tell('there is no MCP server named ' .. name .. why, vim.log.levels.WARN)
    else
      tell('MCP server ' .. name .. ' ' .. action.done)
    end
    finish(err, result)
  end)
end

--- :SidecarMcp prompt [NAME [ARGS]]: without a name, note the prompts; with one, expand it and send the text.
local function prompt(rest, finish)
  local name, args = rest:match('^(%S+)%s*(.*)$')
  if not name then
    return M.refresh_prompts(function(err, result)
      if err then
        tell('MCP prompts: ' .. err_text(err), vim.log.levels.ERROR)
      else
        require('sidecar.chat').note(table.concat(M.prompt_lines(result), '\n'))
        tell(string.format('MCP: %d prompt%s', #result, #result == 1 and '' or 's'))
      end
      finish(err, result)
    end)
  end
  client.request(protocol.method.getMcpPrompt, { name = name, text = args }, function(err, result)
    if err then
      tell('MCP prompt ' .. name .. ': ' .. err_text(err), vim.log.levels.ERROR)
    elseif type(result) == 'table' and type(result.error) == 'string' then
      tell('MCP prompt ' .. name .. ': ' .. result.error, vim.log.levels.ERROR)
    elseif type(result) == 'table' and type(result.text) == 'string' then
      require('sidecar.turn').send(result.text)
    end
    finish(err, result)
  end)
end

--- :SidecarMcp [restart|disable|enable NAME | prompt [NAME [ARGS]]]. cb(err, result) once answered (tests wait on it).
function M.run(args, cb)
  require('sidecar.lifecycle').ensure()
  local line = vim.trim(args or '')
  local words = vim.split(line, '%s+', { trimempty = true })
  local function finish(err, result)
    if cb then
      cb(err, result)
    end
  end
  if ACTIONS[words[1] or ''] then
    return server_action(words[1], words[2], finish)
  elseif words[1] == 'prompt' then
    return prompt(vim.trim(line:sub(#'prompt' + 1)), finish)
  elseif words[1] ~= nil then
    tell(
      ':SidecarMcp takes nothing, "restart|disable|enable NAME" or "prompt [NAME ARGS]", not ' .. words[1],
      vim.log.levels.ERROR
    )
    return finish({ message = 'bad argument' })
  end
  client.request(protocol.method.listMcpServers, vim.empty_dict(), function(err, result)
    if err then
      tell('MCP servers: ' .. err_text(err), vim.log.levels.ERROR)
    else
      require('sidecar.state').mcp_servers = result or {}
      require('sidecar.chat').note(table.concat(M.lines(result), '\n'))
      tell(M.summary(result) or 'MCP: no servers configured')
    end
    finish(err, result)
  end)
end

local function starting_with(list, arglead)
  local out = {}
  for _, v in ipairs(list) do
    if tostring(v):sub(1, #arglead) == arglead then
      out[#out + 1] = v
    end
  end
  return out
end

--- Completion: the subcommand, then server names (enable: the disabled ones; disable: the others), prompt names
--- and then a prompt's `--argument=`s (from the last lists the server sent).
function M.complete(arglead, cmdline)
  local state = require('sidecar.state')
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  local typed = #words - (arglead ~= '' and 1 or 0) -- words complete before the one being typed
  if typed <= 1 then
    return starting_with({ 'restart', 'disable', 'enable', 'prompt' }, arglead)
  end
  local sub = words[2]
  if ACTIONS[sub] and typed == 2 then
    local names = {}
    for _, s in ipairs(state.mcp_servers or {}) do
      local disabled = s.status == 'disabled'
      if sub == 'restart' and not disabled or sub == 'disable' and not disabled or sub == 'enable' and disabled then
        names[#names + 1] = s.name
      end
    end
    return starting_with(names, arglead)
  elseif sub == 'prompt' then
    local prompts = state.mcp_prompts or {}
    if typed == 2 then
      local names = {}
      for _, p in ipairs(prompts) do
        names[#names + 1] = p.name
      end
      return starting_with(names, arglead)
    end
    for _, p in ipairs(prompts) do
      if p.name == words[3] then
        local args = {}
        for _, a in ipairs(p.arguments or {}) do
          args[#args + 1] = '--' .. a.name .. '='
        end
        return starting_with(args, arglead)
      end
    end
  end
  return {}
end

return M
