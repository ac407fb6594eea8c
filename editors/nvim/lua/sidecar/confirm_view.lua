-- The question of a tool confirmation with its diff, in a float at the top of the editor while the choices are
-- asked (the built-in vim.ui.select lists them at the bottom, over the chat).
local M = {}

--- Lines of the float: the question, then the diff (or the tool's description when there is no diff).
function M.lines(params, question)
  local lines = { question }
  if type(params.diff) == 'string' and params.diff ~= '' then
    lines[#lines + 1] = ''
    vim.list_extend(lines, vim.split(params.diff, '\n', { plain = true }))
    while #lines > 1 and lines[#lines] == '' do
      table.remove(lines)
    end
  end
  return lines
end

--- Open the float; returns a function that closes it (also when it was never opened).
function M.open(params, question)
  local lines = M.lines(params, question)
  if #lines < 2 then
    return function() end -- no diff: the question itself is the whole prompt
  end
  return M.open_lines(lines, 'diff')
end

--- The screen rows `lines` take in a window `width` columns wide: a line longer than that wraps (the question often
--- does), and counting lines instead cut the end of the diff.
function M.rows(lines, width)
  local n = 0
  for _, l in ipairs(lines) do
    n = n + math.max(math.ceil(vim.fn.strdisplaywidth(l) / math.max(width, 1)), 1)
  end
  return n
end

--- Open a float at the top of the editor holding `lines` (in sight while vim.ui.select asks); returns its closer.
function M.open_lines(lines, filetype)
  local ok, win = pcall(function()
    local buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].bufhidden = 'wipe'
    vim.bo[buf].filetype = filetype or ''
    local width = 20
    for _, l in ipairs(lines) do
      width = math.max(width, vim.fn.strdisplaywidth(l))
    end
    width = math.min(width, vim.o.columns - 4)
    -- leave room at the bottom for the question and its choices
    local height = math.max(math.min(M.rows(lines, width), vim.o.lines - vim.o.cmdheight - 10), 1)
    return vim.api.nvim_open_win(buf, false, {
      relative = 'editor',
      row = 0,
      col = math.max(math.floor((vim.o.columns - width - 2) / 2), 0),
      width = width,
      height = height,
      style = 'minimal',
      border = 'single',
      focusable = false,
      zindex = 60,
    })
  end)
  if not ok then
    return function() end
  end
  pcall(vim.cmd, 'redraw')
  return function()
    if vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
end

return M
