-- The chat renderer on its own, fed a synthetic `tandem/event` stream (no server): a long answer
-- in 20 000 deltas, thinking, tool calls, a stale and a missed notification, a second session
-- interleaved, retries and errors. Reports the chat lines, and the CPU time of the 20 000 deltas
-- for information (never asserted).
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
vim.opt.runtimepath:prepend(vim.env.TANDEM_PLUGIN)

H.run(function()
  local chat = require('tandem.chat')
  local seqs = {}
  local function send(session, event)
    seqs[session] = (seqs[session] or 0) + 1
    chat.on_event({ session = session, seq = seqs[session], event = event })
  end
  local A, B = 'aaaaaaaa-1111', 'bbbbbbbb-2222'

  H.step('a long answer')
  send(A, { type = 'agent_start' })
  send(A, { type = 'turn_start' })
  send(A, { type = 'message_start', role = 'user', index = 0, text = 'Count' })
  send(A, { type = 'message_end', index = 0, message = { role = 'user', content = {} } })
  send(A, { type = 'message_start', role = 'assistant', index = 1 })
  send(A, { type = 'thinking_delta', contentIndex = 0, delta = 'Let me' })
  send(A, { type = 'thinking_delta', contentIndex = 0, delta = ' think.\nSecond thought.' })
  local expected = {}
  local started = os.clock()
  for i = 1, 20000 do
    -- 20 000 deltas, a line break every 1000 words: lines grow long, and each delta must cost
    -- only its own length.
    local delta = (i % 1000 == 0) and ('w' .. i .. '\n') or ('w' .. i .. ' ')
    table.insert(expected, delta)
    send(A, { type = 'text_delta', contentIndex = 1, delta = delta })
  end
  H.report.deltas_cpu_seconds = os.clock() - started
  H.report.expected_text = table.concat(expected)
  send(A, { type = 'toolcall_start', toolCallId = 't1', name = 'bash' })
  send(A, { type = 'toolcall_delta', toolCallId = 't1', delta = '{"command":"ls"}' })
  send(A, { type = 'toolcall_end', toolCallId = 't1', arguments = { command = 'ls' } })
  send(A, { type = 'message_end', index = 1, message = { role = 'assistant', content = {}, stopReason = 'toolUse' } })
  send(A, { type = 'tool_start', toolCallId = 't1', name = 'bash', title = 'Run `ls`', kind = 'execute', locations = {} })
  H.report.state_while_tool = chat.lines()[1]

  H.step('a second session interleaved')
  chat.current = A
  send(B, { type = 'agent_start' })
  send(B, { type = 'message_start', role = 'assistant', index = 0 })
  send(B, { type = 'text_delta', contentIndex = 0, delta = 'From B.' })

  H.step('back to the first session')
  send(A, { type = 'tool_end', toolCallId = 't1', isError = true, text = 'Command exited with code 2\nmore' })
  send(A, { type = 'turn_end' })
  -- A stale notification is ignored.
  chat.on_event({ session = A, seq = 3, event = { type = 'text_delta', contentIndex = 0, delta = 'STALE' } })
  -- A gap: the next message's deltas were missed; its message_end has the whole text.
  seqs[A] = seqs[A] + 5
  send(A, { type = 'text_delta', contentIndex = 0, delta = 'ly.' })
  send(A, { type = 'message_end', index = 2, message = {
    role = 'assistant', stopReason = 'stop', content = { { type = 'text', text = 'Finally.' } } } })
  send(A, { type = 'retry_start', attempt = 1, maxAttempts = 3, delayMs = 2000, errorMessage = '429 Too Many Requests' })
  send(A, { type = 'queue_update', steering = { 'faster' }, followUp = {} })
  H.report.state_queued = chat.lines()[1]
  send(A, { type = 'error', message = 'gave up\nafter 3 retries' })
  send(A, { type = 'settled' })
  H.report.sessions = { A = chat.sessions[A].running, B = chat.sessions[B].running }
end)
