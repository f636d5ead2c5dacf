-- The language intelligence the plugin answers for Tandem (tandem/diagnostics and
-- tandem/languageRequest), with real language servers attached: ruff and basedpyright on a
-- two-file Python project (server/tandem/tests/neovim_plugin/python). The handlers run as Neovim
-- runs them for a server request; what they answer goes to the report, which
-- server/tandem/tests/neovim_plugin/language.rs checks. With $TANDEM_ENCODING=utf-16 the plugin
-- offers Tandem only UTF-16, so positions are converted both ways.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
local project = vim.env.TANDEM_PROJECT
local utf16 = vim.env.TANDEM_ENCODING == 'utf-16'
H.init(utf16 and { capabilities = { general = { positionEncodings = { 'utf-16' } } } } or nil)

local function uri(file)
  return vim.uri_from_fname(project .. '/' .. file)
end

H.run(function()
  local app = H.open('app.py')
  H.start_language_servers(app)
  H.step('wait for the diagnostics of both servers')
  H.wait_diagnostics(app, { 'Ruff', 'basedpyright' }, 0)
  local tandem = assert(require('tandem.lsp').get())
  local diagnostics = require('tandem.diagnostics')
  local r = H.report

  H.step("Tandem's own diagnostics are neither reported nor counted")
  local before = diagnostics.generation(uri('app.py'))
  vim.diagnostic.set(vim.lsp.diagnostic.get_namespace(tandem.id, false), app, {
    { lnum = 4, col = 0, end_col = 5, severity = vim.diagnostic.severity.ERROR, message = 'from Tandem itself' },
  })
  r.tandem_generation = { before = before, after = diagnostics.generation(uri('app.py')) }

  H.step('tandem/diagnostics for app.py, models.py (not loaded) and a missing file')
  r.now = H.server_request('tandem/diagnostics', { uris = { uri('app.py'), uri('models.py'), uri('missing.py') } })
  r.everything = H.server_request('tandem/diagnostics', {})

  H.step('an edit that changes the diagnostics, then tandem/diagnostics with after')
  local generation = diagnostics.generation(uri('app.py'))
  vim.api.nvim_buf_set_lines(app, -1, -1, false, { 'print(undefined_thing)' })
  r.after_edit = H.server_request('tandem/diagnostics', {
    uris = { uri('app.py') },
    after = { [uri('app.py')] = generation },
    waitMs = 20000,
    quietMs = 300,
  })
  r.generation_before_edit = generation

  H.step('tandem/diagnostics with after and no change: not settled')
  H.wait_quiet(1500)
  r.no_change = H.server_request('tandem/diagnostics', {
    uris = { uri('app.py') },
    after = { [uri('app.py')] = diagnostics.generation(uri('app.py')) },
    waitMs = 700,
    quietMs = 100,
  })

  H.step('tandem/diagnostics with after on a file no language server looks at')
  vim.cmd.edit(vim.fn.fnameescape(project .. '/notes.txt'))
  local notes = vim.api.nvim_get_current_buf()
  H.wait_for('Tandem to attach notes.txt', function()
    return vim.lsp.buf_is_attached(notes, tandem.id)
  end)
  r.not_analyzed = H.server_request('tandem/diagnostics', {
    uris = { uri('notes.txt') },
    after = { [uri('notes.txt')] = 0 },
    waitMs = 20000,
  })
  vim.cmd.buffer(app)

  H.step('tandem/languageRequest through basedpyright')
  local function request(method, params)
    return H.server_request('tandem/languageRequest', { method = method, params = params })
  end
  -- `total` on line 4, after "zoë = User("Zoë"); print("é", ": non-ASCII before it.
  local line = vim.api.nvim_buf_get_lines(app, 3, 4, false)[1]
  local byte = assert(line:find('total', 1, true)) - 1
  local at = {
    textDocument = { uri = uri('app.py') },
    position = { line = 3, character = require('tandem.position').from_byte(line, byte, tandem.offset_encoding) },
  }
  r.at = at.position
  r.definition = request('textDocument/definition', at)
  r.references = request(
    'textDocument/references',
    vim.tbl_extend('force', at, { context = { includeDeclaration = true } })
  )
  r.hover = request('textDocument/hover', at)
  r.rename = request('textDocument/rename', vim.tbl_extend('force', at, { newName = 'grand_total' }))
  r.document_symbols = request('textDocument/documentSymbol', { textDocument = { uri = uri('app.py') } })
  r.workspace_symbols = request('workspace/symbol', { query = 'User' })

  H.step('tandem/languageRequest that no server answers')
  r.not_loaded = request('textDocument/definition', {
    textDocument = { uri = uri('models.py') },
    position = { line = 0, character = 17 },
  })
  r.no_server = request('textDocument/definition', {
    textDocument = { uri = uri('notes.txt') },
    position = { line = 0, character = 0 },
  })
  r.unknown_method = request('textDocument/formatting', { textDocument = { uri = uri('app.py') } })
  r.app_lines = vim.api.nvim_buf_get_lines(app, 0, -1, false)
end)
