-- Isolated init for the headless tests: only this plugin and the test helpers on 'runtimepath'.
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local plugin = vim.fn.fnamemodify(here, ':h')
vim.opt.runtimepath:prepend(here)
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.opt.more = false
-- The tests edit Python files: the python ftplugin's has('python3') would start a provider check (a python3
-- process looking for pynvim, seconds on a loaded machine). No test needs a remote-plugin provider.
for _, provider in ipairs({ 'python3', 'node', 'perl', 'ruby' }) do
  vim.g['loaded_' .. provider .. '_provider'] = 0
end
vim.cmd('runtime plugin/sidecar.lua')
