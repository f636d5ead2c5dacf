-- Shared by the headless-Neovim tests of the plugin (server/tandem/tests/neovim_plugin.rs).
-- A scenario script is loaded as `nvim --headless --clean -u <scenario>.lua`; it calls
-- `H.init()` at once (as a user's init.lua calls setup) and `H.run(fn)` to run `fn` after
-- VimEnter. The outcome is a JSON file at $TANDEM_RESULT: {ok, step, error, chat, lines, selects,
-- progress, log, messages}; nvim exits 0 only when every step succeeded.
--
-- Environment: TANDEM_PLUGIN (editors/neovim), TANDEM_BIN (the tandem binary), TANDEM_PROJECT,
-- TANDEM_AGENT_DIR, TANDEM_MODEL, TANDEM_RESULT.

local H = {}
local env = vim.env

--- Hang guard only: every wait ends as soon as its condition holds.
H.WAIT_MS = 60000

H.report = { ok = false, step = 'start', selects = {}, progress = {} }

function H.step(name)
  H.report.step = name
end

function H.wait_for(what, cond)
  if not vim.wait(H.WAIT_MS, cond, 20) then
    error('timed out waiting for ' .. what)
  end
end

--- Puts the plugin on the runtimepath and sets it up against the test's server and model.
---@param extra? table more setup options
function H.init(extra)
  vim.opt.runtimepath:prepend(env.TANDEM_PLUGIN)
  vim.lsp.set_log_level('debug')
  require('tandem').setup(vim.tbl_extend('force', {
    cmd = { env.TANDEM_BIN, 'lsp' },
    agent_dir = env.TANDEM_AGENT_DIR,
    model = env.TANDEM_MODEL,
  }, extra or {}))
  -- Work-done progress as Neovim reports it (LspProgress), to check the server's runs show.
  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(ev)
      local value = ev.data and ev.data.params and ev.data.params.value or {}
      table.insert(H.report.progress, { kind = value.kind, message = value.message, title = value.title })
    end,
  })
end

--- Replaces vim.ui.select: `pick(titles, opts)` returns the index to choose (nil: dismiss),
--- answered at once or after `delay_ms` (the user takes their time). Every call is recorded in
--- report.selects, with the chat's lines as they were when it was asked (`chat`) and H.typed
--- (`typed`: a scenario's keystroke count, if it keeps one).
---@param delay_ms? integer
function H.stub_select(pick, delay_ms)
  vim.ui.select = function(items, opts, on_choice)
    opts = opts or {}
    local titles = {}
    for i, item in ipairs(items) do
      titles[i] = opts.format_item and opts.format_item(item) or tostring(item)
    end
    local index = pick(titles, opts)
    table.insert(H.report.selects, {
      prompt = opts.prompt,
      kind = opts.kind,
      items = titles,
      chose = index and titles[index] or vim.NIL,
      chat = require('tandem.chat').lines(),
      typed = H.typed,
    })
    if delay_ms then
      vim.defer_fn(function()
        on_choice(index and items[index] or nil, index)
      end, delay_ms)
    else
      on_choice(index and items[index] or nil, index)
    end
  end
end

--- Stubs vim.ui.select (H.stub_select) to choose the "Ask Tandem to fix: …" code action and,
--- when the server asks to confirm the edit, `answer` (e.g. 'Apply').
---@param answer string
function H.stub_fix_select(answer)
  H.stub_select(function(titles)
    for i, title in ipairs(titles) do
      if title == answer or vim.startswith(title, 'Ask Tandem to fix: ') then
        return i
      end
    end
    return nil
  end)
end

--- Opens `file` (relative to the project) and waits until the plugin's client attached it.
---@return integer buf
function H.open(file)
  H.step('open ' .. file .. ' and attach the server')
  vim.cmd.edit(vim.fn.fnameescape(env.TANDEM_PROJECT .. '/' .. file))
  local buf = vim.api.nvim_get_current_buf()
  H.report.buf = buf
  local lsp = require('tandem.lsp')
  H.wait_for('the plugin to start the server and attach ' .. file, function()
    local client = lsp.get()
    return client ~= nil and client.initialized and vim.lsp.buf_is_attached(buf, client.id)
  end)
  local client = assert(lsp.get())
  H.report.offset_encoding = client.offset_encoding
  H.report.client_capabilities = {
    tandem = client.config.capabilities.experimental.tandem,
  }
  return buf
end

--- Sets, on main.py's `buf`, the diagnostic another server would report for the typo `valus`
--- (line 2), from the source "pyright", and puts the cursor on it.
function H.set_linter_diagnostic(buf)
  H.step('set a diagnostic from another source')
  local ns = vim.api.nvim_create_namespace('tandem-test-linter')
  vim.diagnostic.set(ns, buf, {
    {
      lnum = 1,
      col = 29,
      end_lnum = 1,
      end_col = 34,
      severity = vim.diagnostic.severity.ERROR,
      source = 'pyright',
      message = '"valus" is not defined',
    },
  })
  vim.api.nvim_win_set_cursor(0, { 2, 31 })
end

--- Starts the real language servers of scripts/install-language-servers ($TANDEM_LANGSERVERS:
--- their bin folder) for `buf` with the project as root, as a user's config does with
--- vim.lsp.start: ruff (`ruff server`) and basedpyright (`basedpyright-langserver --stdio`),
--- and waits until both are attached and initialized.
---@return vim.lsp.Client ruff, vim.lsp.Client basedpyright
function H.start_language_servers(buf)
  H.step('start ruff and basedpyright')
  local bin = env.TANDEM_LANGSERVERS
  for _, exe in ipairs({ 'ruff', 'basedpyright-langserver' }) do
    if not bin or vim.fn.executable(bin .. '/' .. exe) ~= 1 then
      error(string.format('%s is not installed in %s: run scripts/install-language-servers', exe, tostring(bin)))
    end
  end
  local root = env.TANDEM_PROJECT
  local ruff = vim.lsp.start({ name = 'ruff', cmd = { bin .. '/ruff', 'server' }, root_dir = root }, { bufnr = buf })
  local pyright = vim.lsp.start({
    name = 'basedpyright',
    cmd = { bin .. '/basedpyright-langserver', '--stdio' },
    root_dir = root,
    settings = { basedpyright = { analysis = { typeCheckingMode = 'standard' } } },
  }, { bufnr = buf })
  assert(ruff and pyright, 'vim.lsp.start failed for ruff or basedpyright')
  H.wait_for('ruff and basedpyright to initialize', function()
    local a, b = vim.lsp.get_client_by_id(ruff), vim.lsp.get_client_by_id(pyright)
    return a and b and a.initialized and b.initialized and vim.lsp.buf_is_attached(buf, ruff)
      and vim.lsp.buf_is_attached(buf, pyright)
  end)
  return assert(vim.lsp.get_client_by_id(ruff)), assert(vim.lsp.get_client_by_id(pyright))
end

--- Waits until `buf` has diagnostics from each of `sources` on (0-based) line `lnum`.
function H.wait_diagnostics(buf, sources, lnum)
  H.wait_for('diagnostics from ' .. table.concat(sources, ' and '), function()
    local seen = {}
    for _, d in ipairs(vim.diagnostic.get(buf, { lnum = lnum })) do
      seen[d.source or ''] = true
    end
    for _, source in ipairs(sources) do
      if not seen[source] then
        return false
      end
    end
    return true
  end)
end

--- Waits until no DiagnosticChanged came for `ms` (the servers have said everything).
function H.wait_quiet(ms)
  local last = vim.uv.hrtime()
  local id = vim.api.nvim_create_autocmd('DiagnosticChanged', {
    callback = function()
      last = vim.uv.hrtime()
    end,
  })
  H.wait_for('the diagnostics to stay unchanged for ' .. ms .. ' ms', function()
    return (vim.uv.hrtime() - last) / 1e6 >= ms
  end)
  vim.api.nvim_del_autocmd(id)
end

--- Runs the Tandem client's handler of the server → client request `method` as Neovim does
--- (in a coroutine, from the event loop) and waits for its answer: {result, error, yielded
--- (the handler answered later, not at once), ms}.
function H.server_request(method, params)
  local client = assert(require('tandem.lsp').get(), 'no Tandem client')
  local handler = client.handlers[method] or vim.lsp.handlers[method]
  assert(handler, 'the Tandem client has no handler for ' .. method)
  local reply, yielded = nil, nil
  local started = vim.uv.hrtime()
  local co = coroutine.create(function()
    local result, err = handler(nil, params, { method = method, client_id = client.id })
    reply = { result = result, error = err, ms = (vim.uv.hrtime() - started) / 1e6 }
  end)
  vim.schedule(function()
    local ok, why = coroutine.resume(co)
    if not ok then
      reply = { crashed = tostring(why) }
    end
    yielded = coroutine.status(co) == 'suspended'
  end)
  H.wait_for('the answer to ' .. method, function()
    return reply ~= nil and yielded ~= nil
  end)
  if reply.crashed then
    error(method .. ' handler failed: ' .. reply.crashed)
  end
  -- What Neovim's RPC layer requires before it sends the answer (vim/lsp/rpc.lua).
  if reply.result == nil and reply.error == nil then
    error(method .. ' handler returned neither a result nor an error')
  end
  if reply.error ~= nil then
    assert(type(reply.error) == 'table', method .. ': the error must be a table')
    local known = vim.lsp.protocol.ErrorCodes[reply.error.code]
    assert(known, method .. ': the error code must be one of protocol.ErrorCodes')
  end
  reply.yielded = yielded
  return reply
end

--- The current chat session, once its run has settled.
function H.settled()
  local chat = require('tandem.chat')
  local s = chat.current and chat.sessions[chat.current]
  return s ~= nil and s.settled and not s.running
end

--- Waits for the current session's run to settle and for its model (tandem/state) to be known.
function H.wait_settled(what)
  H.wait_for(what, H.settled)
  H.wait_for('the model of the session (tandem/state)', function()
    local chat = require('tandem.chat')
    return chat.sessions[chat.current].model ~= nil
  end)
end

function H.chat_contains(text)
  for _, line in ipairs(require('tandem.chat').lines()) do
    if line:find(text, 1, true) then
      return true
    end
  end
  return false
end

local function finish()
  local ok_chat, chat = pcall(require, 'tandem.chat')
  if ok_chat then
    H.report.chat = chat.lines()
    H.report.current = chat.current
  end
  local buf = H.report.buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    H.report.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  H.report.log = vim.lsp.get_log_path()
  H.report.messages = vim.api.nvim_exec2('messages', { output = true }).output
  vim.fn.writefile({ vim.json.encode(H.report) }, env.TANDEM_RESULT)
  vim.cmd(H.report.ok and 'qall!' or 'cquit!')
end

--- Runs `fn` after VimEnter, then writes the report and exits.
function H.run(fn)
  vim.api.nvim_create_autocmd('VimEnter', {
    once = true,
    -- Let :edit inside the scenario fire BufReadPost/FileType, which start the plugin's client.
    nested = true,
    callback = function()
      local ok, err = xpcall(fn, debug.traceback)
      if ok then
        H.report.ok = true
      else
        H.report.error = tostring(err)
      end
      finish()
    end,
  })
end

return H
