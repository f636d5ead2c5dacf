-- The editor's diagnostics, for Tandem. A language server never sees what the other servers
-- publish, so the plugin hands them over: with code action requests (every diagnostic on the
-- range's lines), with prompts (the editor context), and when the server asks with
-- `tandem/diagnostics` (protocol-ext README, "Language intelligence"). Tandem's own diagnostics
-- (its client's namespaces) are never among them.
--
-- The generation of a document counts the DiagnosticChanged events of its buffer that were not
-- Tandem's alone; `after` waits for it to go up and for every language server that reports on
-- the document to have reported since, then for `quietMs` without a change. Servers report at
-- their own pace (ruff within milliseconds of a change, basedpyright only once no change came for
-- 250 ms): the first report alone, plus a quiet time, would miss the slower server's.

local answer = require('tandem.answer')
local position = require('tandem.position')

local M = {}

--- The server's defaults (protocol-ext README, tandem/diagnostics).
M.WAIT_MS = 1500
M.QUIET_MS = 250

local NAME = 'tandem'

--- Generations and the time of the last change, by normalized file name.
---@type table<string, integer>
local generations = {}
---@type table<string, number>
local changed_at = {}
--- The generation of each document right after each language server's last report on it (a
--- publish, or an answer to a pull), by file name and client id.
---@type table<string, table<integer, integer>>
local reported = {}
--- Pending `after` waits.
---@type table<table, true>
local waiters = {}

local function now_ms()
  return vim.uv.hrtime() / 1e6
end

local fname_of = position.buf_fname
local fname_of_uri = position.uri_fname
local buf_of = position.fname_buf

--- Whether `client` is a Tandem client (this plugin's, or one started otherwise).
---@param client vim.lsp.Client
function M.is_tandem(client)
  return client.name == NAME or client.id == require('tandem.lsp').client_id
end

--- The diagnostic namespaces of Tandem's clients (push and pull), by id.
---@return table<integer, true>
local function tandem_namespaces()
  local ours = {}
  for name, ns in pairs(vim.api.nvim_get_namespaces()) do
    if name:match('^vim%.lsp%.' .. NAME .. '%.%d+') then
      ours[ns] = true
    end
  end
  return ours
end

--- The language servers other than Tandem attached to `buf`.
---@param buf integer
---@return vim.lsp.Client[]
function M.other_clients(buf)
  local clients = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf })) do
    if not M.is_tandem(client) then
      table.insert(clients, client)
    end
  end
  return clients
end

--- Whether a language server looks at the document of `buf`: true when one other than Tandem
--- is attached to its loaded buffer, false when none is, nil for a buffer that is not loaded
--- (the plugin cannot tell).
---@param buf integer?
---@return boolean?
local function analyzed(buf)
  if not buf or not vim.api.nvim_buf_is_loaded(buf) then
    return nil
  end
  return #M.other_clients(buf) > 0
end

--- A vim.Diagnostic (0-based line, byte columns) as an LSP Diagnostic in `encoding`.
---@param d vim.Diagnostic
---@param uri string
---@param line fun(uri: string, row: integer): string
---@param encoding string
---@return table
local function to_lsp(d, uri, line, encoding)
  local end_lnum = d.end_lnum or d.lnum
  local function pos(row, byte)
    byte = byte or 0
    local character = byte
    if encoding ~= 'utf-8' and byte > 0 then
      character = position.from_byte(line(uri, row), byte, encoding)
    end
    return { line = row, character = character }
  end
  local lsp_d = type(d.user_data) == 'table' and type(d.user_data.lsp) == 'table' and d.user_data.lsp or {}
  local code = d.code
  if code == nil then
    code = lsp_d.code
  end
  local source = d.source
  if source == nil then
    source = lsp_d.source
  end
  return {
    range = { start = pos(d.lnum, d.col), ['end'] = pos(end_lnum, d.end_col or d.col) },
    severity = d.severity,
    message = d.message,
    source = source ~= vim.NIL and source or nil,
    code = code ~= vim.NIL and code or nil,
  }
end

--- `buf`'s diagnostics from every source but Tandem, optionally only those touching the 0-based
--- lines `first`..`last`, as LSP diagnostics in `encoding`.
---@param buf integer
---@param encoding string
---@param first? integer
---@param last? integer
---@return table[]
function M.of_buffer(buf, encoding, first, last)
  local ours = tandem_namespaces()
  local uri = vim.uri_from_bufnr(buf)
  local line = position.line_reader()
  local result = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local d_end = d.end_lnum or d.lnum
    local in_lines = first == nil or (d.lnum <= last and d_end >= first)
    if in_lines and not ours[d.namespace] then
      table.insert(result, to_lsp(d, uri, line, encoding))
    end
  end
  return result
end

--- Every diagnostic of the range's lines, from every source but Tandem, in `encoding` (for code
--- actions and a prompt's context: a server does not see the others' diagnostics, and Neovim
--- sends a client only its own).
---@param buf integer
---@param first integer 0-based first line
---@param last integer 0-based last line
---@param encoding? string
---@return table[]
function M.on_lines(buf, first, last, encoding)
  return M.of_buffer(buf, encoding or 'utf-16', first, last)
end

-- Generations ---------------------------------------------------------------------------------

local function check_waiters(fname)
  for waiter in pairs(waiters) do
    if fname == nil or waiter.fnames[fname] then
      waiter.check()
    end
  end
end

--- The DiagnosticChanged autocommand: one more generation for the buffer's document, unless
--- every diagnostic set was Tandem's own.
---@param ev table
function M.on_changed(ev)
  local fname = fname_of(ev.buf)
  if not fname then
    return
  end
  local set = ev.data and ev.data.diagnostics
  if type(set) == 'table' and #set > 0 then
    local ours = tandem_namespaces()
    local only_ours = true
    for _, d in ipairs(set) do
      if not ours[d.namespace] then
        only_ours = false
        break
      end
    end
    if only_ours then
      return
    end
  end
  generations[fname] = (generations[fname] or 0) + 1
  changed_at[fname] = now_ms()
  check_waiters(fname)
end

--- Counts a report of language server `client_id` on the document `uri`, once Neovim handled it
--- (`generation` was the document's before). A report that changed nothing (a pull answered
--- "unchanged") counts as a change too: the server has spoken since.
---@param client_id integer
---@param uri string
---@param generation integer
local function on_report(client_id, uri, generation)
  local fname = fname_of_uri(uri)
  local client = vim.lsp.get_client_by_id(client_id)
  if not fname or not client or M.is_tandem(client) then
    return
  end
  if (generations[fname] or 0) == generation then
    generations[fname] = generation + 1
    changed_at[fname] = now_ms()
  end
  reported[fname] = reported[fname] or {}
  reported[fname][client_id] = generations[fname]
  check_waiters(fname)
end

local watching = false

--- Wraps Neovim's handlers of published and pulled diagnostics (once) to learn which language
--- server reported on which document. A client whose own `handlers` replace them goes unseen:
--- waits then count on its reports' generations and the quiet time alone.
function M.watch_reports()
  if watching then
    return
  end
  watching = true
  local function wrap(method, uri_of)
    local handler = vim.lsp.handlers[method]
    vim.lsp.handlers[method] = function(err, result, ctx, ...)
      local uri = err == nil and ctx and ctx.client_id and uri_of(result, ctx) or nil
      local fname = type(uri) == 'string' and fname_of_uri(uri) or nil
      local generation = fname and generations[fname] or 0
      local a, b = handler(err, result, ctx, ...)
      if fname then
        on_report(ctx.client_id, uri, generation)
      end
      return a, b
    end
  end
  wrap('textDocument/publishDiagnostics', function(result)
    return type(result) == 'table' and result.uri or nil
  end)
  wrap('textDocument/diagnostic', function(_, ctx)
    return vim.tbl_get(ctx, 'params', 'textDocument', 'uri')
  end)
end

--- A language server left a buffer: a wait may no longer have anything to wait for.
function M.on_detach()
  vim.schedule(function()
    check_waiters(nil)
  end)
end

--- The generation of the document `uri` (0: its diagnostics never changed).
---@param uri string
---@return integer
function M.generation(uri)
  local fname = fname_of_uri(uri)
  return fname and generations[fname] or 0
end

-- tandem/diagnostics --------------------------------------------------------------------------

--- One document of the answer.
local function file_entry(uri, encoding)
  local fname = fname_of_uri(uri)
  local buf = fname and buf_of(fname)
  return {
    uri = uri,
    generation = fname and generations[fname] or 0,
    analyzed = analyzed(buf),
    diagnostics = buf and M.of_buffer(buf, encoding) or {},
  }
end

--- The answer: each of `uris`, or every document with diagnostics.
---@param uris string[]?
---@param encoding string
---@param settled boolean
local function collect(uris, encoding, settled)
  local files = {}
  if uris then
    for _, uri in ipairs(uris) do
      table.insert(files, file_entry(uri, encoding))
    end
  else
    local ours = tandem_namespaces()
    local seen = {}
    for _, d in ipairs(vim.diagnostic.get(nil)) do
      if not ours[d.namespace] and not seen[d.bufnr] and vim.api.nvim_buf_is_valid(d.bufnr) then
        seen[d.bufnr] = true
        if fname_of(d.bufnr) then
          table.insert(files, file_entry(vim.uri_from_bufnr(d.bufnr), encoding))
        end
      end
    end
  end
  return { settled = settled, files = files }
end

--- Whether every language server attached to `buf` that has reported on the document `fname`
--- reported after its generation `gen`.
---@param buf integer
---@param fname string
---@param gen integer
local function each_reported(buf, fname, gen)
  local seen = reported[fname] or {}
  for _, client in ipairs(M.other_clients(buf)) do
    local at = seen[client.id]
    if at ~= nil and at <= gen then
      return false
    end
  end
  return true
end

--- Waits until every document of `after` has a generation above its value and a report from
--- each language server that reports on it (or no language server looks at it: a buffer not
--- loaded, or none but Tandem attached), and none changed for `quiet_ms`; `on_done(true)`
--- then, or `on_done(false)` after `wait_ms`.
---@param after table<string, integer>
---@param wait_ms integer
---@param quiet_ms integer
---@param on_done fun(settled: boolean)
local function wait(after, wait_ms, quiet_ms, on_done)
  local waiter = { fnames = {} }
  local targets = {}
  for uri, gen in pairs(after) do
    local fname = fname_of_uri(uri)
    if fname then
      waiter.fnames[fname] = true
      table.insert(targets, { fname = fname, gen = gen })
    end
  end
  local done = false
  local stop_deadline, stop_quiet
  local function finish(settled)
    if done then
      return
    end
    done = true
    waiters[waiter] = nil
    stop_deadline()
    if stop_quiet then
      stop_quiet()
    end
    on_done(settled)
  end
  function waiter.check()
    if done then
      return
    end
    local last = 0
    for _, t in ipairs(targets) do
      local buf = buf_of(t.fname)
      if analyzed(buf) then
        if (generations[t.fname] or 0) <= t.gen or not each_reported(buf, t.fname, t.gen) then
          return
        end
        last = math.max(last, changed_at[t.fname] or 0)
      end
    end
    local left = quiet_ms - (now_ms() - last)
    if left <= 0 then
      finish(true)
    else
      if stop_quiet then
        stop_quiet()
      end
      stop_quiet = answer.timer(math.ceil(left), waiter.check)
    end
  end
  waiters[waiter] = true
  stop_deadline = answer.timer(wait_ms, function()
    finish(false)
  end)
  waiter.check()
end

local function is_list_of(value, kind)
  if type(value) ~= 'table' then
    return false
  end
  for k, v in pairs(value) do
    if type(k) ~= 'number' or type(v) ~= kind then
      return false
    end
  end
  return true
end

--- The `tandem/diagnostics` handler (server → client).
---@param params table?
---@param ctx table
function M.handle(_, params, ctx)
  params = type(params) == 'table' and params or {}
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  local uris = params.uris
  if uris == vim.NIL then
    uris = nil
  end
  if uris ~= nil and not is_list_of(uris, 'string') then
    return answer.error('InvalidParams', 'Tandem: tandem/diagnostics: `uris` must be a list of URIs')
  end
  local after = params.after
  if after == nil or after == vim.NIL then
    return collect(uris, encoding, true)
  end
  if type(after) ~= 'table' then
    return answer.error('InvalidParams', 'Tandem: tandem/diagnostics: `after` must map URIs to generations')
  end
  for uri, gen in pairs(after) do
    if type(uri) ~= 'string' or type(gen) ~= 'number' then
      return answer.error('InvalidParams', 'Tandem: tandem/diagnostics: `after` must map URIs to generations')
    end
  end
  local function ms(value, default)
    return type(value) == 'number' and value >= 0 and value or default
  end
  local wait_ms, quiet_ms = ms(params.waitMs, M.WAIT_MS), ms(params.quietMs, M.QUIET_MS)
  return answer.later('tandem/diagnostics', function(done)
    wait(after, wait_ms, quiet_ms, function(settled)
      local ok, result = pcall(collect, uris, encoding, settled)
      if ok then
        done(result)
      else
        done(answer.error('InternalError', 'Tandem: reading the diagnostics failed: ' .. tostring(result)))
      end
    end)
  end)
end

return M
