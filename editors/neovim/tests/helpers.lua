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
