-- :TandemAsk with a line range: the prompt carries the selection as context, the chat streams the
-- whole answer and its state line ends "settled".
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

H.run(function()
  local buf = H.open('main.py')
  H.report.commands = vim.tbl_keys(vim.api.nvim_get_commands({}))

  H.step(':TandemAsk')
  vim.cmd('1,2TandemAsk Explain these lines')
  H.wait_settled('the run to settle')
  H.wait_for('the work-done progress to end', function()
    local last = H.report.progress[#H.report.progress]
    return last ~= nil and last.kind == 'end'
  end)
  local chat = require('tandem.chat')
  H.report.text_deltas = chat.sessions[chat.current].text_deltas
  H.report.chat_open = chat.is_open()
  H.report.status_after = require('tandem').status()
  -- The file buffer is untouched and still the current window's.
  H.report.current_buf_is_file = vim.api.nvim_get_current_buf() == buf

  H.step('open files of this project and of another one')
  local lsp = require('tandem.lsp')
  vim.cmd.edit(vim.fn.fnameescape(vim.env.TANDEM_PROJECT .. '/notes.md'))
  local notes = vim.api.nvim_get_current_buf()
  vim.cmd.edit(vim.fn.fnameescape(vim.env.TANDEM_OTHER .. '/lib.py'))
  local other = vim.api.nvim_get_current_buf()
  local client = assert(lsp.get())
  H.wait_for('the other files to be attached', function()
    return vim.lsp.buf_is_attached(notes, client.id) and vim.lsp.buf_is_attached(other, client.id)
  end)
  H.report.tandem_clients = #vim.lsp.get_clients({ name = 'tandem' })
  H.report.workspace_folders = vim.tbl_map(function(f)
    return f.uri
  end, client.workspace_folders or {})
  H.report.chat_attached = vim.lsp.buf_is_attached(require('tandem.chat').buf(), client.id)

  H.step(':checkhealth tandem')
  vim.cmd('checkhealth tandem')
  H.report.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end)
