-- Memory against the real sidecar, with HOME a temporary folder holding ~/.gemini/GEMINI.md and a workspace
-- GEMINI.md: sidecar/memoryChanged reaches the state, :SidecarMemory show opens the scratch buffer, add (--project, and
-- global picked with vim.ui.select) writes the files, refresh reads an edit, :SidecarStatus and :checkhealth list them.
local T = require('sidecar_test')

local function read(path)
  local f = io.open(path)
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

local function write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

local function paths(m)
  local out = {}
  for _, f in ipairs((m or {}).files or {}) do
    out[#out + 1] = f.scope .. ':' .. f.path
  end
  return out
end

local function run(args)
  local answer
  require('sidecar.memory').run(args, function(err, result)
    answer = { err = err, result = result }
  end)
  T.wait(function()
    return answer ~= nil
  end, 15000, 'the answer to :SidecarMemory ' .. args)
  return answer
end

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

T.run('test_memory', function()
  local home = vim.fn.resolve(vim.fn.tempname() .. '-home')
  local global = home .. '/.gemini/GEMINI.md'
  write(global, '# Mine\n\nGLOBAL_MEMORY_MARKER: answer briefly.\n')
  local ws = T.workspace({ ['GEMINI.md'] = '# This project\n\nPROJECT_MEMORY_MARKER: tabs, not spaces.\n' })
  local project = ws .. '/GEMINI.md'
  T.start_sidecar({ setup = { cmd_env = { HOME = home } } })
  local state = require('sidecar.state')

  T.step('sidecar/memoryChanged brings the global and the project file', function()
    T.wait(function()
      return #paths(state.memory) == 2
    end, 30000, 'two memory files in the state')
    T.eq(paths(state.memory), { 'global:' .. global, 'project:' .. project }, 'global first, then the project')
    T.ok(state.memory.tokens > 0, 'counted')
    T.eq(
      require('sidecar.memory').summary(state.memory):match('^Memory: 2 files %(%d+ tokens%)$') ~= nil,
      true,
      'the summary: ' .. require('sidecar.memory').summary(state.memory)
    )
  end)

  T.step(':SidecarMemory show opens a scratch buffer listing each file and its content', function()
    vim.cmd('SidecarMemory show')
    local buf
    T.wait(function()
      buf = vim.fn.bufnr(require('sidecar.memory').BUFNAME)
      return buf > 0 and vim.api.nvim_get_current_buf() == buf
    end, 15000, 'the memory buffer in the current window')
    local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
    T.contains(text, '1. ' .. global .. ' — global', 'the global file with its scope')
    T.contains(text, '2. ' .. project .. ' — project', 'the project file')
    T.contains(text, 'GLOBAL_MEMORY_MARKER: answer briefly.', "the global file's text")
    T.contains(text, 'PROJECT_MEMORY_MARKER: tabs, not spaces.', "the project file's text")
    T.eq(vim.bo[buf].buftype, 'nofile', 'a scratch buffer')
    T.eq(vim.bo[buf].modifiable, false, 'read-only')
    local wins = #vim.api.nvim_tabpage_list_wins(0)
    local tick = vim.api.nvim_buf_get_changedtick(buf)
    vim.cmd('SidecarMemory')
    -- the answer refills the buffer, then picks its window, in one callback
    T.wait(function()
      return vim.api.nvim_buf_get_changedtick(buf) > tick
    end, 15000, 'the memory shown again')
    T.eq(#vim.api.nvim_tabpage_list_wins(0), wins, 'shown again in the same window, no new split')
  end)

  T.step(':SidecarMemory add --project appends under "## Gemini Added Memories"; the open buffer follows', function()
    local answer = run('add --project Always run the linter before committing.')
    T.eq(answer.err, nil, 'no error')
    T.contains(
      read(project),
      '## Gemini Added Memories\n- Always run the linter before committing.',
      'the project file'
    )
    T.contains(read(project), 'PROJECT_MEMORY_MARKER', 'what was there is kept')
    T.contains(state.memory.text, 'Always run the linter before committing.', 'the memory has it')
    local buf = vim.fn.bufnr(require('sidecar.memory').BUFNAME)
    T.contains(
      table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'),
      '- Always run the linter before committing.',
      'the open memory buffer shows it'
    )
    T.ok(not read(global):find('linter', 1, true), 'not in the global file')
  end)

  T.step(':SidecarMemory add without a scope asks with vim.ui.select (global picked)', function()
    local orig, asked = vim.ui.select, nil
    vim.ui.select = function(items, opts, on_choice)
      asked = { items = items, prompt = opts.prompt, first = opts.format_item(items[1]) }
      on_choice('global')
    end
    local answer = run('add I prefer short answers.')
    vim.ui.select = orig
    T.eq(answer.err, nil, 'no error')
    T.eq(asked.items, { 'global', 'project' }, 'asked where')
    T.contains(asked.first, '~/.gemini/GEMINI.md', 'the choice names the file')
    T.contains(read(global), '## Gemini Added Memories\n- I prefer short answers.', 'the global file')
    T.contains(read(global), 'GLOBAL_MEMORY_MARKER', 'what was there is kept')
  end)

  T.step(':SidecarMemory refresh reads a file edited outside Neovim', function()
    write(project, read(project) .. '\nEDITED_OUTSIDE_MARKER\n')
    local answer = run('refresh')
    T.eq(answer.err, nil, 'no error')
    T.contains(answer.result.text, 'EDITED_OUTSIDE_MARKER', 'the answer has the edit')
    T.contains(state.memory.text, 'EDITED_OUTSIDE_MARKER', 'the state too')
  end)

  T.step(':SidecarStatus and :checkhealth sidecar list the memory', function()
    local status = table.concat(require('sidecar.status_detail').lines(state.usage, state.last_compressed), '\n')
    T.match(status, 'Memory: 2 files %(%d+ tokens%)', ':SidecarStatus')
    local health = health_text()
    T.match(health, 'Memory: 2 files %(%d+ tokens%)', 'checkhealth: the summary')
    T.contains(health, 'Memory file (global, ', 'checkhealth: the global file')
    T.contains(health, global, 'checkhealth: its path')
    T.contains(health, project, 'checkhealth: the project file')
  end)

  T.step('a wrong subcommand or option is told, and the server keeps going', function()
    local told = {}
    local orig = require('sidecar.ui').tell
    require('sidecar.ui').tell = function(msg, level)
      told[#told + 1] = { msg = msg, level = level }
    end
    local bad = run('forget everything')
    local flag = run('add --team shared fact')
    require('sidecar.ui').tell = orig
    T.ok(bad.err and flag.err, 'both refused')
    T.contains(told[1].msg, 'takes show, refresh or add, not forget', 'the subcommand named')
    T.contains(told[2].msg, 'unknown option --team', 'the option named')
    T.eq(told[1].level, vim.log.levels.ERROR, 'an error')
    T.eq(run('show').err, nil, 'still answering')
  end)
end)
