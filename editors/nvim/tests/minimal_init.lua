-- Isolated init for the headless tests: only this plugin and the test helpers on 'runtimepath'.
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local plugin = vim.fn.fnamemodify(here, ':h')
vim.opt.runtimepath:prepend(here)
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.opt.more = false
vim.cmd('runtime plugin/sidecar.lua')
