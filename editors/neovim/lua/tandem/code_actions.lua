-- Code action requests to Tandem, with every diagnostic on the requested lines. Neovim sends a
-- client only the diagnostics it published itself, and Tandem publishes none: its
-- "Ask Tandem to fix" actions come from the diagnostics a request carries. So the request
-- carries every diagnostic of the range's lines, from every source but Tandem.
--
-- Tandem lists a fix for each diagnostic that touches the requested range, and Neovim's range is
-- the cursor: a diagnostic elsewhere on the line would get no action. Widening the range would
-- change what explain / document / write tests are about (the selection instead of the symbol
-- at the cursor), so the diagnostics on the lines but off the range are asked about in a second
-- request, for quick fixes only, over their own span; the two answers reach Neovim as one.

local diagnostics = require('tandem.diagnostics')

local M = {}

local function before(a, b)
  return a.line < b.line or (a.line == b.line and a.character < b.character)
end

--- Whether two ranges share a position (touching counts, as for the server).
local function overlaps(a, b)
  return not before(a['end'], b.start) and not before(b['end'], a.start)
end

--- Whether a request's `only` filter lets quick fixes through.
local function wants_quickfix(only)
  if type(only) ~= 'table' then
    return true
  end
  for _, kind in ipairs(only) do
    if kind == 'quickfix' or kind == '' then
      return true
    end
  end
  return false
end

--- The smallest range holding every diagnostic of `list`.
local function span(list)
  local start, finish = list[1].range.start, list[1].range['end']
  for _, d in ipairs(list) do
    if before(d.range.start, start) then
      start = d.range.start
    end
    if before(finish, d.range['end']) then
      finish = d.range['end']
    end
  end
  return { start = vim.deepcopy(start), ['end'] = vim.deepcopy(finish) }
end

--- What tells two actions apart: the title and the range of the diagnostic it fixes.
local function key(action)
  local d = type(action.diagnostics) == 'table' and action.diagnostics[1]
  local r = d and type(d.range) == 'table' and d.range
  local where = r and string.format('%d:%d-%d:%d', r.start.line, r.start.character, r['end'].line, r['end'].character)
  return (action.title or '') .. '\0' .. (where or '')
end

--- Sends the code action request `params` for `buf` with `send(params, handler)` (the client's
--- own request), as described above; returns what the first send returns.
---@param client vim.lsp.Client
---@param params table lsp.CodeActionParams
---@param handler? function the caller's handler
---@param bufnr? integer
---@param send fun(params: table, handler?: function): boolean, integer?
function M.request(client, params, handler, bufnr, send)
  local method = 'textDocument/codeAction'
  local buf = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local range = params.range
  if type(range) ~= 'table' or not vim.api.nvim_buf_is_valid(buf) then
    return send(params, handler)
  end
  local all = diagnostics.on_lines(buf, range.start.line, range['end'].line, client.offset_encoding)
  if #all == 0 then
    return send(params, handler)
  end
  params = vim.deepcopy(params)
  params.context = params.context or {}
  params.context.diagnostics = all
  local outside = vim.tbl_filter(function(d)
    return not overlaps(d.range, range)
  end, all)
  local h = handler or client.handlers[method] or vim.lsp.handlers[method]
  if #outside == 0 or not wants_quickfix(params.context.only) or not h then
    return send(params, handler)
  end
  -- Every diagnostic again (the server remembers the last request's for later prompts); the
  -- fixes both answers list are shown once.
  local extra = {
    textDocument = params.textDocument,
    range = span(outside),
    context = { diagnostics = all, only = { 'quickfix' }, triggerKind = params.context.triggerKind },
  }
  local first, second
  local function finish()
    if not first or not second then
      return
    end
    if first.err then
      return h(first.err, nil, first.ctx)
    end
    local merged = vim.list_extend({}, type(first.result) == 'table' and first.result or {})
    if second.err then
      require('tandem.notify').show(
        'Tandem: the quick fixes for the rest of the line failed: ' .. (second.err.message or vim.inspect(second.err)),
        vim.log.levels.WARN
      )
    else
      local seen = {}
      for _, action in ipairs(merged) do
        seen[key(action)] = true
      end
      for _, action in ipairs(type(second.result) == 'table' and second.result or {}) do
        if not seen[key(action)] then
          table.insert(merged, action)
        end
      end
    end
    return h(nil, merged, first.ctx)
  end
  local ok, id = send(params, function(err, result, ctx)
    first = { err = err, result = result, ctx = ctx }
    finish()
  end)
  if not ok then
    return ok, id
  end
  local ok_extra = send(extra, function(err, result, ctx)
    second = { err = err, result = result, ctx = ctx }
    finish()
  end)
  if not ok_extra then
    second = { err = { message = 'the request could not be sent' } }
    finish()
  end
  return ok, id
end

return M
