-- :checkhealth sidecar reports the server command, the server version, whether an API key is set
-- (never the key) and the Neovim version; while running and when stopped.
local T = require('sidecar_test')

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

T.run('test_health', function()
  T.workspace({})
  local python = T.env('SIDECAR_TEST_PYTHON')
  local version = vim.trim(vim.fn.system({ python, '-m', 'sidecar', '--version' }))
  T.match(version, '^sidecar %d+%.%d+', 'sidecar --version')
  local sidecar = T.start_sidecar({ settings = { apiKey = 'test-key-SECRET-42', compresionThreshold = 0.7 } })
  local nvim_version = require('sidecar.compat').version_string()

  T.step('while running', function()
    T.wait(function()
      return sidecar.state.usage ~= nil
    end, 10000, 'the first sidecar/tokenUsage')
    local text = health_text()
    T.log('%s', text)
    T.contains(text, 'Neovim ' .. nvim_version, 'Neovim version')
    T.contains(text, 'Server command: ' .. python .. ' -m sidecar', 'server command')
    T.contains(text, 'Server version: ' .. version .. ' (running', 'server version from serverInfo')
    T.contains(text, 'API key: set (from settings.apiKey)', 'key presence')
    T.contains(text, 'Backend: Gemini API at ' .. T.env('SIDECAR_TEST_BASEURL'), 'the backend named')
    T.contains(text, "credentials: an API key (from sidecar.apiKey in the editor's settings)", "the doctor's checks")
    T.ok(not text:find('SECRET', 1, true), 'the key is never shown')
    T.contains(
      text,
      'settings.compresionThreshold is not a sidecar setting, so it has no effect; did you mean '
        .. 'compressionThreshold?',
      'a misspelt setting named (settings_schema.lua)'
    )
    T.ok(not text:find('ERROR', 1, true), 'no errors')
  end)

  T.step('stopped, key from the environment', function()
    sidecar.stop()
    T.wait(function()
      return #T.sidecar_pids() == 0
    end, 5000, 'the sidecar to exit')
    sidecar.state.cfg.settings.apiKey = nil
    vim.env.GEMINI_API_KEY = 'env-SECRET-43'
    local text = health_text()
    T.contains(text, 'Server version: ' .. version .. ' (status: stopped)', 'server version from --version')
    T.contains(text, 'API key: set (from $GEMINI_API_KEY)', 'key presence from the environment')
    T.ok(not text:find('SECRET', 1, true), 'the key is never shown')
    vim.env.GEMINI_API_KEY = nil
    text = health_text()
    T.contains(text, 'API key: not set; requests to ' .. T.env('SIDECAR_TEST_BASEURL'), 'no key')
  end)

  T.step("the doctor's verdict on a Vertex AI setup that cannot work", function()
    local cfg = sidecar.state.cfg
    cfg.settings.backend = 'vertex'
    cfg.cmd_env = vim.tbl_extend('force', cfg.cmd_env or {}, {
      GOOGLE_APPLICATION_CREDENTIALS = vim.fn.tempname() .. '-missing-adc.json',
      GCE_METADATA_HOST = '127.0.0.1:9',
      GCE_METADATA_IP = '127.0.0.1:9',
    })
    local text = health_text()
    T.log('%s', text)
    T.contains(text, 'adc: Vertex AI needs Application Default Credentials', "the ADC problem, in the server's words")
    T.contains(text, 'gcloud auth application-default login', 'the next step')
    T.ok(text:find('ERROR', 1, true) ~= nil, 'reported as an error')
    cfg.settings.backend = nil
  end)
end)
