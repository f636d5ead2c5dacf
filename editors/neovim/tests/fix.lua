-- The "Ask Tandem to fix: …" code action on a diagnostic set by another source: chosen through
-- vim.ui.select from vim.lsp.buf.code_action(), the model edits main.py, the server asks for
-- confirmation (window/showMessageRequest) and the plugin asks vim.ui.select, which picks Apply
-- (or $TANDEM_ANSWER, e.g. Reject); Neovim applies the edit to the buffer (or leaves it).
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

H.run(function()
  local buf = H.open('main.py')
  local before = vim.api.nvim_buf_get_lines(buf, 0, -1, false)

  local answer = vim.env.TANDEM_ANSWER or 'Apply'
  H.stub_fix_select(answer)

  H.set_linter_diagnostic(buf)

  H.step('run the fix code action')
  vim.lsp.buf.code_action()
  H.wait_for('the code action to be chosen', function()
    return #H.report.selects >= 1
  end)

  H.step('wait for the edit and the end of the run')
  H.wait_for('the buffer to change (when applied) and the run to settle', function()
    local now = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    return (answer ~= 'Apply' or not vim.deep_equal(now, before)) and H.settled()
  end)
  H.wait_settled('the run to settle')
  H.report.modified = vim.bo[buf].modified
end)
