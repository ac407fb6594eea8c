-- :SidecarMcp — the MCP servers the sidecar runs (status, tools, why one failed) and `:SidecarMcp restart NAME`.
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
    local line = string.format('%s: %s, %d tool%s', tostring(s.name), tostring(s.status), #tools, #tools == 1 and '' or 's')
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

--- :SidecarMcp [restart NAME]. cb(err, result) once answered (tests wait on it).
function M.run(args, cb)
  require('sidecar').ensure()
  local words = vim.split(vim.trim(args or ''), '%s+', { trimempty = true })
  local function finish(err, result)
    if cb then
      cb(err, result)
    end
  end
  if words[1] == 'restart' then
    local name = words[2]
    if not name then
      tell('sidecar: :SidecarMcp restart needs a server name', vim.log.levels.ERROR)
      return finish({ message = 'no name' })
    end
    client.request(protocol.method.restartMcpServer, { name = name }, function(err, result)
      if err then
        tell('sidecar: restart ' .. name .. ': ' .. tostring(err.message or vim.inspect(err)), vim.log.levels.ERROR)
      elseif type(result) == 'table' and result.restarted == false then
        tell('sidecar: there is no MCP server named ' .. name, vim.log.levels.WARN)
      else
        tell('sidecar: MCP server ' .. name .. ' restarted')
      end
      finish(err, result)
    end)
    return
  elseif words[1] ~= nil then
    tell('sidecar: :SidecarMcp takes nothing or "restart NAME", not ' .. words[1], vim.log.levels.ERROR)
    return finish({ message = 'bad argument' })
  end
  client.request(protocol.method.listMcpServers, vim.empty_dict(), function(err, result)
    if err then
      tell('sidecar: MCP servers: ' .. tostring(err.message or vim.inspect(err)), vim.log.levels.ERROR)
    else
      require('sidecar.state').mcp_servers = result or {}
      require('sidecar.chat').note(table.concat(M.lines(result), '\n'))
      tell(M.summary(result) or 'MCP: no servers configured')
    end
    finish(err, result)
  end)
end

--- Completion: "restart" then the known server names.
function M.complete(arglead, cmdline)
  if cmdline:match('restart%s') then
    local names = {}
    for _, s in ipairs(require('sidecar.state').mcp_servers or {}) do
      if tostring(s.name):sub(1, #arglead) == arglead then
        names[#names + 1] = s.name
      end
    end
    return names
  end
  return { 'restart' }
end

return M
