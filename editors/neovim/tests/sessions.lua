-- Sessions and models through the plugin's commands and vim.ui.select: a first run, then
-- :TandemModel, :TandemThinking, :TandemSessions (reopening the first session), :TandemNew and
-- :TandemFollowUp, which starts a run in the new session since it is idle.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

H.run(function()
  H.open('main.py')
  local chat = require('tandem.chat')
  H.report.notes = {}
  vim.notify = function(message)
    table.insert(H.report.notes, message)
  end
  local function noted(prefix)
    return function()
      for _, note in ipairs(H.report.notes) do
        if vim.startswith(note, prefix) then
          return true
        end
      end
      return false
    end
  end
  H.stub_select(function(titles, opts)
    for i, title in ipairs(titles) do
      if opts.kind == 'tandem.models' and vim.startswith(title, 'mock/mock-model') then
        return i
      end
      if opts.kind == 'tandem.sessions' and title:find('First question', 1, true) then
        return i
      end
    end
    return nil
  end)

  H.step(':TandemAsk in a first session')
  vim.cmd('TandemAsk First question')
  H.wait_settled('the first run to settle')
  local first = chat.current
  H.report.first = first

  H.step(':TandemModel')
  vim.cmd('TandemModel')
  H.wait_for('the model to be set', noted('Tandem: model '))

  H.step(':TandemThinking high')
  vim.cmd('TandemThinking high')
  H.wait_for('the thinking level to be set', noted('Tandem: thinking level '))

  H.step(':TandemSessions')
  vim.cmd('TandemSessions')
  H.wait_for('the first session to be opened again', function()
    return H.chat_contains('_First question (')
  end)
  H.report.current_after_open = chat.current

  H.step(':TandemNew')
  vim.cmd('TandemNew')
  H.wait_for('a new session', function()
    return chat.current ~= first
  end)

  H.step(":'<,'>TandemFollowUp in the new, idle session, from a visual selection")
  -- "return sum" on line 2, selected characterwise.
  vim.cmd('normal! 2G0wvee\27')
  vim.cmd("'<,'>TandemFollowUp Second question")
  H.wait_for('the second run to settle', function()
    return H.chat_contains('Second answer.') and H.settled()
  end)
  H.wait_settled('the second run to settle')
end)
