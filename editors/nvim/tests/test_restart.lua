-- A crashed sidecar is restarted and resumes its session (sidecar/resumeSession with the last
-- sessionId seen in sidecar/tokenUsage); messages sent meanwhile are delivered afterwards.
local T = require('sidecar_test')

T.run('test_restart', function()
  T.fake_reset()
  T.workspace({ ['notes.md'] = '# notes\n' })
  vim.cmd('edit notes.md')
  local sidecar = T.start_sidecar()
  local state = sidecar.state
  local chat = require('sidecar.chat')
  local client = require('sidecar.client')

  local old_session, old_client, old_pid
  T.step('a first turn', function()
    local turn = sidecar.send('remember the word pineapple')
    T.wait(function()
      return turn.done
    end, 20000, 'the first reply')
    T.eq(turn.error, nil, 'first turn')
    old_session, old_client = state.session_id, state.client_id
    T.ok(old_session, 'a session id')
    local pids = T.sidecar_pids()
    T.eq(#pids, 1, 'one sidecar process')
    old_pid = pids[1]
  end)

  local resumes = {}
  local orig_request = client.request
  client.request = function(method, params, cb)
    if method == 'sidecar/resumeSession' then
      resumes[#resumes + 1] = vim.deepcopy(params)
    end
    return orig_request(method, params, cb)
  end

  local queued
  T.step('kill -9 the sidecar: it is restarted', function()
    vim.loop.kill(old_pid, 'sigkill')
    T.wait(function()
      return state.status == 'restarting'
    end, 5000, 'status restarting')
    -- A message sent while the sidecar restarts waits for it.
    queued = sidecar.send('what was the word?')
    T.wait(function()
      return state.status == 'running' and state.client_id ~= old_client
    end, 20000, 'a new sidecar client')
    local pids = T.sidecar_pids()
    T.eq(#pids, 1, 'one sidecar process again')
    T.ok(pids[1] ~= old_pid, 'a new process')
  end)

  T.step('the restart resumes the last session seen in sidecar/tokenUsage', function()
    T.eq(resumes, { { sessionId = old_session } }, 'sidecar/resumeSession params')
  end)

  T.step('the message sent during the restart is answered', function()
    T.wait(function()
      return queued.done
    end, 20000, 'the queued turn')
    T.eq(queued.error, nil, 'queued turn error')
    T.contains(chat.text(), 'you said "what was the word?"', 'reply in the chat')
    T.match(sidecar.statusline(), '^✦ %d+%% [%d.]+K?/4K$', 'statusline after the restart')
  end)

  local function step_resumed_history()
    T.step('the resumed session keeps the history from before the crash', function()
      T.wait(function()
        return state.last_resume
      end, 5000, 'the resume answer')
      T.eq(state.session_id, old_session, 'same session after the restart')
      T.contains(chat.text(), 'resumed session ' .. old_session, 'restart noted in the chat')
      local reqs = T.fake_requests()
      local last
      for i = #reqs, 1, -1 do
        if reqs[i].kind == 'stream' and not reqs[i].summary then -- summaries stream too
          last = reqs[i]
          break
        end
      end
      local all = {}
      for _, t in ipairs(T.request_texts(last)) do
        all[#all + 1] = t.text
      end
      T.contains(table.concat(all, '\n'), 'remember the word pineapple', 'the pre-crash message is in the next request')
    end)
  end

  step_resumed_history()
end)
