-- sidecar.nvim commands. Nothing starts until require('sidecar').setup() or a :Sidecar command.
if vim.g.loaded_sidecar then
  return
end
vim.g.loaded_sidecar = true

if vim.fn.has('nvim-0.7') == 0 then
  vim.api.nvim_err_writeln('sidecar.nvim needs Neovim 0.7 or newer')
  return
end

-- :help sidecar needs doc/tags, which the repository does not ship (it is generated): make it once, when missing.
do
  local doc = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h') .. '/doc'
  if vim.fn.filereadable(doc .. '/tags') == 0 and vim.fn.filewritable(doc) == 2 then
    pcall(vim.cmd, 'silent! helptags ' .. vim.fn.fnameescape(doc))
  end
end

local function cmd(name, fn, opts)
  vim.api.nvim_create_user_command(name, function(args)
    fn(args)
  end, opts)
end

local function s()
  return require('sidecar')
end

cmd('SidecarChat', function()
  s().chat()
end, { desc = 'Open the sidecar chat buffer' })

cmd('SidecarSend', function(a)
  s().send(a.args, { range = a.range, line1 = a.line1, line2 = a.line2 })
end, { nargs = '+', range = true, desc = 'Send a message (a range or Visual selection goes along as selected text)' })

cmd('SidecarCompress', function(a)
  s() -- loads the composition root, which gives the client its handlers before anything starts
  require('sidecar.compaction').run(a.args)
end, {
  nargs = '*',
  complete = function(arglead, cmdline)
    return require('sidecar.compaction').complete(arglead, cmdline)
  end,
  desc = 'Compress the conversation [focus]; up-to [ID]: summarise before a message of yours; preview [up-to [ID]] [focus]',
})

cmd('SidecarRate', function(a)
  s()
  require('sidecar.compaction').rate(a.args)
end, { nargs = '+', desc = 'Rate the latest compaction: good, or lost [what the summary lost]' })

cmd('SidecarNew', function()
  s().new_session()
end, { desc = 'Start a new sidecar session' })

cmd('SidecarResume', function(a)
  s().resume(a.args)
end, { nargs = '?', desc = 'Resume a sidecar session (picked with vim.ui.select)' })

cmd('SidecarUndoCompaction', function()
  s().undo_compaction()
end, { desc = 'Undo the last compaction' })

cmd('SidecarTranscript', function(a)
  s().transcript(a.args)
end, { nargs = '?', desc = 'Show the session transcript' })

cmd('SidecarConfirm', function()
  require('sidecar.confirm').answer()
end, { desc = 'Answer the tool call waiting for your confirmation (the choices are asked then)' })

cmd('SidecarCancel', function()
  s().cancel()
end, { desc = 'Cancel the running turn' })

cmd('SidecarInstall', function()
  require('sidecar.install').install({
    on_done = function(err)
      if package.loaded['sidecar.client'] then
        require('sidecar.client').install_done(err) -- a start that waited for the install
      end
      if not err and package.loaded['sidecar'] and require('sidecar.state').status == 'failed' then
        require('sidecar').restart()
      end
    end,
  })
end, { desc = "Install the sidecar server into stdpath('data')/sidecar (from this plugin's repository)" })

cmd('SidecarUpdate', function()
  require('sidecar.install').install({
    force = true,
    on_done = function(err)
      -- the running server is still the old one: say how to switch
      if not err and package.loaded['sidecar'] and require('sidecar.client').get() then
        require('sidecar.ui').tell(
          'updated; :SidecarRestart runs the new version (the chat is kept)',
          vim.log.levels.WARN
        )
      end
    end,
  })
end, { desc = 'Rebuild the private sidecar environment (a fresh venv and install)' })

cmd('SidecarStatus', function()
  s().status()
end, { desc = 'Token usage in detail: counts, model, backend, threshold, source, last compaction' })

cmd('SidecarContext', function(a)
  if a.args == 'postpone' then
    s()
    require('sidecar.window').postpone()
  else
    s().show_context()
  end
end, {
  nargs = '?',
  complete = function()
    return { 'postpone' }
  end,
  desc = 'What fills the context window, by category (a float); :SidecarContext postpone skips the due compaction once',
})

cmd('SidecarModel', function(a)
  s().model(a.args)
end, { nargs = '?', desc = "Switch the model (picked with vim.ui.select from the backend's models)" })

cmd('SidecarRestart', function()
  s().restart()
end, { desc = 'Restart the sidecar (resumes the session)' })

cmd('SidecarFork', function(a)
  s().fork(a.args)
end, { nargs = '?', desc = 'Fork the session before a message of yours (picked), or all of it' })

cmd('SidecarRewind', function(a)
  s().rewind(a.args, nil, { files = a.bang })
end, {
  nargs = '?',
  bang = true,
  desc = 'Rewind to before a message of yours (picked with vim.ui.select); with !, restore the files the agent changed too',
})

cmd('SidecarRename', function(a)
  s().rename(a.args)
end, { nargs = '*', desc = 'Rename the session' })

cmd('SidecarDelete', function(a)
  s().delete(a.args)
end, { nargs = '?', desc = 'Move a session to the trash (picked with vim.ui.select)' })

cmd('SidecarRestore', function(a)
  s().restore(a.args)
end, { nargs = '?', desc = 'Bring a deleted session back from the trash (picked with vim.ui.select)' })

cmd('SidecarPin', function(a)
  s().pin(a.args)
end, { nargs = '+', desc = 'Pin a fact: the model keeps it verbatim through every compaction' })

cmd('SidecarPins', function()
  s().pins()
end, { desc = 'List the pinned facts (pick one to unpin it)' })

cmd('SidecarPlan', function(a)
  s() -- loads the composition root, which gives the client its handlers before anything starts
  require('sidecar.plan').run(a.args)
end, {
  nargs = '?',
  complete = function()
    return { 'show', 'clear' }
  end,
  desc = "The agent's todo list (its plan): show it in a scratch buffer; :SidecarPlan clear clears it",
})

cmd('SidecarMcp', function(a)
  s() -- loads the composition root, which gives the client its handlers before anything starts
  require('sidecar.mcp').run(a.args)
end, {
  nargs = '*',
  complete = function(arglead, cmdline)
    return require('sidecar.mcp').complete(arglead, cmdline)
  end,
  desc = 'List the MCP servers (status, tools); :SidecarMcp restart|disable|enable NAME; :SidecarMcp prompt NAME ARGS',
})

cmd('SidecarMemory', function(a)
  s() -- loads the composition root, which gives the client its handlers before anything starts
  require('sidecar.memory').run(a.args)
end, {
  nargs = '*',
  complete = function(arglead, cmdline)
    return require('sidecar.memory').complete(arglead, cmdline)
  end,
  desc = 'The context files the agent has: show (a buffer), refresh, add [--global|--project] {text}',
})
