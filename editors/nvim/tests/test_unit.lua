-- Plugin logic without a server: statusline formatting and highlights, IDE context payloads
-- (real files only, 1-based cursor, selections from Visual mode and ranges, debounce), tool
-- confirmations (synchronous and asynchronous vim.ui.select), transcript rendering.
local T = require('sidecar_test')

T.run('test_unit', function()
  local sidecar = require('sidecar')
  local status = require('sidecar.status')
  local state = sidecar.state
  state.cfg = require('sidecar.config').resolve({})
  status.define_highlights()

  T.step('token counts are humanized', function()
    local cases = {
      { 0, '0' },
      { 38, '38' },
      { 999, '999' },
      { 1000, '1K' },
      { 1234, '1.2K' },
      { 4000, '4K' },
      { 9960, '10K' },
      { 12345, '12K' },
      { 471000, '471K' },
      { 999600, '1M' },
      { 1048576, '1M' },
      { 1500000, '1.5M' },
      { 2000000, '2M' },
    }
    for _, c in ipairs(cases) do
      T.eq(status.format_count(c[1]), c[2], 'format_count(' .. c[1] .. ')')
    end
  end)

  T.step('statusline text and highlight groups follow the thresholds', function()
    T.eq(sidecar.statusline(), '', 'statusline before any usage')
    local usage = {
      sessionId = 's1',
      model = 'm',
      promptTokenCount = 471000,
      tokenLimit = 1048576,
      percentUsed = 44.9,
      compressionThreshold = 0.5,
      source = 'api',
    }
    state.usage = usage
    T.eq(sidecar.statusline(), '✦ 45% 471K/1M', 'statusline')
    T.eq(sidecar.statusline_hl(), 'SidecarStatus', 'group below the threshold')
    T.eq(sidecar.statusline({ highlight = true }), '%#SidecarStatus#✦ 45%% 471K/1M%*', 'highlighted')
    T.eq(sidecar.statusline({ escape = true }), '✦ 45%% 471K/1M', 'escaped')
    usage.summaryPreparation = 'preparing'
    T.eq(sidecar.statusline(), '✦ 45% 471K/1M preparing summary', 'statusline while a summary is prepared')
    usage.summaryPreparation = 'ready'
    T.eq(sidecar.statusline(), '✦ 45% 471K/1M summary ready', 'statusline with a summary ready')
    usage.summaryPreparation = 'none'
    T.eq(sidecar.statusline(), '✦ 45% 471K/1M', 'statusline without a preparation')
    usage.autoCompactionPausedUntil = 576716
    T.eq(sidecar.statusline(), '✦ 45% 471K/1M auto-compact paused', 'statusline while an undo pauses auto-compaction')
    local detail = table.concat(require('sidecar.status_detail').lines(usage, nil), '\n')
    T.ok(
      detail:find('Auto-compaction: paused after undo until 576,716 tokens, or until you compress', 1, true),
      ':SidecarStatus says until when auto-compaction is paused: ' .. detail
    )
    usage.autoCompactionPausedUntil = nil
    T.ok(
      not table.concat(require('sidecar.status_detail').lines(usage, nil), '\n'):find('paused', 1, true),
      'no pause line without a pause'
    )
    usage.percentUsed = 50.0
    T.eq(sidecar.statusline_hl(), 'SidecarStatusWarn', 'group at the threshold')
    usage.percentUsed = 95.0
    T.eq(sidecar.statusline_hl(), 'SidecarStatusCritical', 'group at 95%')
    for _, g in ipairs({ 'SidecarStatus', 'SidecarStatusWarn', 'SidecarStatusCritical' }) do
      T.eq(vim.fn.hlexists(g), 1, 'highlight group ' .. g)
    end
    local comp = sidecar.lualine()
    T.eq(comp[1](), '✦ 95%% 471K/1M', 'lualine component text')
    T.eq(comp.color(), 'SidecarStatusCritical', 'lualine component color')
  end)

  T.step('the plugin handles everything the server sends (protocol.lua, generated)', function()
    local protocol = require('sidecar.protocol')
    local handlers = require('sidecar.client').handlers
    T.ok(#protocol.from_server >= 5, 'server-sent methods listed')
    for _, method in ipairs(protocol.from_server) do
      T.ok(type(handlers[method]) == 'function', 'a handler for ' .. method)
    end
    T.eq(protocol.error.busy, -32003, 'error codes')
  end)

  T.step('sidecar/tokenUsage updates the statusline and fires User SidecarStatus', function()
    local fired = 0
    vim.api.nvim_create_autocmd('User', {
      pattern = 'SidecarStatus',
      callback = function()
        fired = fired + 1
      end,
    })
    vim.o.statusline = "%{v:lua.require'sidecar'.statusline()}"
    vim.o.laststatus = 2
    require('sidecar.client').handlers['sidecar/tokenUsage'](nil, {
      sessionId = 's2',
      model = 'm',
      promptTokenCount = 120,
      tokenLimit = 4000,
      percentUsed = 3.0,
      compressionThreshold = 0.5,
      source = 'api',
    }, {})
    T.eq(sidecar.statusline(), '✦ 3% 120/4K', 'statusline after the notification')
    T.eq(state.session_id, 's2', 'session id remembered from sidecar/tokenUsage')
    T.wait(function()
      return fired > 0
    end, 2000, 'User SidecarStatus')
  end)

  T.step('a late, older tokenUsage (lower seq) is dropped; a new server process starts over', function()
    local handler = require('sidecar.client').handlers['sidecar/tokenUsage']
    local function usage(seq, tokens)
      return {
        seq = seq,
        sessionId = 's3',
        model = 'm',
        promptTokenCount = tokens,
        tokenLimit = 4000,
        percentUsed = tokens / 40,
        compressionThreshold = 0.5,
        source = 'api',
      }
    end
    handler(nil, usage(7, 400), {})
    T.eq(sidecar.statusline(), '✦ 10% 400/4K', 'seq 7 taken')
    handler(nil, usage(6, 200), {})
    T.eq(sidecar.statusline(), '✦ 10% 400/4K', 'seq 6 arrived late and is dropped')
    T.eq(status.accept(usage(7, 200)), false, 'a repeat of seq 7 is not taken either')
    T.eq(status.accept(usage(8, 800)), true, 'seq 8 is taken')
    state.usage_seq = nil -- what client.start() does for a new server process
    T.eq(status.accept(usage(1, 120)), true, 'seq 1 of a new server process is taken')
    T.eq(sidecar.statusline(), '✦ 3% 120/4K', 'statusline after the restart')
  end)

  T.step("the help file's 'statusline' example renders with its highlight group", function()
    state.usage.percentUsed = 93.0
    local expr = "%{%v:lua.require'sidecar'.statusline({'highlight':v:true})%}"
    local r = vim.api.nvim_eval_statusline(expr, { highlights = true })
    T.eq(r.str, '✦ 93% 120/4K', 'rendered statusline')
    local groups = {}
    for _, h in ipairs(r.highlights or {}) do
      groups[#groups + 1] = h.group
    end
    T.ok(vim.tbl_contains(groups, 'SidecarStatusWarn'), 'highlight group in the statusline: ' .. vim.inspect(groups))
    r = vim.api.nvim_eval_statusline("%{v:lua.require'sidecar'.statusline()}", {})
    T.eq(r.str, '✦ 93% 120/4K', 'plain %{} form')
    state.usage.percentUsed = 3.0
  end)

  T.step('the statusline marks the embedded fake', function()
    state.usage.backend = 'embedded fake Gemini'
    T.eq(sidecar.statusline(), '✦ 3% 120/4K (fake)', 'the fake is named')
    state.usage.backend = 'Vertex AI (p, us-central1)'
    T.eq(sidecar.statusline(), '✦ 3% 120/4K', 'a real backend is not')
    T.eq(require('sidecar.status').backend(), 'Vertex AI (p, us-central1)', 'backend for :checkhealth')
    state.usage.backend = nil
  end)

  T.step('the statusline says when the next message compacts', function()
    state.usage.compactsAtNextMessage = true
    T.eq(sidecar.statusline(), '✦ 3% 120/4K compacts at next message', 'said')
    state.usage.compactsAtNextMessage = nil
    T.eq(sidecar.statusline(), '✦ 3% 120/4K', 'gone once it does not')
  end)

  T.step('the help file has valid, complete tags', function()
    local doc = vim.fn.fnamemodify(vim.api.nvim_get_runtime_file('doc/sidecar.txt', false)[1], ':p')
    local tmp = vim.fn.tempname()
    vim.fn.mkdir(tmp, 'p')
    vim.fn.writefile(vim.fn.readfile(doc), tmp .. '/sidecar.txt')
    vim.cmd('helptags ' .. vim.fn.fnameescape(tmp))
    local tags = {}
    for _, line in ipairs(vim.fn.readfile(tmp .. '/tags')) do
      tags[line:match('^[^\t]+')] = true
    end
    local n = 0
    for name in pairs(vim.api.nvim_get_commands({})) do
      if name:match('^Sidecar') then
        n = n + 1
        T.ok(tags[':' .. name], 'help tag for :' .. name)
      end
    end
    T.eq(n, 26, 'user commands checked')
    for _, tag in ipairs({
      'sidecar.txt',
      'sidecar-setup',
      'sidecar-statusline',
      'sidecar.statusline()',
      'hl-SidecarStatusWarn',
      'sidecar-ide-context',
      'sidecar-health',
    }) do
      T.ok(tags[tag], 'help tag ' .. tag)
    end
    -- :help sidecar opens the top of the file, not the best partial match (sidecar.state, in the Lua API section)
    local rtp = vim.fn.tempname()
    vim.fn.mkdir(rtp .. '/doc', 'p')
    vim.fn.writefile(vim.fn.readfile(doc), rtp .. '/doc/sidecar.txt')
    vim.cmd('helptags ' .. vim.fn.fnameescape(rtp .. '/doc'))
    vim.opt.runtimepath:prepend(rtp)
    vim.cmd('help sidecar')
    T.eq(vim.fn.expand('%:t') .. ':' .. vim.fn.line('.'), 'sidecar.txt:1', ':help sidecar opens line 1')
    vim.cmd('helpclose')
    vim.opt.runtimepath:remove(rtp)
  end)

  T.step('compaction progress shows in the statusline', function()
    require('sidecar.client').handlers['$/progress'](
      nil,
      { token = 'tok1', value = { kind = 'begin', title = 'Compressing conversation' } },
      { client_id = 0 }
    )
    T.contains(sidecar.statusline(), 'compressing', 'statusline during compaction')
    require('sidecar.client').handlers['$/progress'](
      nil,
      { token = 'tok1', value = { kind = 'end' } },
      { client_id = 0 }
    )
    T.eq(sidecar.statusline(), '✦ 3% 120/4K', 'statusline after compaction progress ended')
  end)

  local ctx = require('sidecar.context')
  local dir = T.workspace({
    ['a.py'] = 'import os\n\ndef main():\n    print("héllo wörld")\n    return 0\n',
    ['b.txt'] = 'alpha\nbeta\ngamma\n',
  })

  T.step('IDE context: real files only, active file first, 1-based cursor', function()
    ctx.enable()
    vim.cmd('edit b.txt')
    T.sleep(20)
    vim.cmd('edit a.py')
    T.feed('3G')
    vim.cmd('enew') -- an unnamed buffer is not a real file
    T.sleep(20)
    vim.cmd('file notes.txt') -- nor is a named buffer without a file on disk
    T.sleep(20)
    vim.cmd('edit sidecar://somewhere') -- nor a URI
    T.sleep(20)
    vim.cmd('enew')
    vim.bo.buftype = 'nofile' -- nor a scratch buffer
    T.sleep(20)
    vim.cmd('buffer a.py')
    T.feed('4G0fh')
    local p = ctx.payload()
    T.eq(#p.openFiles, 2, 'two real files: ' .. vim.inspect(p))
    T.eq(p.openFiles[1].path, dir .. '/a.py', 'active file path is absolute')
    T.eq(p.openFiles[1].isActive, true, 'isActive')
    T.eq(p.openFiles[1].cursor, { line = 4, character = 12 }, 'cursor (1-based line and character)')
    T.eq(p.openFiles[1].selectedText, nil, 'no selection in Normal mode')
    T.eq(p.openFiles[2].path, dir .. '/b.txt', 'other file')
    T.eq(p.openFiles[2].cursor, nil, 'only the active file has a cursor')
    T.ok(type(p.openFiles[1].timestamp) == 'number' and p.openFiles[1].timestamp > 1.6e12, 'timestamp in ms')
    -- Character counts UTF-16 code units: "é" before the cursor is one.
    T.feed('fw')
    T.eq(ctx.payload().openFiles[1].cursor, { line = 4, character = 18 }, 'cursor after a multibyte character')
  end)

  T.step('IDE context: Visual selections (charwise, linewise, blockwise) and ranges', function()
    T.feed('gg0vjjl')
    T.eq(ctx.payload().openFiles[1].selectedText, 'import os\n\nde', 'charwise selection')
    T.feed('<Esc>')
    T.eq(ctx.payload().openFiles[1].selectedText, nil, 'selection cleared after <Esc>')
    T.feed('3GVj')
    T.eq(ctx.payload().openFiles[1].selectedText, 'def main():\n    print("héllo wörld")', 'linewise selection')
    T.feed('<Esc>4G04l<C-v>jll')
    T.eq(ctx.payload().openFiles[1].selectedText, 'pri\nret', 'blockwise selection')
    T.feed('<Esc>')
    -- ":'<,'>" from Visual mode: the exact Visual selection; other ranges: whole lines.
    T.feed('4Gfhve')
    T.feed('<Esc>')
    ctx.set_selection_from_range(4, 4)
    T.eq(ctx.payload().openFiles[1].selectedText, 'héllo', "selection from '<,'>")
    ctx.set_selection_from_range(1, 2)
    T.eq(ctx.payload().openFiles[1].selectedText, 'import os\n', 'selection from a line range')
    T.feed('j')
    T.eq(ctx.payload().openFiles[1].selectedText, nil, 'range selection cleared by a cursor move')
  end)

  T.step('IDE context: closed buffers leave the list', function()
    vim.cmd('bdelete ' .. vim.fn.bufnr('b.txt'))
    T.sleep(20)
    local p = ctx.payload()
    T.eq(#p.openFiles, 1, 'one file after :bdelete')
    T.eq(p.openFiles[1].path, dir .. '/a.py', 'remaining file')
  end)

  T.step('IDE context is debounced (50 ms) and only sent when it changed', function()
    local client = require('sidecar.client')
    local sent = {}
    local orig_notify, orig_running = client.notify, client.running
    client.running = function()
      return true
    end
    client.notify = function(method, params)
      sent[#sent + 1] = { method = method, params = params, at = vim.loop.now() }
      return true
    end
    ctx.reset_sent()
    local t0 = vim.loop.now()
    -- Three cursor moves in a burst (synchronously, well inside 50 ms).
    for _, line in ipairs({ 1, 2, 3 }) do
      vim.api.nvim_win_set_cursor(0, { line, 0 })
      vim.api.nvim_exec_autocmds('CursorMoved', {})
    end
    T.eq(#sent, 0, 'nothing sent synchronously')
    T.wait(function()
      return #sent >= 1
    end, 2000, 'a debounced sidecar/ideContext')
    T.sleep(150)
    T.eq(#sent, 1, 'one notification for a burst of moves')
    T.eq(sent[1].method, 'sidecar/ideContext', 'method')
    T.eq(sent[1].params.openFiles[1].cursor.line, 3, 'the last cursor position')
    T.ok(sent[1].at - t0 >= 50, 'sent after the debounce delay')
    T.feed('jk')
    T.sleep(150)
    T.eq(#sent, 1, 'nothing sent when the context did not change')
    T.ok(ctx.flush(true), 'flush(true) sends anyway')
    T.eq(#sent, 2, 'forced send')
    client.notify, client.running = orig_notify, orig_running
  end)

  T.step('IDE context: a newer event stops a flush the timer already handed over (a busy loop)', function()
    local client = require('sidecar.client')
    local sent = {}
    local orig_notify, orig_running = client.notify, client.running
    client.running = function()
      return true
    end
    client.notify = function(method, params)
      sent[#sent + 1] = { params = params, at = vim.loop.now() }
      return true
    end
    ctx.flush(true)
    sent = {}
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    vim.api.nvim_exec_autocmds('CursorMoved', {})
    -- The loop is busy past the debounce delay: when it runs again, the debounce timer and this coroutine's
    -- resume are both handed to vim.schedule, the coroutine first.
    vim.loop.sleep(80)
    T.sleep(0)
    local t_last = vim.loop.now()
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    vim.api.nvim_exec_autocmds('CursorMoved', {})
    T.wait(function()
      return #sent >= 1
    end, 5000, 'the debounced sidecar/ideContext')
    T.eq(sent[1].params.openFiles[1].cursor.line, 2, 'the last cursor position')
    T.ok(
      sent[1].at - t_last >= 50,
      'sent the debounce delay after the last event, not at once: ' .. (sent[1].at - t_last) .. ' ms'
    )
    client.notify, client.running = orig_notify, orig_running
  end)

  --- A question as on Neovim 0.11 (the handler runs in a coroutine), answered with :SidecarConfirm.
  local function confirmed(params)
    local confirm = require('sidecar.confirm')
    local result
    local c = coroutine.create(function()
      result = confirm.handle(nil, params)
    end)
    assert(coroutine.resume(c))
    T.eq(result, nil, 'waiting for :SidecarConfirm')
    confirm.answer()
    return result
  end

  T.step('tool confirmation: a synchronous vim.ui.select', function()
    local confirm = require('sidecar.confirm')
    local orig = vim.ui.select
    local seen
    vim.ui.select = function(items, opts, on_choice)
      seen = { items = items, prompt = opts.prompt, label = opts.format_item(items[2]) }
      on_choice(items[2])
    end
    local r = confirmed({
      turnId = 't',
      callId = 'c',
      toolName = 'write_file',
      args = {},
      description = 'Write 3 lines to a.py',
      diff = '--- a\n+++ b\n',
    })
    vim.ui.select = orig
    T.eq(r, { decision = 'allowAlways' }, 'decision')
    T.contains(seen.prompt, 'write_file', 'prompt names the tool')
    T.contains(seen.prompt, 'Write 3 lines', 'prompt has the description')
    T.eq(seen.label, 'Allow always', 'item label')
  end)

  T.step('tool confirmation: an MCP call also offers allow always for its server', function()
    local confirm = require('sidecar.confirm')
    local orig = vim.ui.select
    local labels = {}
    vim.ui.select = function(items, opts, on_choice)
      for _, item in ipairs(items) do
        labels[#labels + 1] = opts.format_item(item)
      end
      on_choice(items[3])
    end
    local r = confirmed({
      turnId = 't',
      callId = 'c',
      toolName = 'mcp_calc_add',
      args = { a = 1 },
      description = 'MCP server calc: add {"a": 1}',
      mcpServer = 'calc',
    })
    vim.ui.select = orig
    T.eq(r, { decision = 'allowAlwaysServer' }, 'decision')
    T.eq(labels, { 'Allow', 'Allow always', 'Allow always for this server (calc)', 'Deny' }, 'labels')
    T.eq(#confirm.choices_for({ toolName = 'write_file' }), 3, 'no server choice for a built-in tool')
    local function decisions(params)
      local out = {}
      for _, c in ipairs(confirm.choices_for(params)) do
        out[#out + 1] = c.decision
      end
      return out
    end
    T.eq(
      decisions({ toolName = 'write_file', askReason = 'this file instructs the agent' }),
      { 'allow', 'deny' },
      'a call that asks every time offers no allow always'
    )
    T.eq(
      decisions({ toolName = 'mcp_calc_add', mcpServer = 'calc', askReason = 'a protected path' }),
      { 'allow', 'deny' },
      'nor an allow for its server'
    )
  end)

  T.step('MCP servers: lines, summary and the checkhealth section', function()
    local mcp = require('sidecar.mcp')
    local servers = {
      { name = 'calc', status = 'ready', tools = { 'mcp_calc_add', 'mcp_calc_mul' } },
      { name = 'docs', status = 'ready', tools = {} },
      { name = 'bad', status = 'failed', tools = {}, error = 'exited at once: boom' },
    }
    T.eq(mcp.summary(servers), 'MCP: 2 ready, 1 failed', 'summary')
    T.eq(mcp.summary({}), nil, 'no summary without servers')
    local lines = mcp.lines(servers)
    T.eq(lines[1], 'calc: ready, 2 tools (mcp_calc_add, mcp_calc_mul)', 'a ready server with its tools')
    T.eq(lines[3], 'bad: failed, 0 tools', 'a failed server')
    T.eq(lines[4], '  error: exited at once: boom', 'its error')
    local seen = {}
    local h = {}
    for _, kind in ipairs({ 'ok', 'info', 'warn', 'error' }) do
      h[kind] = function(msg, advice)
        seen[#seen + 1] = { kind, msg, advice }
      end
    end
    local state = require('sidecar.state')
    local saved = state.mcp_servers
    state.mcp_servers = servers
    require('sidecar.health').mcp_section(h)
    state.mcp_servers = saved
    T.eq(seen[1][2], 'MCP: 2 ready, 1 failed', 'the count line')
    T.eq(seen[2][1], 'ok', 'a ready server is ok')
    T.eq(seen[4][1], 'error', 'a failed server is an error')
    T.contains(seen[4][2], 'boom', 'with its reason')
    T.contains(seen[4][3][1], ':SidecarMcp restart bad', 'and the restart advice')
  end)

  -- ---- MCP: :SidecarMcp disable/enable/prompt completion and the prompt lines ----
  T.step('MCP: :SidecarMcp completes subcommands, servers by state, prompts and their arguments', function()
    local mcp = require('sidecar.mcp')
    local state = require('sidecar.state')
    local saved_servers, saved_prompts = state.mcp_servers, state.mcp_prompts
    state.mcp_servers = {
      { name = 'calc', status = 'ready', tools = {} },
      { name = 'docs', status = 'disabled', tools = {} },
    }
    state.mcp_prompts = {
      {
        name = 'review',
        server = 'rev',
        prompt = 'review',
        description = 'Ask for a review.',
        arguments = { { name = 'code', required = true }, { name = 'focus' } },
      },
    }
    T.eq(mcp.complete('', 'SidecarMcp '), { 'restart', 'disable', 'enable', 'prompt' }, 'subcommands')
    T.eq(mcp.complete('d', 'SidecarMcp d'), { 'disable' }, 'a subcommand by its start')
    T.eq(mcp.complete('', 'SidecarMcp disable '), { 'calc' }, 'disable: the enabled servers')
    T.eq(mcp.complete('', 'SidecarMcp enable '), { 'docs' }, 'enable: the disabled ones')
    T.eq(mcp.complete('', 'SidecarMcp restart '), { 'calc' }, 'restart: not a disabled one')
    T.eq(mcp.complete('r', 'SidecarMcp prompt r'), { 'review' }, 'prompt names')
    T.eq(mcp.complete('', 'SidecarMcp prompt review x.py '), { '--code=', '--focus=' }, "a prompt's arguments")
    T.eq(mcp.complete('--f', 'SidecarMcp prompt review --f'), { '--focus=' }, 'an argument by its start')
    T.eq(mcp.prompt_lines(state.mcp_prompts), { 'review (rev): code [focus] — Ask for a review.' }, 'prompt lines')
    T.eq(mcp.prompt_lines({}), { 'MCP: no ready server offers prompts' }, 'no prompts')
    state.mcp_servers, state.mcp_prompts = saved_servers, saved_prompts
  end)
  -- ---- end MCP ----

  T.step('tool confirmation: the whole command is shown, never cut', function()
    local confirm = require('sidecar.confirm')
    local command = "echo '" .. string.rep('harmless ', 60) .. "'; touch PAYLOAD"
    local prompt = confirm.prompt({ toolName = 'run_shell_command', description = 'Run `' .. command .. '` in .' })
    T.contains(prompt, command, 'the full command, payload included')
  end)

  T.step('tool confirmation: the question waits for :SidecarConfirm and reads no key by itself (0.11)', function()
    local confirm = require('sidecar.confirm')
    local orig = vim.ui.select
    local asked = 0
    vim.ui.select = function(items, _, on_choice)
      asked = asked + 1
      T.eq(vim.fn.getchar(0), 0, 'the keys typed before the choices were dropped')
      vim.defer_fn(function()
        on_choice(items[1])
      end, 30) -- an asynchronous picker
    end
    -- As on Neovim 0.11 (server requests run in a coroutine): the answer comes when the user gives it.
    local result
    local c = coroutine.create(function()
      result = confirm.handle(nil, { toolName = 'run_shell_command', description = 'Run `touch X` in .' })
    end)
    assert(coroutine.resume(c))
    T.eq(asked, 0, 'nothing asked by itself')
    T.eq(#confirm.waiting, 1, 'the question waits')
    T.contains(require('sidecar.chat').text(), ':SidecarConfirm', 'the chat says how to answer')
    vim.api.nvim_feedkeys('1\r', 'n', false) -- typed by the user in another buffer, not yet read
    T.eq(result, nil, 'no answer before the user chose to answer')
    vim.cmd('SidecarConfirm')
    T.wait(function()
      return result
    end, 2000, 'the answer')
    T.eq(asked, 1, 'asked once, when the user chose to answer')
    T.eq(result, { decision = 'allow' }, 'the decision')
    T.eq(#confirm.waiting, 0, 'nothing waits any more')
    vim.ui.select = function(_, _, on_choice)
      on_choice(nil)
    end
    c = coroutine.create(function()
      result = confirm.handle(nil, { toolName = 'x' })
    end)
    result = nil
    assert(coroutine.resume(c))
    confirm.answer()
    T.eq(result, { decision = 'deny' }, 'dismissed = deny')
    -- the question of a sidecar that has exited is dropped, not asked
    asked = 0
    vim.ui.select = function()
      asked = asked + 1
    end
    c = coroutine.create(function()
      confirm.handle(nil, { toolName = 'gone_tool' }, { client_id = 424242 })
    end)
    assert(coroutine.resume(c))
    confirm.answer()
    T.eq({ asked, #confirm.waiting }, { 0, 0 }, 'not asked, not waiting')
    T.contains(require('sidecar.chat').text(), 'gone_tool: not answered (its sidecar has exited)', 'told')
    vim.ui.select = orig
  end)

  T.step("tool confirmation: before 0.11 the answer is sent later, through the client's own response", function()
    local confirm = require('sidecar.confirm')
    local orig = vim.ui.select
    local asked = 0
    vim.ui.select = function(items, _, on_choice)
      asked = asked + 1
      on_choice(items[#items])
    end
    -- As Neovim 0.7/0.8's rpc runs a server request: a scheduled function whose upvalues are the decoded message and
    -- the module's send_response; it sends what the handler returns.
    local sent = {}
    local send_response = function(id, err, result)
      sent[#sent + 1] = { id = id, err = err, result = result }
    end
    local decoded = { id = 7, method = 'sidecar/confirmToolCall' }
    local function server_request()
      local result = confirm.handle(nil, { toolName = 'write_file', description = 'Write a.py' })
      send_response(decoded.id, nil, result)
    end
    vim.schedule(server_request) -- on the main thread, as Neovim runs it (no coroutine)
    T.wait(function()
      return #confirm.waiting == 1
    end, 2000, 'the question waiting')
    T.eq(asked, 0, 'nothing asked by itself')
    T.eq(sent, {}, 'no answer sent yet')
    send_response(8, nil, { other = true }) -- another response goes out as usual
    T.eq(sent, { { id = 8, result = { other = true } } }, 'only the placeholder was dropped')
    confirm.answer()
    T.eq(sent[2], { id = 7, result = { decision = 'deny' } }, "the user's answer, for the request asked")
    -- 0.9/0.10: the rpc client is an object whose send_response is a method.
    local Client = {}
    Client.__index = Client
    function Client:send_response(id, err, result)
      sent[#sent + 1] = { id = id, err = err, result = result }
    end
    local self = setmetatable({}, Client)
    local server_request9
    do
      local decoded = { id = 9 } -- luacheck: ignore 421 (the name the rpc module uses)
      server_request9 = function()
        local result = confirm.handle(nil, { toolName = 'write_file' })
        self:send_response(decoded.id, nil, result)
      end
    end
    vim.schedule(server_request9)
    T.wait(function()
      return #confirm.waiting == 1
    end, 2000, 'the question waiting (0.9)')
    T.eq(#sent, 2, 'no answer sent yet (0.9)')
    vim.ui.select = function(items, _, on_choice)
      on_choice(items[1])
    end
    confirm.answer()
    T.eq(sent[3], { id = 9, result = { decision = 'allow' } }, 'the answer (0.9)')
    self:send_response(10, nil, {})
    T.eq(sent[4].id, 10, 'the method works as before')
    -- A client built otherwise (nothing found on the stack): asked at once, the typeahead dropped first.
    local seen
    vim.ui.select = function(items, _, on_choice)
      seen = vim.fn.getchar(0)
      on_choice(items[1])
    end
    local waited
    vim.schedule(function()
      vim.api.nvim_feedkeys('3\r', 'n', false)
      waited = confirm.handle(nil, { toolName = 'x' })
    end)
    T.wait(function()
      return waited
    end, 2000, 'the answer asked at once')
    T.eq(waited, { decision = 'allow' }, 'the decision')
    T.eq(seen, 0, 'no key typed before was left for the choices')
    vim.ui.select = orig
  end)

  T.step('tool confirmation: a question that wraps leaves the whole diff in the float', function()
    local view = require('sidecar.confirm_view')
    local question = 'sidecar: allow tool write_file? ' .. string.rep('Overwrite GEMINI.md with the notes ', 5)
    local diff = '--- a/GEMINI.md\n+++ b/GEMINI.md\n@@ -1,2 +1,3 @@\n # Notes\n keep\n+the added line\n'
    local lines = view.lines({ diff = diff }, question)
    local close = view.open({ diff = diff }, question)
    local float
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= '' then
        float = w
      end
    end
    T.ok(float, 'the float is open')
    local width = vim.api.nvim_win_get_width(float)
    T.ok(vim.fn.strdisplaywidth(question) > width, 'the question wraps in the float')
    local rows = 0
    for _, l in ipairs(lines) do
      rows = rows + math.max(math.ceil(vim.fn.strdisplaywidth(l) / width), 1)
    end
    T.eq(vim.api.nvim_win_get_height(float), rows, 'one row per screen line, wrapped ones too')
    T.eq(lines[#lines], '+the added line', 'the added line is the last one')
    close()
  end)

  T.step('an edit planned on an older version of its buffer is refused, with a reason the agent reads', function()
    local edits = require('sidecar.edits')
    local path = vim.fn.tempname() .. '-versioned.txt'
    vim.fn.writefile({ 'one', 'two' }, path)
    local buf = vim.fn.bufadd(path)
    vim.fn.bufload(buf)
    local uri = vim.uri_from_fname(path)
    local versions = vim.lsp.util.buf_versions
    local before = rawget(versions, buf)
    rawset(versions, buf, 5) -- what Neovim last sent the server (didChange); the server planned on version 3
    local function edit(version)
      return {
        documentChanges = {
          {
            textDocument = { uri = uri, version = version },
            edits = {
              {
                range = { start = { line = 0, character = 0 }, ['end'] = { line = 1, character = 0 } },
                newText = 'ONE\n',
              },
            },
          },
        },
      }
    end
    local result = edits.handler(nil, { edit = edit(3) }, { client_id = 1 }, {})
    T.eq(result.applied, false, 'refused')
    T.contains(result.failureReason, 'changed in the editor after the agent read it', 'the reason in words')
    T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { 'one', 'two' }, 'the buffer is untouched')
    T.eq(edits.stale_document(edit(5)), nil, 'the current version is applied')
    T.eq(edits.stale_document(edit(nil)), nil, 'an edit naming no version is applied')
    rawset(versions, buf, before)
    vim.api.nvim_buf_delete(buf, { force = true })
  end)

  T.step('an append at the end of a file adds its lines and no empty one (0.11 added one)', function()
    local edits = require('sidecar.edits')
    for _, case in ipairs({ { { 'a', 'b' }, { 'a', 'b', 'c', 'd' } }, { { 'a', 'bé' }, { 'a', 'bé', 'c', 'd' } } }) do
      local path = vim.fn.tempname() .. '-append.txt'
      vim.fn.writefile(case[1], path) -- "a\nb\n": the server appends at line 2, just past the end
      local at = { line = 2, character = 0 }
      local edit = {
        documentChanges = {
          {
            textDocument = { uri = vim.uri_from_fname(path) },
            edits = { { range = { start = at, ['end'] = at }, newText = 'c\nd\n' } },
          },
        },
      }
      vim.lsp.util.apply_workspace_edit(edits.appends_at_end(edit), 'utf-16')
      local buf = vim.fn.bufnr(path)
      T.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), case[2], 'the lines after the append')
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent write')
      end)
      T.eq(vim.fn.readfile(path), case[2], 'and on disk once saved')
      vim.api.nvim_buf_delete(buf, { force = true })
    end
  end)

  T.step('MCP notices: "sidecar:" once, the failure with its cause in sight, "1 tool"', function()
    local state = require('sidecar.state')
    local client = require('sidecar.client')
    local saved = { cfg = state.cfg, status = state.status, request = client.request, notify = vim.notify }
    state.cfg = state.cfg or require('sidecar.config').resolve({})
    state.status = 'running'
    local said = {}
    vim.notify = function(msg)
      said[#said + 1] = msg
    end
    client.request = function(_, _, cb)
      cb({ code = -32603, message = 'spawn npx ENOENT' }, nil)
    end
    local ok, err = pcall(function()
      require('sidecar.mcp').run('restart files', function() end)
      require('sidecar.mcp').run('bogus', function() end)
    end)
    state.cfg, state.status, client.request, vim.notify = saved.cfg, saved.status, saved.request, saved.notify
    T.ok(ok, tostring(err))
    for _, msg in ipairs(said) do
      T.ok(not msg:find('sidecar: sidecar:', 1, true), 'one "sidecar:" prefix: ' .. msg)
    end
    T.contains(said[1], 'files', 'the server named')
    T.contains(said[1], 'spawn npx ENOENT', "the server's error in sight")
    local lines = require('sidecar.mcp').lines({ { name = 'files', status = 'ready', tools = { 'read' } } })
    T.contains(lines[1], '1 tool (read)', 'one tool')
  end)

  T.step('times read one local way everywhere: the transcript as the pickers', function()
    local pickers = require('sidecar.pickers')
    local iso = '2026-11-25T03:36:22.123Z'
    local lines = require('sidecar.transcript').full_lines({
      sessionId = 's',
      entries = {
        { type = 'message', id = '1', time = iso, role = 'user', kind = 'user', text = 'hi' },
      },
    })
    local text = table.concat(lines, '\n')
    T.contains(text, '## You  ' .. pickers.local_time(iso), 'the local time, as in the pickers')
    T.ok(not text:find('T03:36', 1, true), 'no raw UTC time\n' .. text)
  end)

  T.step('the chat hint points at a `> ` line that is drawn before Insert mode', function()
    local chat = require('sidecar.chat')
    local buf = chat.ensure()
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    T.contains(table.concat(lines, '\n'), 'on the `> ` line below', 'the hint')
    T.eq(lines[#lines], '> ', 'the `> ` line is there, below the hint')
    T.eq(chat.input(), '', 'and the input is empty')
    T.eq(vim.api.nvim_get_mode().mode, 'n', 'in Normal mode')
  end)

  T.step("a tool's outcome line comes below its question and diff, not above them", function()
    local chat = require('sidecar.chat')
    chat.ensure()
    chat.on_tool_call({ turnId = 'turn-q', callId = 'c-q', name = 'replace', status = 'pending', summary = 'a.txt' })
    chat.note('sidecar: allow tool replace? Edit a.txt\n```diff\n+the added line\n```')
    chat.note('tool replace: allow')
    chat.on_tool_call({ turnId = 'turn-q', callId = 'c-q', name = 'replace', status = 'done', summary = 'a.txt' })
    local text = chat.text()
    local asked = text:find('allow tool replace?', 1, true)
    local added = text:find('+the added line', 1, true)
    local outcome = text:find('✓ tool replace: done', 1, true)
    T.ok(asked and added and outcome, 'all shown\n' .. text)
    T.ok(outcome > added, 'the outcome after the diff\n' .. text)
    local _, lines = text:gsub('tool replace: done', '')
    T.eq(lines, 1, 'the outcome once')
  end)

  T.step('a note of several lines (the MCP servers) is not italicised line by line; a one-line remark is', function()
    local chat = require('sidecar.chat')
    local list = chat.note_lines('files: ready, 1 tool (read)\nweb: failed, 0 tools\n  spawn npx ENOENT')
    T.eq(list, { 'files: ready, 1 tool (read)', 'web: failed, 0 tools', '  spawn npx ENOENT', '' }, 'as they are')
    T.eq(chat.note_lines('sidecar restarted'), { '_sidecar restarted_', '' }, 'a remark in italics')
    T.eq(
      chat.note_lines('allow tool replace?\n```diff\n+x\n```'),
      { '_allow tool replace?_', '```diff', '+x', '```', '' },
      'a question above its diff'
    )
  end)

  T.step('transcripts render messages and compactions', function()
    local tr = require('sidecar.transcript')
    T.eq(tr.thousands(9120), '9,120', 'thousands')
    T.eq(tr.thousands(1234567), '1,234,567', 'thousands (millions)')
    local t = {
      sessionId = 's9',
      entries = {
        { type = 'message', id = '1', time = 't1', role = 'user', kind = 'user', text = 'hi' },
        { type = 'message', id = '2', time = 't2', role = 'model', kind = 'model', text = 'hello\nthere' },
        {
          type = 'compaction',
          id = '3',
          time = 't3',
          trigger = 'manual',
          status = 'COMPRESSED',
          originalTokenCount = 9120,
          newTokenCount = 2310,
          undone = true,
        },
        { type = 'message', id = '4', time = 't4', role = 'user', kind = 'ideContext', text = '{}' },
      },
    }
    local full = table.concat(tr.full_lines(t), '\n')
    T.contains(full, '## You  t1\n\nhi', 'user entry')
    T.contains(full, 'hello\nthere', 'model entry')
    T.contains(full, 'compaction (manual) COMPRESSED: 9,120 → 2,310 tokens (undone)', 'compaction entry')
    T.contains(full, '### IDE context', 'ideContext entry')
    local chat = table.concat(tr.chat_lines(t), '\n')
    T.ok(not chat:find('IDE context', 1, true), 'the chat view leaves IDE context out')
  end)

  T.step('resumed tool calls are named from toolCalls; the transcript has the compaction snapshot', function()
    local tr = require('sidecar.transcript')
    local call = {
      type = 'message',
      id = 'm4',
      time = 't',
      role = 'model',
      kind = 'toolCall',
      text = 'Updating the parser.\n→ replace({"file_path":"/p/csv.py"})\n→ run_shell_command({"command":"pytest"})',
      toolCalls = { { name = 'replace' }, { name = 'run_shell_command' } },
    }
    local chat = table.concat(tr.chat_lines({ entries = { call } }), '\n')
    T.contains(chat, '⚙ replace\n\n⚙ run_shell_command', 'cards named after the tools')
    T.contains(chat, 'Updating the parser.', "the model's words stay")
    T.ok(not chat:find('⚙ Updating', 1, true), 'never the first word of the text')
    call.toolCalls = nil -- an older server: the → lines
    T.contains(table.concat(tr.chat_lines({ entries = { call } }), '\n'), '⚙ replace', 'names from the → lines')
    local full = table.concat(
      tr.full_lines({
        sessionId = 's',
        entries = {
          {
            type = 'compaction',
            id = 'c1',
            time = 't',
            trigger = 'auto',
            status = 'COMPRESSED',
            originalTokenCount = 10,
            newTokenCount = 5,
            undone = false,
            snapshot = '<state_snapshot>\n<overall_goal>CSV</overall_goal>\n</state_snapshot>',
          },
        },
      }),
      '\n'
    )
    T.contains(full, '<overall_goal>CSV</overall_goal>', 'the snapshot text')
  end)

  -- :SidecarRewind! (rewind with files) -----------------------------------------------------------
  T.step('rewind with files: the float lists the files by group, relative to the working directory', function()
    local rf = require('sidecar.rewind_files')
    local plan = {
      restored = { '/w/src/a.py', '/elsewhere/b.py' },
      removed = { '/w/new.txt' },
      conflicts = { { path = '/w/c.py', reason = "changed since the agent's edit: 2 lines added" } },
      skipped = { { path = '/w/big.bin', reason = 'binary' } },
    }
    T.eq(rf.lines(plan, '/w'), {
      'Put back as they were before your message:',
      '  src/a.py',
      '  /elsewhere/b.py',
      '',
      'Removed (the agent created them):',
      '  new.txt',
      '',
      "Changed since the agent's edit (kept unless you overwrite them):",
      "  c.py — changed since the agent's edit: 2 lines added",
      '',
      'Cannot be restored:',
      '  big.bin — binary',
    }, 'lines')
    T.eq(rf.short_path('/w2/a', '/w'), '/w2/a', 'a folder with the same prefix is not a parent')
    local many = {}
    for i = 1, rf.LIST_MAX + 2 do
      many[i] = '/w/f' .. i
    end
    local lines = rf.lines({ restored = many }, '/w')
    T.eq(lines[#lines], '  … and 2 more', 'a long list is cut')
    T.ok(rf.touches(plan) and not rf.touches({ restored = {}, removed = {}, conflicts = {}, skipped = {} }), 'touches')
  end)

  T.step('rewind with files: conflicts are kept unless the user chooses to overwrite them', function()
    local rf = require('sidecar.rewind_files')
    local q, items = rf.choices({ restored = { '/w/a' }, conflicts = { { path = '/w/c', reason = 'r' } } })
    T.eq(q, "1 file changed since the agent's edit. Rewind and restore the files?", 'question')
    T.eq(
      vim.tbl_map(function(i)
        return { i.label, i.force or false, i.cancel or false }
      end, items),
      {
        { 'Restore others, keep conflicting files', false, false },
        { 'Overwrite my changes too', true, false },
        { 'Cancel', false, true },
      },
      'the first choice keeps them; only the second forces'
    )
    q, items = rf.choices({ restored = { '/w/a' }, removed = { '/w/b' } })
    T.eq(q, 'Rewind the conversation and restore 2 files?', 'no conflict')
    T.eq(items[1].force, false, 'never force without a conflict')
  end)

  T.step('rewind with files: the note names the message and what happened to each file', function()
    local rf = require('sidecar.rewind_files')
    local note = rf.summary('Fix the parser please', {
      restored = { '/w/a.py' },
      removed = { '/w/n.txt', '/w/m.txt' },
      conflicts = { { path = '/w/c.py', reason = 'r' } },
      skipped = { { path = '/w/big', reason = 'over 1 MB' } },
    }, '/w')
    T.eq(
      note,
      'rewound to before “Fix the parser please”: the model no longer sees it or anything after it; '
        .. "restored a.py; removed n.txt, m.txt (the agent had created them); kept c.py (changed since the agent's edit); "
        .. 'could not restore big (over 1 MB)',
      'note'
    )
    T.contains(
      rf.summary('x', { restored = {}, removed = {}, conflicts = {}, skipped = {} }, '/w'),
      'no file needed restoring',
      'nothing to restore'
    )
    T.ok(not rf.summary('x', {}, '/w', true):find('checkpointing is off', 1, true), 'on: not said')
    T.contains(
      rf.summary('x', {}, '/w', false),
      'no file needed restoring; checkpointing is off (setting checkpointing)',
      'off: said'
    )
  end)

  -- memory (the context files) ---------------------------------------------------------------------
  T.step('memory: summary, per-file contents, the show buffer, memoryChanged, :SidecarStatus, completion', function()
    local memory = require('sidecar.memory')
    local wrap = function(p, body)
      return '--- Context from: ' .. p .. ' ---\n' .. body .. '\n--- End of Context from: ' .. p .. ' ---'
    end
    local m = {
      files = {
        { path = '/h/.gemini/GEMINI.md', scope = 'global', tokens = 12 },
        { path = '/w/GEMINI.md', scope = 'project', tokens = 1200 },
        { path = '/w/AGENTS.md', scope = 'project', tokens = 22 },
      },
      text = table.concat({
        wrap('/h/.gemini/GEMINI.md', 'Answer in English.'),
        wrap('/w/GEMINI.md', '# Project\n\nUse tabs.'),
        wrap('/w/AGENTS.md', ''),
      }, '\n\n'),
      tokens = 1234,
      skippedProjectFiles = 0,
    }
    T.eq(memory.summary(m), 'Memory: 3 files (1,234 tokens)', 'summary')
    T.eq(
      memory.summary({ files = {}, text = '', tokens = 0, skippedProjectFiles = 2 }),
      'Memory: no context files; 2 project files not loaded',
      'summary with skipped files'
    )
    local c = memory.contents(m.text)
    T.eq(c['/w/GEMINI.md'], '# Project\n\nUse tabs.', 'a file with a heading')
    T.eq(c['/w/AGENTS.md'], '', 'an empty file')
    T.eq(memory.contents('--- Context from: /a ---\nno end'), {}, 'no end marker: nothing guessed')
    local text = table.concat(memory.lines(m), '\n')
    T.contains(text, '3 context files, 1,234 tokens', 'the header')
    T.contains(text, '2. /w/GEMINI.md — project, 1,200 tokens', 'a file with scope and tokens')
    T.contains(text, '## 2. /w/GEMINI.md\n\n# Project\n\nUse tabs.', 'its content')
    T.ok(text:find('## 1.', 1, true) < text:find('## 2.', 1, true), 'in order')
    T.ok(not text:find('The text the model gets', 1, true), 'no duplicate text when every file is found')
    T.contains(
      table.concat(memory.lines({ files = m.files, text = 'other', tokens = 1 }), '\n'),
      '## The text the model gets\n\nother',
      'the whole text when markers are missing'
    )

    -- sidecar/memoryChanged: kept in the state, a line of :SidecarStatus
    local skipped = {
      files = { m.files[1] },
      text = m.text,
      tokens = 12,
      skippedProjectFiles = 2,
      skippedReason = 'the workspace is not trusted.',
    }
    require('sidecar.client').handlers[require('sidecar.protocol').method.memoryChanged](
      nil,
      skipped,
      { client_id = 0 }
    )
    T.eq(state.memory, skipped, 'kept')
    T.eq(memory.skipped_text(skipped), '2 project memory files were not loaded: the workspace is not trusted', 'why')
    T.contains(
      table.concat(memory.lines(skipped), '\n'),
      '> Not loaded: 2 project memory files were not loaded',
      'in the buffer'
    )
    state.usage = {
      sessionId = 's1',
      model = 'm',
      promptTokenCount = 10,
      tokenLimit = 100,
      percentUsed = 10,
      compressionThreshold = 0.5,
      source = 'api',
    }
    T.contains(
      table.concat(require('sidecar.status_detail').lines(state.usage, nil), '\n'),
      'Memory: 1 file (12 tokens); 2 project files not loaded',
      ':SidecarStatus has the memory line'
    )
    state.memory, state.usage = nil, nil

    T.eq(memory.complete('', 'SidecarMemory '), { 'show', 'refresh', 'add' }, 'subcommands')
    T.eq(memory.complete('r', 'SidecarMemory r'), { 'refresh' }, 'a subcommand completed')
    T.eq(memory.complete('', 'SidecarMemory add '), { '--global', '--project' }, "add's options")
    T.eq(memory.complete('--p', 'SidecarMemory add --p'), { '--project' }, 'an option completed')
    T.eq(memory.complete('', 'SidecarMemory show '), {}, 'show takes nothing')
  end)

  T.step('client.call tells a failed request in words and hands the error on; an answer goes to on_result', function()
    local client, ui = require('sidecar.client'), require('sidecar.ui')
    local told, orig_tell, orig_status = {}, ui.tell, state.status
    ui.tell = function(msg, level)
      told[#told + 1] = { msg = msg, level = level }
    end
    state.status = 'stopped'
    local got, answered = nil, false
    client.call('pin', 'sidecar/pin', { text = 'x' }, function(err)
      got = err
    end, function()
      answered = true
    end)
    T.wait(function()
      return got ~= nil
    end, 5000, 'the callback with the error')
    ui.tell, state.status = orig_tell, orig_status
    T.ok(not answered, 'no answer to handle')
    T.eq(#told, 1, 'told once')
    T.eq(told[1].msg, 'pin: the sidecar is not running (stopped)', 'in words, naming what was asked')
    T.eq(told[1].level, vim.log.levels.ERROR, 'as an error')
    T.eq(got.message, 'the sidecar is not running (stopped)', 'the error handed on')
  end)

  T.step('a shortened MCP failure notice names the server and starts its error; other parentheses are kept', function()
    local ui = require('sidecar.ui')
    local failure = "MCP server 'broken' (/home/someone/.local/share/venvs/tools/bin/python3) failed: it exited "
      .. 'with code 1 (cannot open the database). Its last output on stderr:\nTraceback (most recent call last):'
    local line, shortened = ui.notice(failure, 80)
    T.ok(shortened, 'too long for the command line')
    T.contains(line, "MCP server 'broken' failed: it exited", 'the name and the start of the error')
    T.ok(vim.fn.strdisplaywidth(line) <= 80, 'within the width: ' .. line)
    local session = 'Session “Fix the parser and the tests that check it” (3f2a9c1e) was moved to the trash; '
      .. 'it can be restored for 30 days.'
    line = ui.notice(session, 120)
    T.contains(line, '(3f2a9c1e)', 'a session id in parentheses is kept')
    local quota = 'Gemini API: quota exceeded (429 RESOURCE_EXHAUSTED): try again in a minute, or use another key'
    line = ui.notice(quota, 100)
    T.contains(line, '(429', 'an error code in parentheses is kept')
  end)
end)
