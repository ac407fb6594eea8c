-- :SidecarMemory show|refresh|add — the context files (GEMINI.md, AGENTS.md) the agent has: a scratch buffer listing
-- each file (path, scope, tokens) with its content, a re-read, a fact appended; and, from sidecar/memoryChanged, the
-- state :SidecarStatus and :checkhealth show.
local client = require('sidecar.client')
local protocol = require('sidecar.protocol')
local state = require('sidecar.state')
local thousands = require('sidecar.transcript').thousands

local M = {}

M.BUFNAME = 'sidecar://memory'

local function plural(n, word)
  return string.format('%s %s%s', thousands(n), word, n == 1 and '' or 's')
end

--- 'Memory: 2 files (1,234 tokens)', plus '; 3 project files not loaded' when an untrusted workspace skipped some.
function M.summary(m)
  if type(m) ~= 'table' then
    return nil
  end
  local files = type(m.files) == 'table' and m.files or {}
  local loaded = #files > 0 and string.format('%s (%s tokens)', plural(#files, 'file'), thousands(m.tokens or 0))
    or 'no context files'
  local skipped = tonumber(m.skippedProjectFiles) or 0
  return 'Memory: ' .. loaded .. (skipped > 0 and ('; ' .. plural(skipped, 'project file') .. ' not loaded') or '')
end

--- How many project files were not loaded and why (nil when none were skipped).
function M.skipped_text(m)
  local n = type(m) == 'table' and tonumber(m.skippedProjectFiles) or 0
  if n <= 0 then
    return nil
  end
  local why = type(m.skippedReason) == 'string' and m.skippedReason ~= '' and m.skippedReason:gsub('[%.%s]+$', '')
    or 'the workspace is not trusted'
  return string.format('%s %s not loaded: %s', plural(n, 'project memory file'), n == 1 and 'was' or 'were', why)
end

--- Each file's content from the wrapped text the model gets (`--- Context from: P ---` … `--- End of Context from: P ---`).
function M.contents(text)
  local out = {}
  if type(text) ~= 'string' then
    return out
  end
  local pos = 1
  while true do
    local s, e, path = text:find('%-%-%- Context from: ([^\n]-) %-%-%-\n', pos)
    if not s then
      break
    end
    local marker = '\n--- End of Context from: ' .. path .. ' ---'
    local stop = text:find(marker, e, true) -- from e: an empty file's end marker follows its begin marker's newline
    if not stop then
      break
    end
    out[path] = stop > e and text:sub(e + 1, stop - 1) or ''
    pos = stop + #marker
  end
  return out
end

local SCOPES = {
  global = 'global (every project)',
  project = 'project',
  subdirectory = 'subfolder (delivered with a tool result under it)',
}

local function split(text)
  return vim.split(text, '\n', { plain = true })
end

--- The lines of the :SidecarMemory show buffer (Markdown): a header, the files, then each file's content.
function M.lines(m)
  local files = type(m) == 'table' and type(m.files) == 'table' and m.files or {}
  local out = { '# Sidecar memory', '' }
  if #files == 0 then
    out[#out + 1] = 'No context files are loaded. Instructions for the agent go in ~/.gemini/GEMINI.md (every project)'
    out[#out + 1] = 'or in GEMINI.md / AGENTS.md at the project root; :SidecarMemory add {text} appends one.'
  else
    out[#out + 1] = string.format(
      '%s, %s tokens, in the order the model sees them.',
      plural(#files, 'context file'),
      thousands(m.tokens or 0)
    )
  end
  local skipped = M.skipped_text(m)
  if skipped then
    out[#out + 1] = ''
    out[#out + 1] = '> Not loaded: ' .. skipped .. '.'
  end
  out[#out + 1] = ''
  for i, f in ipairs(files) do
    out[#out + 1] = string.format(
      '%d. %s — %s, %s tokens',
      i,
      tostring(f.path),
      SCOPES[f.scope] or tostring(f.scope),
      thousands(f.tokens)
    )
  end
  local contents = M.contents(m and m.text)
  local missing = false
  for i, f in ipairs(files) do
    vim.list_extend(out, { '', string.format('## %d. %s', i, tostring(f.path)), '' })
    local body = contents[f.path]
    if body then
      vim.list_extend(out, split(body))
    else
      missing = true
      out[#out + 1] = '(its text is in the full text below)'
    end
  end
  if missing and type(m.text) == 'string' then
    vim.list_extend(out, { '', '## The text the model gets', '' })
    vim.list_extend(out, split(m.text))
  end
  return out
end

local function memory_buf()
  local b = vim.fn.bufnr(M.BUFNAME)
  if b > 0 and vim.api.nvim_buf_is_valid(b) then
    return b
  end
end

local function fill(buf, m)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.lines(m))
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- Show `m` in the memory scratch buffer (one buffer, reused; a split unless a window already shows it).
function M.show_buffer(m)
  local buf = memory_buf()
  if not buf then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, M.BUFNAME)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].filetype = 'markdown'
  end
  fill(buf, m)
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      vim.api.nvim_set_current_win(w)
      return buf
    end
  end
  vim.cmd('split')
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

local function tell(msg, level)
  require('sidecar.ui').tell(msg, level)
end

--- A MemoryInfo from the server (sidecar/memoryChanged, or an answer): kept for :SidecarStatus and :checkhealth, and an
--- open memory buffer follows. (Skipped project files are told by the server itself, in a window/showMessage.)
function M.accept(m)
  if type(m) ~= 'table' then
    return
  end
  state.memory = m
  local buf = memory_buf()
  if buf then
    fill(buf, m)
  end
  require('sidecar.status').changed()
end

local function parse_add(rest)
  local scope
  while true do
    local flag, after = rest:match('^%-%-(%S+)%s*(.*)$')
    if not flag then
      break
    end
    if flag ~= 'global' and flag ~= 'project' then
      return nil, nil, 'unknown option --' .. flag .. ' (--global or --project)'
    end
    scope, rest = flag, after
  end
  return vim.trim(rest), scope
end

--- :SidecarMemory [show|refresh|add [--global|--project] {text}]. cb(err, result) once answered (tests wait on it).
function M.run(args, cb)
  require('sidecar.lifecycle').ensure()
  local function finish(err, result)
    if cb then
      cb(err, result)
    end
  end
  local function answered(what, after)
    return function(err, result)
      if err then
        tell('memory ' .. what .. ': ' .. tostring(err.message or vim.inspect(err)), vim.log.levels.ERROR)
      else
        M.accept(result)
        after(result)
      end
      finish(err, result)
    end
  end
  local sub, rest = vim.trim(args or ''):match('^(%S*)%s*(.*)$')
  if sub == '' or sub == 'show' then
    client.request(
      protocol.method.getMemory,
      vim.empty_dict(),
      answered('show', function(result)
        M.show_buffer(result)
      end)
    )
  elseif sub == 'refresh' then
    client.request(
      protocol.method.refreshMemory,
      vim.empty_dict(),
      answered('refresh', function(result)
        tell('memory reloaded: ' .. M.summary(result):gsub('^Memory: ', ''))
      end)
    )
  elseif sub == 'add' then
    local text, scope, bad = parse_add(rest)
    if bad then
      tell(':SidecarMemory add: ' .. bad, vim.log.levels.ERROR)
      return finish({ message = bad })
    end
    local function send(t, sc)
      client.request(
        protocol.method.addMemory,
        { text = t, scope = sc },
        answered('add', function(result)
          tell(string.format('added to %s memory; %s', sc, M.summary(result)))
        end)
      )
    end
    local function with_scope(t)
      if scope then
        return send(t, scope)
      end
      vim.ui.select({ 'global', 'project' }, {
        prompt = 'Remember it where?',
        format_item = function(item)
          return item == 'global' and 'global: ~/.gemini/GEMINI.md (every project)'
            or 'project: GEMINI.md at the project root (created when missing)'
        end,
      }, function(choice)
        if choice then
          send(t, choice)
        else
          finish({ message = 'cancelled' })
        end
      end)
    end
    if text ~= '' then
      return with_scope(text)
    end
    vim.ui.input({ prompt = 'Remember: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        with_scope(vim.trim(input))
      else
        finish({ message = 'cancelled' })
      end
    end)
  else
    tell(':SidecarMemory takes show, refresh or add, not ' .. sub, vim.log.levels.ERROR)
    finish({ message = 'bad argument' })
  end
end

--- Completion: the subcommands, then add's options.
function M.complete(arglead, cmdline)
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  local candidates = { 'show', 'refresh', 'add' }
  if words[2] == 'add' and (#words > 2 or arglead == '') then
    candidates = { '--global', '--project' }
  elseif #words > 2 or (#words == 2 and arglead == '') then
    return {}
  end
  return vim.tbl_filter(function(c)
    return c:sub(1, #arglead) == arglead
  end, candidates)
end

return M
