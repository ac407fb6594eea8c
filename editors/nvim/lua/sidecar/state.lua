-- Shared, plain-data state of the plugin (one sidecar per Neovim instance).
return {
  cfg = nil, -- resolved options (sidecar.config)
  root = nil, -- workspace root the sidecar runs for
  cmd = nil, -- server command in use
  client_id = nil,
  start_method = nil, -- 'vim.lsp.start' | 'vim.lsp.start_client'
  server_info = nil, -- initialize result serverInfo {name, version}
  usage = nil, -- last sidecar/tokenUsage (TokenUsage)
  usage_seq = nil, -- its seq (reset when a new server process starts)
  session_id = nil, -- last sessionId seen in sidecar/tokenUsage (resumed after a crash)
  progress = {}, -- token -> {title, message, percentage, done}
  last_compressed = nil, -- last sidecar/compressed params, plus `at` (ms)
  restarts = {}, -- times (ms) of automatic restarts
  mcp_servers = {}, -- last sidecar/mcpStatus servers: {name, status, tools, error?}
  mcp_prompts = {}, -- the ready MCP servers' prompts (sidecar/listMcpPrompts), for completion
  context_breakdown = nil, -- last sidecar/getContextBreakdown answer (ContextBreakdown), for require('sidecar').context()
  todos = {}, -- the model's todo list, from the last sidecar/todosChanged (TodoItem: description, status)
  memory = nil, -- last sidecar/memoryChanged (MemoryInfo: files, text, tokens, skippedProjectFiles, skippedReason?)
  turns_in_flight = 0, -- sendMessage requests not answered yet
  status = 'stopped', -- 'stopped' | 'starting' | 'running' | 'restarting' | 'failed'
  exiting = false,
}
