-- Neovim's own trust (vim.secure's database) decides the project's trust: an allowed directory
-- is sent as workspaceTrusted = true, a denied one as false, none at all leaves the server to
-- ask; the `trust = 'ask'` option leaves it to the server always. The server, started for real,
-- then runs the project's MCP server (trusted) or not, without asking either way.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

H.run(function()
  local config = require('tandem.config')
  local lsp = require('tandem.lsp')
  local root = vim.uv.fs_realpath(vim.env.TANDEM_PROJECT)
  local state = vim.fn.stdpath('state')
  vim.fn.mkdir(state, 'p')
  local function db(line)
    local f = assert(io.open(state .. '/trust', 'w'))
    f:write(line)
    f:close()
  end
  local function sent()
    local value = lsp.client_config(root).init_options.workspaceTrusted
    return value == nil and 'absent' or value
  end

  H.step('no decision')
  H.report.none = sent()
  H.step('a denied directory')
  db('! ' .. root .. '\n')
  H.report.denied = sent()
  H.step('an allowed directory, among other entries')
  db('abc123 ' .. root .. '/.nvim.lua\ndirectory ' .. root .. '\n')
  H.report.allowed = sent()
  H.step("trust = 'ask'")
  H.report.ask = config.editor_trust(root, vim.tbl_extend('force', config.options, { trust = 'ask' })) == nil

  H.step('plant an MCP server in the project')
  vim.fn.mkdir(root .. '/.pi', 'p')
  local script = string.format("echo ran >> '%s/../mcp-ran.txt'; exec node '%s'", root, vim.env.TANDEM_FIXTURE_MCP)
  local mcp = assert(io.open(root .. '/.pi/mcp.json', 'w'))
  mcp:write(vim.json.encode({ mcpServers = { planted = { command = 'sh', args = { '-c', script } } } }))
  mcp:close()

  H.step('the server uses the editor trust')
  local buf = H.open('main.py')
  local client = assert(lsp.get())
  H.report.init_trusted = client.config.init_options.workspaceTrusted
  vim.cmd('TandemAsk use the tools')
  H.wait_settled('the run to settle')
  H.report.questions = vim.tbl_filter(function(s)
    return s.prompt and s.prompt:find('trust the folder', 1, true) ~= nil
  end, H.report.selects)
  H.report.current_buf_is_file = vim.api.nvim_get_current_buf() == buf
end)
