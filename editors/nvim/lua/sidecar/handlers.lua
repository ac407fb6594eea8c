-- What the sidecar sends to the editor: notifications and server-to-client requests, by method, each handed to the
-- feature that shows it. The client is given this table by init.lua (the composition root), so that the transport
-- does not reach up into the features.
local protocol = require('sidecar.protocol')
local state = require('sidecar.state')
local status = require('sidecar.status')

---@param usage sidecar.TokenUsage
local function on_token_usage(_, usage)
  if not status.accept(usage) then
    return
  end
  -- While a restart resumes the old session, the fresh server's own session is not "ours" (if it
  -- crashed again now, the old session is the one to resume).
  if usage.sessionId and not state.resuming then
    state.session_id = usage.sessionId
  end
  status.changed()
end

local function on_progress(err, params, ctx, cfg)
  -- Keep Neovim's own progress tracking (LspProgress / LspProgressUpdate, fidget.nvim, ...).
  local default = vim.lsp.handlers['$/progress']
  if default and ctx and vim.lsp.get_client_by_id(ctx.client_id) then
    pcall(default, err, params, ctx, cfg)
  end
  if type(params) ~= 'table' or type(params.value) ~= 'table' then
    return
  end
  local token, value = tostring(params.token), params.value
  local p = state.progress[token]
  if value.kind == 'begin' then
    p = { title = value.title, message = value.message, percentage = value.percentage, done = false }
    state.progress[token] = p
  elseif p then
    p.message = value.message or p.message
    p.percentage = value.percentage or p.percentage
    if value.kind == 'end' then
      p.done = true
      state.progress[token] = nil
    end
  end
  if p then
    require('sidecar.ui').on_progress(p, value.kind)
  end
  status.changed()
end

return {
  [protocol.method.tokenUsage] = on_token_usage,
  ---@param params sidecar.MessageDeltaParams
  [protocol.method.messageDelta] = function(_, params)
    require('sidecar.chat').on_delta(params)
  end,
  ---@param params sidecar.ToolCallParams
  [protocol.method.toolCall] = function(_, params)
    require('sidecar.chat').on_tool_call(params)
  end,
  ---@param params sidecar.RetryParams
  [protocol.method.retry] = function(_, params)
    require('sidecar.chat').on_retry(params)
  end,
  -- Old tool outputs masked before a request: said once, in the chat.
  ---@param params sidecar.ToolOutputsMaskedParams
  [protocol.method.toolOutputsMasked] = function(_, params)
    if type(params) == 'table' and type(params.message) == 'string' then
      require('sidecar.chat').note(params.message)
    end
  end,
  ---@param params sidecar.CompressedParams
  [protocol.method.compressed] = function(_, params)
    require('sidecar.ui').on_compressed(params)
  end,
  -- MCP servers' statuses, kept for whoever shows them (a failing server is also told in words by the server).
  ---@param params sidecar.McpStatusParams
  [protocol.method.mcpStatus] = function(_, params)
    state.mcp_servers = type(params) == 'table' and params.servers or {}
    vim.schedule(function()
      require('sidecar.mcp').refresh_prompts() -- for :SidecarMcp prompt's completion
    end)
  end,
  -- The context files loaded: :SidecarStatus, :checkhealth, an open memory buffer, the skipped notice.
  ---@param params sidecar.MemoryInfo
  [protocol.method.memoryChanged] = function(_, params)
    require('sidecar.memory').accept(params)
  end,
  -- The model's todo list: the chat's plan block and :SidecarPlan.
  ---@param params sidecar.TodosChangedParams
  [protocol.method.todosChanged] = function(_, params)
    require('sidecar.plan').accept(type(params) == 'table' and params.items or {})
  end,
  ---@param params sidecar.ConfirmToolCallParams
  [protocol.method.confirmToolCall] = function(err, params, ctx)
    return require('sidecar.confirm').handle(err, params, ctx)
  end,
  ['$/progress'] = on_progress,
  -- Neovim's default shows a long text as a multi-line message that waits behind a Press-ENTER prompt.
  ['window/showMessage'] = function(_, params)
    if type(params) == 'table' and type(params.message) == 'string' then
      local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
      require('sidecar.ui').tell(params.message:gsub('^Sidecar: ', ''), levels[params.type] or vim.log.levels.INFO)
    end
    return vim.NIL
  end,
  ['workspace/applyEdit'] = function(err, params, ctx, cfg)
    return require('sidecar.edits').handler(err, params, ctx, cfg)
  end,
}
