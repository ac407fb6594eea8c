-- Steering a compaction against the real sidecar and the fake Gemini: :SidecarCompress up-to summarises only what came
-- before the chosen message; :SidecarCompress preview opens the proposed summary in a buffer, `:w` applies the edited
-- text (the transcript says it was edited) and `q` discards a preview; :SidecarRate records the rating.
local T = require('sidecar_test')

T.run('test_compaction', function()
  T.fake_reset()
  T.workspace({})
  local sidecar = T.start_sidecar({ settings = { tokenLimit = 100000 } })
  local client = require('sidecar.client')
  local protocol = require('sidecar.protocol')
  local compaction = require('sidecar.compaction')

  local function say(text)
    local turn = sidecar.send(text .. string.rep(' of the plan', 60))
    T.wait(function()
      return turn.done
    end, 30000, 'the turn "' .. text .. '"')
    T.eq(turn.error, nil, 'turn error of "' .. text .. '"')
  end

  --- Run `fn(cb)` and wait for its callback; its (err, result).
  local function await(fn, what)
    local got
    fn(function(err, result)
      got = { err = err, result = result }
    end)
    T.wait(function()
      return got
    end, 60000, what)
    return got.err, got.result
  end

  local function transcript()
    local _, t = await(function(cb)
      client.request(protocol.method.getTranscript, vim.empty_dict(), cb)
    end, 'the transcript')
    return t.entries
  end

  local function summary_texts()
    local out = {}
    for _, r in ipairs(T.fake_requests()) do
      if r.summary then
        out[#out + 1] = vim.json.encode(r.body.contents)
      end
    end
    return table.concat(out, '\n')
  end

  for _, word in ipairs({ 'ALPHA', 'BRAVO', 'CHARLIE', 'DELTA' }) do
    say(word .. ': the step')
  end
  local mine = {}
  for _, e in ipairs(transcript()) do
    if e.type == 'message' and e.kind == 'user' then
      mine[#mine + 1] = e.id
    end
  end

  T.step(':SidecarCompress up-to ID summarises only what came before that message', function()
    local err, result = await(function(cb)
      compaction.run('up-to ' .. mine[3], cb)
    end, 'the up-to compaction')
    T.eq(err, nil, 'compress up-to error')
    T.eq(result.status, 'COMPRESSED', 'status')
    local asked = summary_texts()
    T.contains(asked, 'BRAVO', 'the summary request')
    T.ok(not asked:find('CHARLIE', 1, true), 'CHARLIE stays verbatim, out of the summary request')
  end)

  T.step('q in a preview buffer discards it; the history is unchanged', function()
    local err = await(function(cb)
      compaction.run('preview keep the step names', cb)
    end, 'a preview to discard')
    T.eq(err, nil, 'preview error')
    local buf = compaction.preview_buf
    T.ok(buf ~= nil, 'a preview buffer')
    vim.api.nvim_feedkeys('q', 'mx', false) -- remapped: the buffer's own `q`
    T.wait(function()
      return not vim.api.nvim_buf_is_valid(buf)
    end, 10000, 'the discarded preview closed')
    T.eq(compaction.preview_buf, nil, 'no preview left')
  end)

  T.step(':SidecarCompress preview opens the summary; edited and written with :w it is applied', function()
    local err, result = await(function(cb)
      compaction.run('preview', cb)
    end, 'the preview')
    T.eq(err, nil, 'preview error')
    local buf = compaction.preview_buf
    T.ok(buf and vim.api.nvim_get_current_buf() == buf, 'the preview buffer is the current one')
    T.contains(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'), '<state_snapshot>', 'the preview')
    T.ok(result.newTokenCount < result.originalTokenCount, 'the preview says the summary is smaller')
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'EDITED-IN-NVIM: keep the delta step.' })
    vim.cmd('write')
    T.wait(function()
      return compaction.preview_buf == nil
    end, 60000, 'the preview applied and closed')
    T.ok(not vim.api.nvim_buf_is_valid(buf), 'the preview buffer is gone')
    local last
    for _, e in ipairs(transcript()) do
      if e.type == 'compaction' then
        last = e
      end
    end
    T.eq(last.edited, true, 'the compaction is marked edited')
    T.eq(last.snapshot, '<state_snapshot>\nEDITED-IN-NVIM: keep the delta step.\n</state_snapshot>', 'the snapshot')
  end)

  T.step(':SidecarRate lost records the rating with the latest compaction', function()
    local err, rated = await(function(cb)
      compaction.rate('lost the step names', cb)
    end, 'the rating')
    T.eq(err, nil, 'rate error')
    T.eq(rated.rating, 'lost', 'rating')
    local last
    for _, e in ipairs(transcript()) do
      if e.type == 'compaction' then
        last = e
      end
    end
    T.eq(last.rating, 'lost', 'the transcript rating')
    T.contains(require('sidecar.transcript').compaction_line(last), 'rated lost something: the step names', 'the line')
  end)
end)
