-- workspace/applyEdit: Neovim's own handler, plus one fix for empty documents.
--
-- Neovim shows an empty file as one empty line, so inserting "text\n" at 0:0 of an empty (or newly
-- created) document leaves the lines {"text", ""}, which are written as "text\n\n". In LSP terms the
-- document was "" and the result is "text\n", i.e. the lines {"text"}. Edits ending past the last
-- line get this right already (Neovim drops the extra line itself); edits into an empty document
-- at 0:0 do not. After the default handler runs, drop that extra last line.
--
-- Neovim 0.11 turns an insert at the line just past the end (an append to a file ending in a newline) into the text
-- plus an extra empty line, which gets saved. Such an insert is sent as one at the end of the last line instead.
--
-- An edit names the version of the document the server planned it on (documents.lua syncs the workspace's buffers).
-- When the buffer changed since (the user typed, `u`, `:e!`), the whole edit is refused with a reason the agent reads
-- as "read the file again": its ranges would land on other text. (Neovim's own check only prints a message and
-- reports the edit applied.)
local compat = require('sidecar.compat')

local M = {}

local function uris_of(edit)
  local out = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument and change.textDocument.uri then
      out[change.textDocument.uri] = true
    elseif change.kind == 'create' and change.uri then
      out[change.uri] = true
    end
  end
  for uri in pairs(edit.changes or {}) do
    out[uri] = true
  end
  return out
end

local function empty_document(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return false
  end
  local buf = vim.fn.bufnr(fname)
  if buf > 0 and vim.api.nvim_buf_is_loaded(buf) then
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    return #lines == 1 and lines[1] == ''
  end
  local stat = compat.uv.fs_stat(fname)
  return stat == nil or stat.size == 0
end

local function buffer_of(fname)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(buf) == fname then
      return buf
    end
  end
  return nil
end

--- The file of the first document the edit was planned on an older version of, or nil.
function M.stale_document(edit)
  local versions = vim.lsp.util.buf_versions
  for _, change in ipairs(edit.documentChanges or {}) do
    local doc = change.textDocument
    if doc and type(doc.version) == 'number' and doc.uri then
      local ok, fname = pcall(vim.uri_to_fname, doc.uri)
      local buf = ok and buffer_of(fname) or nil
      local have = buf and versions[buf] or nil
      if type(have) == 'number' and have > doc.version then
        return fname
      end
    end
  end
  return nil
end

local BEYOND = 2147483647 -- a column past any line's end: both versions clamp it to the end of the line

--- `edit` with each pure insert at the line just past a buffer's end moved to the end of its last line.
function M.appends_at_end(edit)
  local changes = {}
  local moved = false
  for i, change in ipairs(edit.documentChanges or {}) do
    changes[i] = change
    local doc = change.textDocument
    if doc and doc.uri and type(change.edits) == 'table' then
      local ok, fname = pcall(vim.uri_to_fname, doc.uri)
      local buf = ok and buffer_of(fname) or nil
      if not buf and ok and vim.fn.filereadable(fname) == 1 then
        buf = vim.fn.bufadd(fname)
      end
      if buf and not vim.api.nvim_buf_is_loaded(buf) then
        vim.fn.bufload(buf)
      end
      local count = buf and vim.api.nvim_buf_line_count(buf) or 0
      local last = count > 0 and vim.api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or ''
      local text_edits = {}
      for j, e in ipairs(change.edits) do
        local r = e.range
        text_edits[j] = e
        if
          count > 0
          and not (count == 1 and last == '')
          and r
          and r.start.line == count
          and r.start.character == 0
          and r['end'].line == count
          and r['end'].character == 0
          and type(e.newText) == 'string'
          and e.newText:sub(-1) == '\n'
        then
          local col = last:find('[\128-\255]') and BEYOND or #last
          local at = { line = count - 1, character = col }
          text_edits[j] = { range = { start = at, ['end'] = at }, newText = '\n' .. e.newText:sub(1, -2) }
          moved = true
        end
      end
      changes[i] = vim.tbl_extend('force', {}, change, { edits = text_edits })
    end
  end
  if not moved then
    return edit
  end
  return vim.tbl_extend('force', {}, edit, { documentChanges = changes })
end

function M.handler(err, params, ctx, config)
  if type(params) == 'table' and type(params.edit) == 'table' then
    local stale = M.stale_document(params.edit)
    if stale then
      return {
        applied = false,
        failureReason = vim.fn.fnamemodify(stale, ':~:.')
          .. ' changed in the editor after the agent read it (its buffer now holds other text)',
      }
    end
  end
  local empty = {}
  if type(params) == 'table' and type(params.edit) == 'table' then
    for uri in pairs(uris_of(params.edit)) do
      if empty_document(uri) then
        empty[#empty + 1] = uri
      end
    end
  end
  -- Neovim prints `Workspace edit <label>` for a labelled edit: the chat already shows the tool call.
  if type(params) == 'table' and params.label ~= nil then
    params = vim.tbl_extend('force', {}, params)
    params.label = nil
  end
  if type(params) == 'table' and type(params.edit) == 'table' then
    params = vim.tbl_extend('force', {}, params, { edit = M.appends_at_end(params.edit) })
  end
  local result = vim.lsp.handlers['workspace/applyEdit'](err, params, ctx, config)
  if type(result) == 'table' and result.applied then
    for _, uri in ipairs(empty) do
      local buf = vim.fn.bufnr(vim.uri_to_fname(uri))
      if buf > 0 and vim.api.nvim_buf_is_loaded(buf) then
        local n = vim.api.nvim_buf_line_count(buf)
        if n > 1 and vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] == '' then
          vim.api.nvim_buf_set_lines(buf, n - 1, n, false, {})
        end
      end
    end
  end
  return result
end

return M
