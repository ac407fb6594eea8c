-- What fills the window and the model, against the real sidecar and the fake Gemini: :SidecarContext opens a float with
-- a row per category (the memory file's row opens it), require('sidecar').context() summarises it, :SidecarModel
-- switches the model through vim.ui.select and the usage follows.
local T = require('sidecar_test')

local function float_lines()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), win
    end
  end
  return nil
end

T.run('test_context_window', function()
  local ws = T.workspace({ ['GEMINI.md'] = '# This project\n\nPROJECT_RULE: tabs, not spaces.\n' })
  T.start_sidecar()
  local state = require('sidecar.state')
  local sidecar = require('sidecar')

  T.step(':SidecarContext opens a float with a row per category, the memory file among them', function()
    local turn = sidecar.send('hello')
    T.wait(function()
      return turn.done
    end, 30000, 'the turn')
    local answer
    sidecar.show_context(function(err, result)
      answer = { err = err, result = result }
    end)
    T.wait(function()
      return answer ~= nil
    end, 15000, 'the breakdown')
    T.eq(answer.err, nil, 'no error')
    local lines, win = float_lines()
    T.ok(lines ~= nil, 'a float is open')
    local text = table.concat(lines, '\n')
    T.contains(text, 'Context window: ', 'the header')
    T.contains(text, 'counted by the API', 'the total is the API count')
    for _, label in ipairs({ 'System prompt', 'Built-in tools', 'Session context', 'Messages', 'Free until compaction' }) do
      T.contains(text, label, 'a row for ' .. label)
    end
    T.contains(text, 'GEMINI.md (project)', 'a row for the memory file')
    local row
    for i, l in ipairs(lines) do
      if l:find('GEMINI.md (project)', 1, true) then
        row = i
      end
    end
    vim.api.nvim_win_set_cursor(win, { row, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'm', false) -- the float's map
    T.wait(function()
      return vim.api.nvim_buf_get_name(0) == ws .. '/GEMINI.md'
    end, 5000, '<CR> on the memory row opens the file')
    T.eq(float_lines(), nil, 'the float closed')
  end)

  T.step("require('sidecar').context() summarises the breakdown for a statusline", function()
    T.wait(function()
      return sidecar.context():match('^ctx %d+%% · msgs %S+ · tools %S+$') ~= nil
    end, 15000, 'the summary: ' .. sidecar.context())
  end)

  T.step(':SidecarModel lists the models with vim.ui.select; the switch reaches the statusline', function()
    local orig, asked = vim.ui.select, nil
    vim.ui.select = function(items, opts, on_choice)
      asked = { ids = vim.tbl_map(function(m)
        return m.id
      end, items), shown = opts.format_item(items[1]) }
      for _, m in ipairs(items) do
        if m.id == 'gemma-4-31b-it' then
          on_choice(m)
        end
      end
    end
    vim.cmd('SidecarModel')
    T.wait(function()
      return asked ~= nil
    end, 15000, 'the picker')
    vim.ui.select = orig
    T.ok(vim.tbl_contains(asked.ids, 'gemini-2.5-pro'), 'the backend lists gemini-2.5-pro')
    T.ok(not vim.tbl_contains(asked.ids, 'gemini-embedding-001'), 'not a model that cannot chat')
    T.contains(asked.shown, 'tokens)', 'each choice names its window')
    T.wait(function()
      return state.usage and state.usage.model == 'gemma-4-31b-it'
    end, 15000, 'the usage names the new model')
    -- the test settings fix tokenLimit (4000), which keeps the window whatever the model
    T.eq(state.usage.tokenLimit, 4000, 'the tokenLimit setting keeps the window')
    T.contains(table.concat(require('sidecar.status_detail').lines(state.usage), '\n'), 'Model: gemma-4-31b-it')
  end)
end)
