-- How sessions and messages read in the vim.ui.select pickers: local times, first words, branches marked.
local M = {}

--- Seconds to add to a UTC wall-clock time to get the local one (now).
local function utc_offset()
  local now = os.time()
  return os.difftime(now, os.time(os.date('!*t', now)))
end

--- "2026-11-25T03:36:22.123Z" -> "2026-11-25 04:36" in local time ("04:36" when it is today); other text as it is.
function M.local_time(iso, today)
  local y, mo, d, h, mi, s = tostring(iso or ''):match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)')
  if not y or not (tostring(iso):match('Z$') or tostring(iso):match('%+00:?00$')) then
    return tostring(iso or '')
  end
  local t = os.time({
    year = tonumber(y),
    month = tonumber(mo),
    day = tonumber(d),
    hour = tonumber(h),
    min = tonumber(mi),
    sec = tonumber(s),
    isdst = false,
  }) + utc_offset()
  if os.date('%Y-%m-%d', t) == (today or os.date('%Y-%m-%d')) then
    return os.date('%H:%M', t)
  end
  return os.date('%Y-%m-%d %H:%M', t)
end

--- The first words of a message on one line, at most `max` characters (… when cut).
function M.first_words(text, max)
  max = max or 60
  local one = vim.trim(tostring(text or ''):gsub('%s+', ' '))
  if vim.fn.strchars(one) <= max then
    return one
  end
  local cut = vim.fn.strcharpart(one, 0, max)
  local at_space = cut:match('^(.*%S)%s+%S*$')
  return ((at_space and #at_space > max / 2) and at_space or cut) .. '…'
end

--- A user message in the Fork and Rewind pickers: its time and first words.
function M.message_item(e)
  if e.id == false then
    return e.text
  end
  return M.local_time(e.time) .. '  ' .. M.first_words(e.text)
end

--- A session in the Resume picker: time, title, counts, the session it branches from, [current].
function M.session_item(s, all, current)
  local title = function(x)
    return M.first_words(x.title or x.sessionId, 50)
  end
  local parent = ''
  if type(s.parentSessionId) == 'string' and s.parentSessionId ~= '' then
    local name = s.parentSessionId:sub(1, 8)
    for _, other in ipairs(all or {}) do
      if other.sessionId == s.parentSessionId then
        name = title(other)
      end
    end
    parent = '  ⑂ branch of ' .. name
  end
  local compactions = tonumber(s.compactionCount) or 0
  return string.format(
    '%s  %s  (%d messages%s)%s%s',
    M.local_time(s.lastUpdated or s.startTime),
    title(s),
    tonumber(s.messageCount) or 0,
    compactions > 0 and (', ' .. compactions .. (compactions == 1 and ' compaction' or ' compactions')) or '',
    parent,
    s.sessionId == current and '  [current]' or ''
  )
end

return M
