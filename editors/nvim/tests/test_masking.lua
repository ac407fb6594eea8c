-- Masked old tool outputs against the real sidecar and the fake Gemini: sidecar/toolOutputsMasked is said once, as a
-- note in the chat buffer, and the request the fake received holds the masked preview.
local T = require('sidecar_test')

T.run('test_masking', function()
  T.fake_reset()
  local files = {}
  for i = 0, 4 do
    local lines = {}
    for k = 0, 279 do
      lines[#lines + 1] = ('file %d line %d'):format(i, k)
    end
    files[('f%d.txt'):format(i)] = table.concat(lines, '\n') .. '\n'
  end
  T.workspace(files)
  local masking = { protectionTokens = 2000, minPrunableTokens = 1500, paybackRequests = 0 }
  local sidecar = T.start_sidecar({ settings = { tokenLimit = 1000000, toolOutputMasking = masking } })
  local chat = require('sidecar.chat')
  sidecar.chat()

  T.step('five reads: the oldest two are masked and the chat says so once', function()
    local steps = {}
    for i = 0, 4 do
      steps[#steps + 1] =
        { kind = 'function_call', match = 'chat', name = 'read_file', args = { path = ('f%d.txt'):format(i) } }
    end
    T.http('POST', '/_control/script', { steps = steps })
    local turn = sidecar.send('read the five files')
    T.wait(function()
      return turn.done
    end, 30000, 'the turn')
    T.eq(turn.error, nil, 'turn error')
    local text = chat.text()
    T.contains(text, 'Masked 2 old tool outputs (', 'the notice in the chat buffer')
    local _, count = text:gsub('Masked %d+ old tool outputs', '')
    T.eq(count, 1, 'said once')
    local requests = T.fake_requests()
    local last = vim.fn.json_encode(requests[#requests].body)
    T.contains(last, '<tool_output_masked>', 'the request the fake received is masked')
  end)

  T.step(':SidecarTranscript marks the tool results the model saw masked', function()
    local lines = require('sidecar.transcript').full_lines({
      sessionId = 's',
      entries = {
        {
          type = 'message',
          id = 'm3',
          time = '2026-01-01T00:00:00.000Z',
          role = 'user',
          kind = 'toolResult',
          text = 'x',
          masked = true,
        },
      },
    })
    T.contains(table.concat(lines, '\n'), '(masked: the model sees previews; the full outputs are saved)', 'the mark')
  end)
end)
