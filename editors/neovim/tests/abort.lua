-- :TandemAbort while the model's stream hangs: the chat shows the partial answer, then the run
-- aborted, and the state line settles. With TANDEM_BANG=!, :TandemAbort! cancels the run's
-- work-done progress instead of calling tandem/abort.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

H.run(function()
  H.open('main.py')

  H.step(':TandemAsk')
  vim.cmd('TandemAsk Tell me a long story')
  H.wait_for('the first pieces of the answer in the chat', function()
    return H.chat_contains('Once upon a time there was')
  end)
  local chat = require('tandem.chat')
  H.report.running_before_abort = chat.sessions[chat.current].running
  if vim.env.TANDEM_BANG then
    H.wait_for("the run's work-done progress", function()
      return next(require('tandem').progress) ~= nil
    end)
  end

  H.step(':TandemAbort' .. (vim.env.TANDEM_BANG or ''))
  vim.cmd('TandemAbort' .. (vim.env.TANDEM_BANG or ''))
  H.wait_settled('the run to settle after the abort')
end)
