-- Steering a compaction: :SidecarCompress up-to (summarise everything before a message of yours), :SidecarCompress
-- preview (the proposed summary in a scratch buffer: :w applies it, edited or not; q discards it) and :SidecarRate.
-- The server checks everything (message ids, a stale preview, the edited text); this shows its words.
local client = require('sidecar.client')
local protocol = require('sidecar.protocol')

local M = {}

local ensure = require('sidecar.lifecycle').ensure

local function ui()
  return require('sidecar.ui')
end

local function done(cb, err, result)
  if cb then
    cb(err, result)
  end
end

--- :SidecarCompress up-to [MESSAGE_ID]: everything before that message of yours (picked) becomes the summary.
function M.up_to(message_id, cb)
  ensure()
  require('sidecar.actions').pick_message(message_id, 'Summarise everything before', false, function(id)
    if not id then
      return done(cb, { message = 'no message chosen' })
    end
    client.request(protocol.method.compress, { upToMessageId = id }, function(err, result)
      ui().on_compress_result(err, result)
      done(cb, err, result)
    end)
  end)
end

--- The preview buffer of `preview_id`, if it is still open.
local function preview_buffer()
  local buf = M.preview_buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
end

local function close_preview()
  local buf = preview_buffer()
  M.preview_buf, M.preview_id = nil, nil
  if buf then
    vim.api.nvim_buf_set_option(buf, 'modified', false)
    vim.api.nvim_buf_delete(buf, { force = true })
  end
end

--- Apply the open preview with the buffer's text (edited or not); the buffer stays open when the server refuses it.
function M.apply(cb)
  local buf = preview_buffer()
  if not buf or not M.preview_id then
    ui().tell('no compaction preview to apply: :SidecarCompress preview', vim.log.levels.WARN)
    return done(cb, { message = 'no preview' })
  end
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  local params = { previewId = M.preview_id, snapshot = text }
  client.request(protocol.method.applyCompaction, params, function(err, result)
    if err then
      ui().tell('the summary was not applied: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return done(cb, err)
    end
    close_preview()
    ui().on_compress_result(nil, result)
    done(cb, nil, result)
  end)
end

--- Close the preview; the conversation stays as it is.
function M.discard()
  if preview_buffer() then
    close_preview()
    ui().tell('summary discarded; the conversation is unchanged')
  end
end

local function open_preview(result)
  close_preview()
  local buf = vim.api.nvim_create_buf(false, true)
  M.preview_buf, M.preview_id = buf, result.previewId
  vim.api.nvim_buf_set_name(buf, 'sidecar://compaction-preview/' .. result.previewId)
  vim.api.nvim_buf_set_option(buf, 'buftype', 'acwrite')
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'wipe')
  vim.api.nvim_buf_set_option(buf, 'swapfile', false)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(result.snapshot, '\n', { plain = true }))
  vim.api.nvim_buf_set_option(buf, 'modified', false)
  vim.api.nvim_buf_set_option(buf, 'filetype', 'xml')
  vim.api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    callback = function()
      M.apply()
    end,
  })
  vim.keymap.set('n', 'q', M.discard, { buffer = buf, desc = 'Discard the proposed summary' })
  vim.cmd('botright split')
  vim.api.nvim_win_set_buf(0, buf)
  ui().tell(result.message .. ' :w applies it (edited or not), q discards it.')
end

--- :SidecarCompress preview [up-to [MESSAGE_ID]] [focus]: the proposed summary in a buffer; nothing changes yet.
function M.preview(argument, cb)
  ensure()
  local words = vim.split(vim.trim(argument or ''), '%s+', { trimempty = true })
  local function go(up_to, focus)
    local params = vim.empty_dict()
    if focus ~= '' or up_to then
      params = {}
      params.instructions = focus ~= '' and focus or nil
      params.upToMessageId = up_to
    end
    client.request(protocol.method.previewCompaction, params, function(err, result)
      if err then
        ui().on_compress_result(err)
        return done(cb, err)
      end
      if type(result.previewId) ~= 'string' or type(result.snapshot) ~= 'string' then
        ui().tell('nothing to preview: ' .. tostring(result.message), vim.log.levels.WARN)
        return done(cb, nil, result)
      end
      open_preview(result)
      done(cb, nil, result)
    end)
  end
  if words[1] ~= 'up-to' then
    return go(nil, table.concat(words, ' '))
  end
  local id = words[2] and words[2]:match('^m%d+$') and words[2] or nil
  local focus = table.concat(words, ' ', id and 3 or 2)
  require('sidecar.actions').pick_message(id, 'Summarise everything before', false, function(picked)
    if not picked then
      return done(cb, { message = 'no message chosen' })
    end
    go(picked, focus)
  end)
end

--- :SidecarCompress [up-to [ID] | preview [...] | focus]: route to the right request.
function M.run(argument, cb)
  local head, rest = vim.trim(argument or ''):match('^(%S*)%s*(.-)$')
  if head == 'up-to' then
    return M.up_to(rest, cb)
  end
  if head == 'preview' then
    return M.preview(rest, cb)
  end
  return require('sidecar.actions').compress(argument, cb)
end

--- :SidecarRate good|lost [note]: rate the latest compaction's summary.
function M.rate(argument, cb)
  ensure()
  local rating, note = vim.trim(argument or ''):match('^(%S*)%s*(.-)$')
  if rating ~= 'good' and rating ~= 'lost' then
    ui().tell('usage: :SidecarRate good  or  :SidecarRate lost [what the summary lost]', vim.log.levels.WARN)
    return done(cb, { message = 'bad rating' })
  end
  local params = { rating = rating }
  if note ~= '' then
    params.note = note
  end
  client.call('rate', protocol.method.rateCompaction, params, cb, function(result)
    ui().tell(result.message)
    done(cb, nil, result)
  end)
end

function M.complete(arglead, cmdline)
  if cmdline:match('^%s*%S+%s+%S*$') then
    return vim.tbl_filter(function(w)
      return w:sub(1, #arglead) == arglead
    end, { 'up-to', 'preview' })
  end
  return {}
end

return M
