-- :TandemAsk with a model whose provider has no API key: the error names what to set, in the
-- chat and as a notification.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

H.run(function()
  H.open('main.py')
  H.report.notes = {}
  vim.notify = function(message)
    table.insert(H.report.notes, message)
  end
  H.step(':TandemAsk')
  vim.cmd('TandemAsk Hello?')
  H.wait_for('the error', function()
    return H.chat_contains('**Error:** ')
  end)
end)
