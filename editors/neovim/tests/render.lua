-- The chat renderer on its own, fed a synthetic `tandem/event` stream (no server): two prompts
-- in a row, a long answer in 20 000 deltas, thinking, tool calls, a stale and a missed
-- notification, a second session interleaved (both UUIDv7s with the same time prefix), an edit
-- asked about and rejected, a rate-limited call retried, a call that fails for good. Reports the
-- chat lines (and the chat when the question was asked), and the CPU time of the 20 000 deltas
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
  -- Made in the same millisecond: the first 12 digits are the same.
  local A = '0197e3a1-7c2e-7000-8000-0000aaaaaaaa'
  local B = '0197e3a1-7c2e-7001-8000-0000bbbbbbbb'

  H.step('two prompts and a long answer')
  send(A, { type = 'agent_start' })
  send(A, { type = 'turn_start' })
  send(A, { type = 'message_start', role = 'user', index = 0, text = 'Count' })
  send(A, { type = 'message_end', index = 0, message = { role = 'user', content = {} } })
  -- A steering message right after the prompt: labelled too.
  send(A, { type = 'message_start', role = 'user', index = 1, text = 'Faster, please' })
  send(A, { type = 'message_end', index = 1, message = { role = 'user', content = {} } })
  send(A, { type = 'message_start', role = 'assistant', index = 2 })
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
  send(A, { type = 'message_end', index = 2, message = { role = 'assistant', content = {}, stopReason = 'toolUse' } })
  send(A, { type = 'tool_start', toolCallId = 't1', name = 'bash', title = 'Run `ls`', kind = 'execute', locations = {} })
  H.report.state_while_tool = chat.lines()[1]

  H.step('a second session interleaved')
  chat.current = A
  send(B, { type = 'agent_start' })
  send(B, { type = 'message_start', role = 'assistant', index = 0 })
  send(B, { type = 'text_delta', contentIndex = 0, delta = 'From B.' })

  H.step('back to the first session')
  send(A, { type = 'tool_end', toolCallId = 't1', isError = true,
    text = 'ls: cannot access \27[1mnope\27[0m\r\n\n\nCommand exited with code 2' })
  send(A, { type = 'turn_end' })
  -- A stale notification is ignored.
  chat.on_event({ session = A, seq = 3, event = { type = 'text_delta', contentIndex = 0, delta = 'STALE' } })
  -- A gap: the next message's deltas were missed; its message_end has the whole text.
  seqs[A] = seqs[A] + 5
  send(A, { type = 'text_delta', contentIndex = 0, delta = 'ly.' })
  send(A, { type = 'message_end', index = 4, message = {
    role = 'assistant', stopReason = 'stop', content = { { type = 'text', text = 'Finally.' } } } })

  H.step('an edit asked about, then rejected')
  local diff = table.concat({
    '--- a/main.py',
    '+++ b/main.py',
    '@@ -1,2 +1,2 @@',
    ' def average(values):',
    '-    return sum(values) / len(valus)',
    '+    return sum(values) / len(values)',
    '',
  }, '\n')
  send(A, { type = 'message_start', role = 'assistant', index = 5 })
  send(A, { type = 'toolcall_start', toolCallId = 'e1', name = 'edit' })
  send(A, { type = 'toolcall_end', toolCallId = 'e1', arguments = {
    path = 'main.py', edits = { { oldText = 'len(valus)', newText = 'len(values)' } } } })
  send(A, { type = 'message_end', index = 5, message = { role = 'assistant', content = {}, stopReason = 'toolUse' } })
  send(A, { type = 'tool_start', toolCallId = 'e1', name = 'edit', title = 'Edit main.py', kind = 'edit',
    locations = { { uri = vim.uri_from_fname(vim.env.TANDEM_PROJECT .. '/main.py') } } })
  chat.question('Tandem wants to edit main.py (+1/-1 lines)')
  H.report.chat_at_question = chat.lines()
  chat.answer('Reject')
  send(A, { type = 'tool_end', toolCallId = 'e1', isError = true, diff = diff,
    text = 'The user rejected the edit to main.py (Rejected by the user); the file is unchanged.' })

  H.step('a rate-limited call, retried')
  send(A, { type = 'message_start', role = 'assistant', index = 7 })
  send(A, { type = 'message_end', index = 7, message = {
    role = 'assistant', stopReason = 'error', errorMessage = '429 Too Many Requests', content = {} } })
  send(A, { type = 'agent_end' })
  send(A, { type = 'retry_start', attempt = 1, maxAttempts = 3, delayMs = 2000, errorMessage = '429 Too Many Requests' })
  H.report.retry_while_waiting = chat.lines()[#chat.lines()]
  send(A, { type = 'agent_start' })
  send(A, { type = 'message_start', role = 'assistant', index = 8 })
  send(A, { type = 'text_delta', contentIndex = 0, delta = 'Recovered.' })
  send(A, { type = 'message_end', index = 8, message = {
    role = 'assistant', stopReason = 'stop', content = { { type = 'text', text = 'Recovered.' } } } })
  send(A, { type = 'agent_end' })
  send(A, { type = 'retry_end', success = true, attempt = 1 })
  send(A, { type = 'queue_update', steering = { 'faster' }, followUp = {} })
  H.report.state_queued = chat.lines()[1]

  H.step('a call that fails for good')
  send(A, { type = 'message_start', role = 'assistant', index = 9 })
  send(A, { type = 'message_end', index = 9, message = {
    role = 'assistant', stopReason = 'error', errorMessage = 'HTTP 400: bad request\ndetails', content = {} } })
  send(A, { type = 'agent_end' })
  send(A, { type = 'error', message = 'HTTP 400: bad request\ndetails' })
  send(A, { type = 'settled' })
  H.report.sessions = { A = chat.sessions[A].running, B = chat.sessions[B].running }
end)
