-- A user's init.lua for the tests in a real terminal (server/tandem/tests/neovim_plugin/tui.rs):
-- the plugin on the runtimepath, set up against the test's server and model, and nothing else.
-- Neovim's own vim.ui.select (inputlist()) and vim.notify answer and tell, as for a user who
-- installed no UI plugin; the test types its answers into the terminal.
vim.opt.runtimepath:prepend(vim.env.TANDEM_PLUGIN)
require('tandem').setup({
  cmd = { vim.env.TANDEM_BIN, 'lsp' },
  agent_dir = vim.env.TANDEM_AGENT_DIR,
  model = vim.env.TANDEM_MODEL,
})
