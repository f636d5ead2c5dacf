-- :TandemUndo after the user edited elsewhere in the file: the fix code action edits main.py
-- (Apply), the user adds a line above it, :TandemUndo proposes the reverse, the plugin asks
-- (vim.ui.select, Apply) and Neovim applies it: the fix is gone, the user's line stays. A second
-- :TandemUndo finds nothing left to undo.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

H.run(function()
  local buf = H.open('main.py')
  local before = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  H.stub_fix_select('Apply')
  H.set_linter_diagnostic(buf)

  H.step('run the fix code action')
  vim.lsp.buf.code_action()
  H.wait_for('the fix in the buffer and the run settled', function()
    local now = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    return not vim.deep_equal(now, before) and H.settled()
  end)
  H.wait_settled('the run to settle')
  H.report.fixed = vim.api.nvim_buf_get_lines(buf, 0, -1, false)

  H.step('the user adds a line above the fixed one')
  vim.api.nvim_buf_set_lines(buf, 0, 0, false, { '# checked by the user' })

  H.step(':TandemUndo')
  vim.cmd('TandemUndo')
  H.wait_for('the fix to be undone', function()
    local now = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    return now[3] == before[2]
  end)
  H.wait_for('the undo summary in the chat', function()
    return H.chat_contains('Undid 1 turn')
  end)

  H.step(':TandemUndo again')
  vim.cmd('TandemUndo')
  H.wait_for('nothing left to undo', function()
    return H.chat_contains('Nothing to undo')
  end)
  H.report.quickfix = vim.fn.getqflist()
end)
