-- "Ask Tandem to fix" for every diagnostic on the cursor's line, with real language servers
-- (ruff and basedpyright) attached: vim.lsp.buf.code_action() with the cursor on line 1 of
-- app.py outside every diagnostic's range, inside one, and inside one that spans others. The
-- menu's titles (vim.ui.select, stubbed to dismiss) and the code action requests the Tandem
-- client sent (as they went on the wire) go to the report;
-- server/tandem/tests/neovim_plugin/language.rs checks them.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

H.run(function()
  local app = H.open('app.py')
  H.start_language_servers(app)
  H.step('wait for the diagnostics of both servers on line 1')
  H.wait_diagnostics(app, { 'Ruff', 'basedpyright' }, 0)
  local tandem = assert(require('tandem.lsp').get())

  -- What the Tandem client sends, after the plugin's changes: the RPC layer's requests.
  local sent = {}
  local rpc_request = tandem.rpc.request
  tandem.rpc.request = function(method, params, ...)
    if method == 'textDocument/codeAction' then
      table.insert(sent, vim.deepcopy(params))
    end
    return rpc_request(method, params, ...)
  end
  H.stub_select(function()
    return nil
  end)

  local line = vim.api.nvim_buf_get_lines(app, 0, 1, false)[1]
  local function code_actions(col)
    sent = {}
    local asked = #H.report.selects
    vim.api.nvim_win_set_cursor(0, { 1, col })
    vim.lsp.buf.code_action()
    H.wait_for('the code action menu', function()
      return #H.report.selects > asked
    end)
    return { col = col, titles = H.report.selects[#H.report.selects].items, requests = sent }
  end

  H.step('code actions with the cursor on line 1 outside every diagnostic')
  -- In `naïve`, between `import os;` and `"été"`.
  H.report.outside = code_actions(assert(line:find('ïve', 1, true)) - 1)
  H.step('code actions with the cursor inside the string "été"')
  H.report.inside = code_actions(assert(line:find('été', 1, true)) - 1)
  -- On `import`: inside ruff's import-block diagnostic (I001, over `import os`), which also
  -- touches the span of the others, so both answers list its fix (shown once).
  H.step('code actions with the cursor on `import`')
  H.report.on_import = code_actions(2)
  H.report.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(app, { lnum = 0 })) do
    table.insert(H.report.diagnostics, { source = d.source, message = d.message, col = d.col, end_col = d.end_col })
  end
end)
