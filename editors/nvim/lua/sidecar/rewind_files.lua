-- :SidecarRewind! (the conversation and the files): what the confirmation lists before files are restored, the
-- choices it offers (keep or overwrite the files changed since the agent's edit), and the note after. Pure: no
-- server, unit-tested.
local pickers = require('sidecar.pickers')

local M = {}

--- How many files a list shows before "… and N more".
M.LIST_MAX = 12

local function n_of(list)
  return type(list) == 'table' and #list or 0
end

--- Any file the agent changed from that message on (to restore, remove, or that cannot be).
function M.touches(plan)
  return type(plan) == 'table'
    and (n_of(plan.restored) + n_of(plan.removed) + n_of(plan.conflicts) + n_of(plan.skipped)) > 0
end

--- A path as the user reads it: relative to `root` (the working directory) when under it, else as given.
function M.short_path(path, root)
  path = tostring(path)
  root = root and tostring(root):gsub('/+$', '') or ''
  if root ~= '' and path:sub(1, #root + 1) == root .. '/' then
    return path:sub(#root + 2)
  end
  return path
end

local function plural(n, one)
  return n .. ' ' .. one .. (n == 1 and '' or 's')
end

local function group(out, title, rows)
  if #rows == 0 then
    return
  end
  if #out > 0 then
    out[#out + 1] = ''
  end
  out[#out + 1] = title
  for i = 1, math.min(#rows, M.LIST_MAX) do
    out[#out + 1] = '  ' .. rows[i]
  end
  if #rows > M.LIST_MAX then
    out[#out + 1] = '  … and ' .. (#rows - M.LIST_MAX) .. ' more'
  end
end

--- The files of a plan (sidecar/previewRewind), grouped, as the lines of the float shown while asking.
function M.lines(plan, root)
  local s = function(p)
    return M.short_path(p, root)
  end
  local problem = function(x)
    return s(x.path) .. ' — ' .. tostring(x.reason)
  end
  local out = {}
  group(out, 'Put back as they were before your message:', vim.tbl_map(s, plan.restored or {}))
  group(out, 'Removed (the agent created them):', vim.tbl_map(s, plan.removed or {}))
  group(
    out,
    "Changed since the agent's edit (kept unless you overwrite them):",
    vim.tbl_map(problem, plan.conflicts or {})
  )
  group(out, 'Cannot be restored:', vim.tbl_map(problem, plan.skipped or {}))
  return out
end

--- The question and its choices ({label, force}; `cancel` marks the one that does nothing).
function M.choices(plan)
  local n = n_of(plan.restored) + n_of(plan.removed)
  if n_of(plan.conflicts) > 0 then
    return plural(n_of(plan.conflicts), 'file') .. " changed since the agent's edit. Rewind and restore the files?",
      {
        { label = 'Restore others, keep conflicting files', force = false },
        { label = 'Overwrite my changes too', force = true },
        { label = 'Cancel', cancel = true },
      }
  end
  local question = n > 0 and ('Rewind the conversation and restore ' .. plural(n, 'file') .. '?')
    or 'Rewind the conversation? No file can be restored.'
  return question,
    {
      { label = n > 0 and 'Rewind and restore' or 'Rewind', force = false },
      { label = 'Cancel', cancel = true },
    }
end

local function names(paths, root)
  local shown = {}
  for i = 1, math.min(#paths, 5) do
    shown[i] = M.short_path(paths[i], root)
  end
  return table.concat(shown, ', ') .. (#paths > 5 and (' and ' .. (#paths - 5) .. ' more') or '')
end

--- What a rewind with files did, one sentence per kind ('' for nothing).
function M.done(result, root)
  local out = {}
  if n_of(result.restored) > 0 then
    out[#out + 1] = 'restored ' .. names(result.restored, root)
  end
  if n_of(result.removed) > 0 then
    out[#out + 1] = 'removed '
      .. names(result.removed, root)
      .. ' (the agent had created '
      .. (#result.removed == 1 and 'it' or 'them')
      .. ')'
  end
  if n_of(result.conflicts) > 0 then
    local paths = vim.tbl_map(function(c)
      return c.path
    end, result.conflicts)
    out[#out + 1] = 'kept ' .. names(paths, root) .. " (changed since the agent's edit)"
  end
  if n_of(result.skipped) > 0 then
    local rows = {}
    for i = 1, math.min(#result.skipped, 5) do
      local x = result.skipped[i]
      rows[i] = M.short_path(x.path, root) .. ' (' .. tostring(x.reason) .. ')'
    end
    out[#out + 1] = 'could not restore '
      .. table.concat(rows, ', ')
      .. (#result.skipped > 5 and (' and ' .. (#result.skipped - 5) .. ' more') or '')
  end
  return table.concat(out, '; ')
end

--- Said after a rewind when the checkpointing setting is off (sidecar/listCheckpoints `checkpointing: false`).
M.CHECKPOINTING_OFF = "checkpointing is off (setting checkpointing): the agent's edits made while it is off were not "
  .. 'saved and cannot be restored'

--- The note after :SidecarRewind!: which message (its words), what happened to each file, and whether checkpointing
--- is off (`checkpointing` false).
function M.summary(text, result, root, checkpointing)
  local files = M.done(result, root)
  return 'rewound to before “'
    .. pickers.first_words(text)
    .. '”: the model no longer sees it or anything after it; '
    .. (files ~= '' and files or 'no file needed restoring')
    .. (checkpointing == false and ('; ' .. M.CHECKPOINTING_OFF) or '')
end

return M
