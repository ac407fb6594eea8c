-- sidecar/confirmToolCall: ask the user with vim.ui.select and answer {decision}.
local state = require('sidecar.state')

local M = {}

M.choices = {
  { label = 'Allow', decision = 'allow' },
  { label = 'Allow always', decision = 'allowAlways' },
  { label = 'Deny', decision = 'deny' },
}

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
  return { M.choices[1], M.choices[2],
    { label = 'Allow always for this server (' .. params.mcpServer .. ')', decision = 'allowAlwaysServer' },
    M.choices[3] }
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

local function show_details(params)
  local chat = require('sidecar.chat')
  local lines = { M.prompt(params) }
  if params.diff and params.diff ~= '' then
    lines[#lines + 1] = '```diff'
    vim.list_extend(lines, vim.split(params.diff, '\n', { plain = true }))
    lines[#lines + 1] = '```'
  end
  chat.note(table.concat(lines, '\n'))
end

--- Ask with vim.ui.select. On 0.11 the server request runs in a coroutine, so an asynchronous
--- vim.ui.select (telescope, dressing, fzf-lua...) can answer later; on older versions the answer
--- must come synchronously (the default select does) or within confirm_timeout_ms.
function M.ask(params)
  local co = coroutine.running()
  local done, choice, waiting = false, nil, false
  local function on_choice(item)
    if done then
      return
    end
    done, choice = true, item
    if waiting then
      local ok, err = coroutine.resume(co)
      if not ok then
        vim.schedule(function()
          vim.notify('sidecar: confirmToolCall: ' .. tostring(err), vim.log.levels.ERROR)
        end)
      end
    end
  end
  local ok, err = pcall(vim.ui.select, M.choices_for(params), {
    prompt = M.prompt(params),
    kind = 'sidecar.confirmToolCall',
    format_item = function(item)
      return item.label
    end,
  }, on_choice)
  if not ok then
    vim.notify('sidecar: vim.ui.select failed: ' .. tostring(err), vim.log.levels.ERROR)
    return nil
  end
  if not done then
    if co then
      waiting = true
      coroutine.yield()
    else
      local timeout = (state.cfg and state.cfg.confirm_timeout_ms) or 120000
      vim.wait(timeout, function()
        return done
      end, 20)
    end
  end
  return choice
end

--- Handler for the server request: returns the result table.
function M.handle(_, params)
  params = type(params) == 'table' and params or {}
  pcall(show_details, params)
  local close = require('sidecar.confirm_view').open(params, M.prompt(params)) -- the diff stays in sight
  local choice = M.ask(params)
  close()
  local decision = (type(choice) == 'table' and choice.decision) or 'deny'
  pcall(require('sidecar.chat').note, string.format('tool %s: %s', tostring(params.toolName or '?'), decision))
  return { decision = decision }
end

return M
