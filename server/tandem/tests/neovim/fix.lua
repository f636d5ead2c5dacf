-- A real editor running Tandem's "fix" code action: loaded by server/tandem/tests/neovim.rs as
-- `nvim --headless --clean -u fix.lua`. It does what a user does: opens the file, starts
-- `tandem lsp` with vim.lsp.start, puts a diagnostic on the buggy line, asks for code actions,
-- runs "Ask Tandem to fix: …", and waits for the server's workspace/applyEdit to change the buffer
-- and for its closing summary. Neovim, not this script, applies the edit.
--
-- Inputs come from the environment (set by the Rust test): TANDEM_BIN, TANDEM_PROJECT,
-- TANDEM_AGENT_DIR, TANDEM_FILE (relative to the project), TANDEM_RESULT. The outcome is a JSON
-- file at TANDEM_RESULT: {ok, step, error, lines, messages, command}; the exit code is 0 only when
-- every step succeeded.

local env = vim.env
local WAIT_MS = 40000

-- What the test reads back. `step` names the last step started, so a failure says where.
local report = { ok = false, step = 'start', messages = {} }

-- Every window/showMessage the server sends, besides Neovim's own echo of it.
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx)
  table.insert(report.messages, params.message)
  return show_message(err, params, ctx)
end

local function finish(buf)
  if buf and vim.api.nvim_buf_is_valid(buf) then
    report.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  report.log = vim.lsp.get_log_path()
  report.history = vim.api.nvim_exec2('messages', { output = true }).output
  vim.fn.writefile({ vim.json.encode(report) }, env.TANDEM_RESULT)
  vim.cmd(report.ok and 'qall!' or 'cquit!')
end

-- Waits for `cond` or fails the current step.
local function wait_for(what, cond)
  if not vim.wait(WAIT_MS, cond, 20) then
    error('timed out waiting for ' .. what)
  end
end

local function run()
  vim.lsp.set_log_level('debug')
  vim.cmd.edit(vim.fn.fnameescape(env.TANDEM_PROJECT .. '/' .. env.TANDEM_FILE))
  local buf = vim.api.nvim_get_current_buf()
  local before = vim.api.nvim_buf_get_lines(buf, 0, -1, false)

  report.step = 'start the server'
  local client_id = vim.lsp.start({
    name = 'tandem',
    cmd = { env.TANDEM_BIN, 'lsp' },
    cmd_cwd = env.TANDEM_PROJECT,
    root_dir = env.TANDEM_PROJECT,
    init_options = { agentDir = env.TANDEM_AGENT_DIR, model = 'scripted/t', editMode = 'auto' },
    capabilities = vim.lsp.protocol.make_client_capabilities(),
  }, { bufnr = buf })
  assert(client_id, 'vim.lsp.start returned no client')
  local client = assert(vim.lsp.get_client_by_id(client_id))
  wait_for('the client to initialize and attach', function()
    return client.initialized and vim.lsp.buf_is_attached(buf, client_id)
  end)

  report.step = 'set a diagnostic'
  local ns = vim.api.nvim_create_namespace('tandem-neovim-test')
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
  local diagnostics = vim.lsp.diagnostic.from(vim.diagnostic.get(buf, { namespace = ns, lnum = 1 }))

  report.step = 'list code actions'
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    range = { start = { line = 1, character = 31 }, ['end'] = { line = 1, character = 31 } },
    context = { diagnostics = diagnostics },
  }
  local responses = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, WAIT_MS)
  local response = assert((responses or {})[client_id], 'no answer to textDocument/codeAction')
  assert(not response.err, vim.inspect(response.err))
  local fix
  for _, action in ipairs(response.result or {}) do
    if vim.startswith(action.title, 'Ask Tandem to fix: ') then
      fix = action
    end
  end
  assert(fix, 'no "Ask Tandem to fix" action among ' .. vim.inspect(response.result))
  report.action = fix.title

  report.step = 'run the fix'
  local answered = false
  client:exec_cmd(fix.command, { bufnr = buf }, function(err, result)
    answered = true
    report.command = { err = err, result = result }
  end)
  wait_for('the executeCommand answer', function()
    return answered
  end)
  assert(not report.command.err, vim.inspect(report.command.err))

  report.step = 'wait for the edit and the summary'
  wait_for('the buffer to change and the run to end', function()
    local now = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    return not vim.deep_equal(now, before) and #report.messages > 0
  end)
  report.ok = true
  return buf
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    local ok, result = pcall(run)
    if not ok then
      report.error = tostring(result)
      result = vim.api.nvim_get_current_buf()
    end
    finish(result)
  end,
})
