-- Statusline text from sidecar/tokenUsage: `✦ 45% 471K/1M`, with highlight groups.
local state = require('sidecar.state')
local protocol = require('sidecar.protocol')

local M = {}

M.groups = {
  normal = 'SidecarStatus',
  warn = 'SidecarStatusWarn', -- percentUsed >= compressionThreshold
  critical = 'SidecarStatusCritical', -- percentUsed >= 95
}

M.CRITICAL_PERCENT = 95
--- TokenUsage.backend when no backend is configured and the embedded fake answers.
M.FAKE_BACKEND = 'embedded fake Gemini'

--- Where requests go, as the server names it ('Gemini API', 'Vertex AI (project, location)', ...), or nil.
function M.backend()
  local usage = state.usage
  if usage and type(usage.backend) == 'string' and usage.backend ~= '' then
    return usage.backend
  end
  return nil
end

function M.define_highlights()
  local set = vim.api.nvim_set_hl
  set(0, M.groups.normal, { link = 'StatusLine', default = true })
  set(0, M.groups.warn, { link = 'WarningMsg', default = true })
  set(0, M.groups.critical, { link = 'ErrorMsg', default = true })
end

local function trim_zero(s)
  return (s:gsub('%.0$', ''))
end

--- Human token count: 38, 999, 1.2K, 12K, 471K, 1M, 1.5M.
function M.format_count(n)
  n = tonumber(n) or 0
  if n < 1000 then
    return tostring(math.floor(n + 0.5))
  end
  local units = { { 1e9, 'G' }, { 1e6, 'M' }, { 1e3, 'K' } }
  for i, u in ipairs(units) do
    local scale, suffix = u[1], u[2]
    if n >= scale then
      local v = n / scale
      local s
      if v < 10 then
        s = trim_zero(string.format('%.1f', math.floor(v * 10 + 0.5) / 10))
      else
        s = string.format('%d', math.floor(v + 0.5))
      end
      -- 999.6K rounds to 1000K: promote to the next unit.
      if s == '1000' and i > 1 then
        return '1' .. units[i - 1][2]
      end
      return s .. suffix
    end
  end
  return tostring(n)
end

function M.format_percent(p)
  p = tonumber(p) or 0
  return string.format('%d%%', math.floor(p + 0.5))
end

--- Highlight group for a TokenUsage.
function M.group(usage)
  if not usage then
    return M.groups.normal
  end
  local pct = tonumber(usage.percentUsed) or 0
  local threshold = tonumber(usage.compressionThreshold)
  if pct >= M.CRITICAL_PERCENT then
    return M.groups.critical
  end
  if threshold and pct >= threshold * 100 then
    return M.groups.warn
  end
  return M.groups.normal
end

local function active_progress(title)
  for _, p in pairs(state.progress) do
    if not p.done and (title == nil or p.title == title) then
      return p
    end
  end
  return nil
end

--- The statusline text. opts.highlight: wrap in %#Group#…%* (implies escape); opts.escape: double
--- `%` for statusline-format contexts (lualine, %{%…%}).
function M.text(opts)
  opts = opts or {}
  local cfg = state.cfg and state.cfg.statusline or {}
  local icon = cfg.icon or '✦'
  local usage = state.usage
  local parts = {}
  local installing = package.loaded['sidecar.install'] and require('sidecar.install').install_status() or ''
  if installing ~= '' then
    parts[#parts + 1] = icon .. ' ' .. installing:gsub('^sidecar ', '') -- :SidecarInstall's progress
  elseif usage then
    parts[#parts + 1] = string.format(
      '%s %s %s/%s',
      icon,
      M.format_percent(usage.percentUsed),
      M.format_count(usage.promptTokenCount),
      M.format_count(usage.tokenLimit)
    )
  elseif state.status == 'starting' or state.status == 'restarting' then
    parts[#parts + 1] = icon .. ' …'
  elseif state.status == 'failed' then
    parts[#parts + 1] = icon .. ' off'
  else
    return ''
  end
  if usage and usage.backend == M.FAKE_BACKEND then
    parts[#parts + 1] = cfg.fake or '(fake)'
  end
  if active_progress(protocol.progress.compress) then
    parts[#parts + 1] = cfg.compressing or 'compressing…'
  elseif usage and usage.summaryPreparation == 'preparing' then
    parts[#parts + 1] = cfg.preparing or 'preparing summary'
  elseif usage and usage.summaryPreparation == 'ready' then
    parts[#parts + 1] = cfg.ready or 'summary ready'
  end
  if usage and type(usage.autoCompactionPausedUntil) == 'number' then
    parts[#parts + 1] = cfg.paused or 'auto-compact paused'
  end
  if usage and usage.compactsAtNextMessage == true then
    parts[#parts + 1] = cfg.compacts_next or 'compacts at next message'
  end
  for i = #parts, 1, -1 do
    if parts[i] == '' then
      table.remove(parts, i)
    end
  end
  local text = table.concat(parts, ' ')
  if opts.highlight or opts.escape then
    text = text:gsub('%%', '%%%%')
  end
  if opts.highlight then
    text = '%#' .. M.group(usage) .. '#' .. text .. '%*'
  end
  return text
end

local pending = false
--- Redraw statuslines (coalesced) and tell listeners (User SidecarStatus).
--- Take a usage (pushed, or in an answer) unless a newer one from this server process was seen: `seq` grows
--- with every change of state, so a late, older one is dropped. Returns whether it was taken.
function M.accept(usage)
  if type(usage) ~= 'table' then
    return false
  end
  local seq = tonumber(usage.seq)
  if seq and state.usage_seq and seq <= state.usage_seq then
    return false
  end
  state.usage = usage
  state.usage_seq = seq
  M.changed()
  return true
end

function M.changed()
  if pending then
    return
  end
  pending = true
  vim.schedule(function()
    pending = false
    pcall(vim.cmd, 'redrawstatus!')
    require('sidecar.compat').exec_user_autocmd('SidecarStatus', { usage = state.usage })
  end)
end

return M
