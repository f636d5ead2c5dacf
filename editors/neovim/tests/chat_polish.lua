-- The chat through whole runs against the server: a prompt whose first model call is rate
-- limited (429) and retried, a prompt whose call fails for good (400), then :TandemNew and a
-- prompt in the new session. Reports the chat, the two session ids and what the chat showed
-- while the retry waited.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

H.run(function()
  H.open('main.py')
  local chat = require('tandem.chat')
  local settled = 0
  vim.api.nvim_create_autocmd('User', {
    pattern = 'TandemSettled',
    callback = function()
      settled = settled + 1
    end,
  })
  local function runs(n)
    return function()
      return settled >= n
    end
  end
  -- What the chat showed each time a retry started (its line is rewritten when it ends).
  H.report.retrying = {}
  local on_event = chat.on_event
  chat.on_event = function(params)
    on_event(params)
    if params.event and params.event.type == 'retry_start' then
      local lines = chat.lines()
      table.insert(H.report.retrying, lines[#lines])
    end
  end

  H.step('a prompt whose first call is rate limited, then retried')
  vim.cmd('TandemAsk First question')
  H.wait_for('the first run to settle', runs(1))
  H.report.first = chat.current

  H.step('a prompt whose call fails for good')
  vim.cmd('TandemAsk Break')
  H.wait_for('the second run to settle', runs(2))

  H.step(':TandemNew and a prompt there')
  vim.cmd('TandemNew')
  H.wait_for('a new session', function()
    return chat.current ~= H.report.first
  end)
  vim.cmd('TandemAsk Second question')
  H.wait_for('the third run to settle', runs(3))
  H.wait_settled('the model of the new session')
  H.report.second = chat.current
end)
