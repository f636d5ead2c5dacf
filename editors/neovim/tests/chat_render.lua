-- The chat's pure modules on their own: a session goes through chat/state.lua (events applied
-- to it, no server) and chat/render.lua turns it and its events into lines, while vim.api,
-- vim.fn, vim.bo and vim.wo raise on any use: neither module may need a buffer or a window.
-- Reports the lines of each case; server/tandem/tests/neovim_plugin.rs checks them.
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
  local cases = {}
  without_editor(function()
    cases.editor_api_blocked = not pcall(function()
      return vim.api.nvim_list_bufs()
    end)

    H.step('the state line of a new session')
    cases.no_session = render.state_line(state.current_session())
    local s = state.session('0197e3a1-7c2e-4f4e-9d7a-5b9a8e2f1c00')
    state.current = s.id
    cases.idle = render.state_line(state.current_session())
    local function apply(event)
      return state.apply(s, event)
    end

    H.step('an edit call')
    apply({ type = 'agent_start' })
    s.model = 'mock/mock-model'
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
    cases.question = render.question('Tandem wants to edit main.py (+1/-1 lines)', state.running_change, 40)
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
    cases.diff_cut = render.diff(tool, diff, 3)
    cases.diff_summary = render.diff(tool, diff, 0)
    cases.failed = render.tool_line({ name = 'bash' }, 'failed', 'Command exited with code 2')

    H.step('a queue, a gap and an error')
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
    cases.message_end = render.message_end(message, repaired)
    apply({ type = 'settled' })
    cases.state_settled = render.state_line(s)

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
    cases.divider = render.divider('new session', s.id)
  end)
  H.report.cases = cases
end)
