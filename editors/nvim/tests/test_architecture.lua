-- The plugin's module graph, read from the sources (no module is loaded): no module requires another that requires
-- it back, directly or through others, whether the require runs at load or inside a function. init.lua is the
-- composition root that nothing requires; the features start the server through sidecar.lifecycle.
-- The Lua twin of tests/unit/test_architecture.py.
local T = require('sidecar_test')

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local LUA = vim.fn.fnamemodify(here, ':h') .. '/lua/sidecar'

local function read(path)
  local f = assert(io.open(path, 'rb'))
  local text = f:read('*a')
  f:close()
  return text
end

--- The end of a long bracket opened at `i` (`[[`, `[==[`), or nil when `i` opens none.
local function long_bracket_end(src, i)
  local eqs = src:match('^%[(=*)%[', i)
  if not eqs then
    return nil
  end
  local _, stop = src:find(']' .. eqs .. ']', i + #eqs + 2, true)
  return stop or #src
end

--- Each `require` of a string literal in Lua source, with comments and other strings skipped (a require written
--- in a message or a comment is not one).
local function requires(src)
  local found, i, n = {}, 1, #src
  while i <= n do
    local c = src:sub(i, i)
    if src:sub(i, i + 1) == '--' then
      local stop = long_bracket_end(src, i + 2)
      i = (stop or src:find('\n', i, true) or n) + 1
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and src:sub(j, j) ~= c do
        j = j + (src:sub(j, j) == '\\' and 2 or 1)
      end
      i = j + 1
    elseif c == '[' and long_bracket_end(src, i) then
      i = long_bracket_end(src, i) + 1
    elseif c:match('[%a_]') then
      local word = src:match('^[%w_]+', i)
      if word == 'require' and not src:sub(i - 1, i - 1):match('[%.:]') then
        local name = src:match('^%s*%(?%s*["\']([%w_.]+)["\']', i + #word)
        if name then
          found[#found + 1] = name
        end
      end
      i = i + #word
    else
      i = i + 1
    end
  end
  return found
end

--- module name -> set of the plugin's modules it requires.
local function graph()
  local g = {}
  for _, file in ipairs(vim.fn.glob(LUA .. '/*.lua', false, true)) do
    local base = vim.fn.fnamemodify(file, ':t:r')
    local name = base == 'init' and 'sidecar' or ('sidecar.' .. base)
    g[name] = {}
    for _, dep in ipairs(requires(read(file))) do
      if (dep == 'sidecar' or dep:match('^sidecar%.')) and dep ~= name then
        g[name][dep] = true
      end
    end
  end
  return g
end

--- The first cycle found, as a list of module names from one back to itself; nil when there is none.
local function find_cycle(g)
  local colour, path = {}, {}
  local function visit(m)
    colour[m] = 'open'
    path[#path + 1] = m
    local deps = vim.tbl_keys(g[m] or {})
    table.sort(deps)
    for _, d in ipairs(deps) do
      if colour[d] == 'open' then
        local cycle, on = {}, false
        for _, p in ipairs(path) do
          on = on or p == d
          if on then
            cycle[#cycle + 1] = p
          end
        end
        cycle[#cycle + 1] = d
        return cycle
      elseif not colour[d] then
        local found = visit(d)
        if found then
          return found
        end
      end
    end
    path[#path] = nil
    colour[m] = 'done'
    return nil
  end
  local names = vim.tbl_keys(g)
  table.sort(names)
  for _, m in ipairs(names) do
    if not colour[m] then
      local found = visit(m)
      if found then
        return found
      end
    end
  end
  return nil
end

T.run('test_architecture', function()
  T.step('the scanner sees requires and only requires', function()
    local src = table.concat({
      "local a = require('sidecar.a')",
      'local b = require "sidecar.b"',
      "-- require('sidecar.c') in a comment",
      "--[[ require('sidecar.d') ]]",
      'local s = "call require(\'sidecar.e\') first"',
      "local t = [[ require('sidecar.f') ]]",
      "local function f() return require('sidecar.g').x end",
      "local o = obj.require('sidecar.h')",
    }, '\n')
    T.eq(requires(src), { 'sidecar.a', 'sidecar.b', 'sidecar.g' }, 'requires found')
  end)

  T.step('a cycle is found and named', function()
    local g = { a = { b = true }, b = { c = true }, c = { a = true }, d = { a = true } }
    T.eq(find_cycle(g), { 'a', 'b', 'c', 'a' }, 'cycle')
    T.eq(find_cycle({ a = { b = true }, b = {} }), nil, 'no cycle')
  end)

  local g = graph()

  T.step('the walk sees every module of the plugin', function()
    T.ok(vim.tbl_count(g) >= 20, 'modules found: ' .. vim.tbl_count(g))
    T.ok(g['sidecar'] and g['sidecar.client'] and g['sidecar.chat'], 'init, client and chat are seen')
    T.ok(g['sidecar'] and g['sidecar']['sidecar.client'], 'init requires the client')
  end)

  T.step('no module requires one that requires it back', function()
    local cycle = find_cycle(g)
    T.ok(cycle == nil, 'require cycle: ' .. table.concat(cycle or {}, ' -> '))
  end)

  T.step('nothing requires the composition root', function()
    for name, deps in pairs(g) do
      T.ok(not deps['sidecar'], name .. " requires 'sidecar' (use sidecar.lifecycle)")
    end
  end)
end)
