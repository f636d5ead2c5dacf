-- The chat's pure modules on their own: a session goes through chat/state.lua (events applied
-- to it, no server) and chat/render.lua, chat/diff.lua and chat/proposal.lua turn it and its
-- events into lines, while vim.api, vim.fn, vim.bo and vim.wo raise on any use: none of these
-- modules may need a buffer or a window. Reports the lines of each case;
-- server/tandem/tests/neovim_plugin.rs checks them.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
vim.opt.runtimepath:prepend(vim.env.TANDEM_PLUGIN)

--- Runs `fn` with the editor's API out of reach: each use raises, naming what was used.
local function without_editor(fn)
  local saved = {}
  for _, name in ipairs({ 'api', 'fn', 'bo', 'wo' }) do
    saved[name] = vim[name]
    vim[name] = setmetatable({}, {
      __index = function(_, key)
        error(string.format('vim.%s.%s used', name, tostring(key)), 2)
      end,
    })
  end
  local ok, err = xpcall(fn, debug.traceback)
  for name, value in pairs(saved) do
    vim[name] = value
  end
  if not ok then
    error(err, 0)
  end
end

H.run(function()
  -- Loaded before: Neovim's module loader itself uses the API.
  local state = require('tandem.chat.state')
  local render = require('tandem.chat.render')
  local proposal = require('tandem.chat.proposal')
  local diffs = require('tandem.chat.diff')
  local cases = {}
  without_editor(function()
    cases.editor_api_blocked = not pcall(function()
      return vim.api.nvim_list_bufs()
    end)

    H.step('the state line of a new session')
    cases.no_session = render.state_line(state.current_session())
    -- Two UUIDv7s made in the same minute: the same first 8 digits (a time prefix).
    local s = state.session('0197e3a1-7c2e-7f4e-9d7a-5b9a8e2f1c00')
    local other = '0197e3a1-7c2f-7a01-8b3c-112233445566'
    cases.short_labels = { render.short(s.id), render.short(other), render.short('opaque-id') }
    state.current = s.id
    cases.idle = render.state_line(state.current_session())
    local function apply(event)
      return state.apply(s, event)
    end

    H.step('an edit call')
    apply({ type = 'agent_start' })
    s.model = 'mock/mock-model'
    apply({ type = 'message_start', role = 'user', text = 'Fix the typo\nin main.py' })
    cases.title = s.title
    cases.divider = render.divider('new session', s.id, s.title)
    apply({ type = 'toolcall_start', toolCallId = 'e1', name = 'edit' })
    local tool = s.tools.e1
    cases.pending = render.tool_line(tool, 'pending')
    apply({
      type = 'toolcall_end',
      toolCallId = 'e1',
      arguments = { path = 'main.py', edits = { { oldText = 'len(valus)', newText = 'len(values)' } } },
    })
    apply({ type = 'tool_start', toolCallId = 'e1', name = 'edit', title = 'Edit main.py' })
    cases.running = render.tool_line(tool, 'running')
    cases.state_running = render.state_line(s)
    cases.change_asked_about = state.running_change == tool
    -- What the plugin shows under the edit before the question: the file's diff, numbered.
    local buggy = 'def average(values):\n    return sum(values) / len(valus)\n'
    cases.proposed = diffs.block(tool, assert(proposal.diff(tool, buggy, 'main.py')), 40, 'proposed')
    -- Arguments that do not apply exactly (not found; found twice): no diff, the preview instead.
    cases.proposal_not_found = proposal.diff({ name = 'edit', arguments = { edits = { { oldText = 'nope', newText = 'x' } } } }, buggy, 'main.py') == nil
    cases.proposal_twice = proposal.diff({ name = 'edit', arguments = { oldText = 'values', newText = 'v' } }, buggy, 'main.py') == nil
    cases.preview = diffs.preview(tool)
    -- Every argument form: edits as a JSON string, and a top-level oldText/newText.
    cases.proposal_forms = proposal.apply({
      name = 'edit',
      arguments = { edits = '[{"oldText":"average","newText":"mean"}]', oldText = 'valus', newText = 'values' },
    }, buggy)
    cases.proposal_new_file = proposal.diff({ name = 'write', arguments = { path = 'new.py', content = 'x = 1\n' } }, nil, 'new.py')
    cases.question = render.question('Tandem wants to edit main.py (+1/-1 lines)', 40)
    cases.question_with_list = render.question('Trust this folder?\n- .pi/mcp.json: node server.mjs\n- .pi/SYSTEM.md', 1)
    cases.answer = render.answer(nil)
    local diff = table.concat({
      '--- a/main.py',
      '+++ b/main.py',
      '@@ -1,2 +1,2 @@',
      ' def average(values):',
      '-    return sum(values) / len(valus)',
      '+    return sum(values) / len(values)',
      '\\ No newline at end of file',
      '',
    }, '\n')
    apply({ type = 'tool_end', toolCallId = 'e1', isError = false, diff = diff })
    cases.change_after_tool_end = state.running_change == nil
    cases.done = render.tool_line(tool, 'done')
    cases.applied_note = diffs.change_note(tool, false) == nil
    cases.diff_cut = diffs.block(tool, diff, 2)
    cases.diff_summary = diffs.block(tool, diff, 0)
    tool.answer = 'Reject'
    cases.rejected = diffs.block(tool, diff, 0, diffs.change_note(tool, true))
    cases.not_applied = diffs.change_note({ name = 'edit', answer = 'Apply' }, true)
    cases.failed = render.tool_line({ name = 'bash' }, 'failed', 'Command exited with code 2')
    cases.plain_title = render.tool_line({ name = 'grep', title = 'Search for `valus` in src' }, 'done')
    -- Line numbers from the hunk headers: two hunks, numbers of two widths, a removed line
    -- that looks like a file header ("-- " is a Lua comment), a line added at the end.
    cases.numbered = diffs.numbered(table.concat({
      '--- a/init.lua',
      '+++ b/init.lua',
      '@@ -8,3 +8,3 @@ local M = {}',
      ' local a = 1',
      '--- old comment',
      '+-- new comment',
      ' local b = 2',
      '@@ -98,2 +98,3 @@',
      ' return M',
      ' -- end',
      '+-- really',
      '',
    }, '\n'))

    H.step('a queue, a gap and a failed call')
    apply({ type = 'queue_update', steering = { 'faster' }, followUp = {} })
    cases.state_queued = render.state_line(s)
    cases.sequence = { state.receive(s, 1), state.receive(s, 2), state.receive(s, 6), state.receive(s, 4) }
    local message = {
      role = 'assistant',
      stopReason = 'error',
      errorMessage = '429 Too Many Requests\nretry later',
      content = { { type = 'thinking', thinking = 'Hmm.' }, { type = 'text', text = 'Partial answer.' } },
    }
    local repaired = apply({ type = 'message_end', message = message })
    cases.repaired = repaired
    -- The failed call's error is not in its message's end: it is shown once, later.
    cases.message_end = render.message_end(message, repaired)

    H.step('a retry that succeeds: neutral lines, no error')
    local retry = apply({ type = 'retry_start', attempt = 1, maxAttempts = 3, delayMs = 2000, errorMessage = message.errorMessage })
    cases.retrying = render.retry_line(retry)
    apply({ type = 'agent_start' })
    apply({ type = 'retry_end', success = true, attempt = 1 })
    cases.retried = render.retry_line(retry)
    cases.failure_after_retry = s.failure == nil

    H.step('a call that fails for good: its error once')
    apply({ type = 'message_end', message = { role = 'assistant', stopReason = 'error', errorMessage = 'HTTP 400: bad request', content = {} } })
    cases.failure_pending = s.failure
    apply({ type = 'error', message = 'HTTP 400: bad request' })
    local unsaid = apply({ type = 'settled' })
    cases.unsaid_after_error = { failure = unsaid.failure ~= nil, retry = unsaid.retry ~= nil }
    cases.state_settled = render.state_line(s)

    H.step('retries that give up, and a failure no error event showed')
    apply({ type = 'agent_start' })
    apply({ type = 'message_end', message = { role = 'assistant', stopReason = 'error', errorMessage = '529 Overloaded', content = {} } })
    retry = apply({ type = 'retry_start', attempt = 3, maxAttempts = 3, delayMs = 8000, errorMessage = '529 Overloaded' })
    apply({ type = 'retry_end', success = false, attempt = 3, finalError = '529 Overloaded' })
    cases.gave_up = render.retry_line(retry)
    unsaid = apply({ type = 'settled' })
    cases.unsaid_failure = unsaid.failure

    H.step('prompts and streamed text')
    cases.prompt = render.user_message('Explain these lines', table.concat({
      '<editor-context>',
      'File: main.py (Python)',
      'Selection: 1:1 to 2:36',
      'Diagnostics in range:',
      '- 2:27 "valus" is not defined',
      '</editor-context>',
      '',
    }, '\n'))
    -- As older servers sent it: the context written before the prompt.
    cases.prompt_inline = render.user_message(table.concat({
      '<editor-context>',
      'File: main.py (Python)',
      'Cursor: line 2, column 3',
      '</editor-context>',
      '',
      'Explain this',
    }, '\n'))
    cases.stream = render.stream('one\ntwo\nthree', render.THINKING_PREFIX)
  end)
  H.report.cases = cases
end)
