-- The agent uses the editor's language servers, end to end: ruff and basedpyright run in
-- Neovim next to Tandem on the Python project (app.py, models.py); :TandemAsk (edit mode auto,
-- so nothing is asked) makes the scripted model edit app.py, look up a definition and
-- references, rename a class and fix its own error. Tandem asks Neovim with tandem/diagnostics
-- and tandem/languageRequest; the model's next requests hold what Neovim answered (the test
-- reads them from the mock). The report holds both files as Neovim's buffers and the disk have
-- them once the run settled.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init({ edit_mode = 'auto' })

local project = vim.env.TANDEM_PROJECT

--- A file's lines in its buffer (nil when Neovim has not loaded it) and on disk.
local function file_state(name)
  local path = project .. '/' .. name
  local buf = vim.fn.bufnr(path)
  local state = { disk = vim.fn.readfile(path) }
  if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
    state.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    state.modified = vim.bo[buf].modified
  end
  return state
end

H.run(function()
  local app = H.open('app.py')
  local ruff, pyright = H.start_language_servers(app)
  -- As a user's config does: both servers look at every Python buffer, models.py too once the
  -- rename's edit loads it.
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'python',
    callback = function(ev)
      vim.lsp.buf_attach_client(ev.buf, ruff.id)
      vim.lsp.buf_attach_client(ev.buf, pyright.id)
    end,
  })
  H.step('wait for the diagnostics of both servers')
  H.wait_diagnostics(app, { 'Ruff', 'basedpyright' }, 0)
  -- Everything the servers have to say about the untouched file is in: an edit's report is
  -- about what changed since.
  H.wait_quiet(1000)

  H.step(':TandemAsk, and the run with the language tools')
  vim.cmd('TandemAsk use the language tools on app.py')
  H.wait_settled('the run to settle')
  H.report.app = file_state('app.py')
  H.report.models = file_state('models.py')
end)
