-- The chat buffer: renders the `tandem/event` stream of every session into one scratch
-- markdown buffer, and keeps the state of each session (running, queue, last seq, tools).
--
-- Streaming text is appended where the last line ends (nvim_buf_set_text at a tracked column):
-- a delta costs work proportional to its own length, never to the message's. The first line of
-- the buffer is the state line of the current session ("Tandem: running · …" / "settled").

local config = require('tandem.config')

local M = {}

local api = vim.api

---@class tandem.Tool
---@field name string
---@field title? string
---@field mark? integer extmark on its line

---@class tandem.Session
---@field id string
---@field running boolean
---@field settled boolean   a run ended at least once
---@field last_seq integer
---@field gap boolean       deltas were missed: take the next message_end as the full text
---@field block? string     the block being streamed: 'text:<i>' | 'thinking:<i>'
---@field header? string    the role of the last message header written for this session
---@field tools table<string, tandem.Tool>
---@field queue {steering: string[], followUp: string[]}
---@field model? string
---@field activity? string  the current tool's title
---@field outcome? string   how the last run ended: 'aborted' | 'error'
---@field text_deltas? integer  text_delta events received (statistics)

---@type table<string, tandem.Session>
M.sessions = {}
---@type string? the session prompts go to and the state line describes
M.current = nil
---@type string? the session whose events were rendered last
local rendered = nil

local buf = nil ---@type integer?
local ns = api.nvim_create_namespace('tandem-chat')
--- Byte length of the buffer's last line: where the next delta goes.
local col = 0
local scroll_pending = false

local function short(id)
  return id and id:sub(1, 8) or '?'
end
M.short = short

---@param id string
---@return tandem.Session
local function session(id)
  local s = M.sessions[id]
  if not s then
    s = {
      id = id,
      running = false,
      settled = false,
      last_seq = 0,
      gap = false,
      tools = {},
      queue = { steering = {}, followUp = {} },
    }
    M.sessions[id] = s
  end
  return s
end
M.session = session

-- Buffer ------------------------------------------------------------------------------------

local function valid()
  return buf ~= nil and api.nvim_buf_is_valid(buf)
end

--- The chat buffer, created on first use.
---@return integer
function M.buf()
  if valid() then
    return buf --[[@as integer]]
  end
  buf = api.nvim_create_buf(false, true)
  pcall(api.nvim_buf_set_name, buf, 'tandem://chat')
  local bo = vim.bo[buf]
  bo.buftype = 'nofile'
  bo.bufhidden = 'hide'
  bo.swapfile = false
  bo.undolevels = -1
  bo.filetype = 'markdown'
  api.nvim_buf_set_lines(buf, 0, -1, false, { M.state_line() })
  bo.modifiable = false
  vim.keymap.set('n', 'q', function()
    M.close()
  end, { buffer = buf, desc = 'Tandem: close the chat' })
  col = 0
  rendered = nil
  for _, s in pairs(M.sessions) do
    s.block, s.header, s.tools = nil, nil, {}
  end
  return buf
end

local function writing(fn)
  local b = M.buf()
  vim.bo[b].modifiable = true
  local ok, err = pcall(fn, b)
  vim.bo[b].modifiable = false
  if not ok then
    error(err, 0)
  end
end

local function schedule_scroll()
  if scroll_pending then
    return
  end
  scroll_pending = true
  vim.schedule(function()
    scroll_pending = false
    if not valid() then
      return
    end
    local last = api.nvim_buf_line_count(buf)
    local current = api.nvim_get_current_win()
    for _, win in ipairs(api.nvim_list_wins()) do
      if api.nvim_win_get_buf(win) == buf then
        local row = api.nvim_win_get_cursor(win)[1]
        -- Follow the end, unless the user moved up in the window they are in.
        if win ~= current or row >= last - 3 then
          pcall(api.nvim_win_set_cursor, win, { last, 0 })
        end
      end
    end
  end)
end

--- Appends whole lines at the end. Ends every streamed block.
---@param lines string[]
local function append(lines)
  writing(function(b)
    -- One blank line between blocks, never two.
    if #lines > 1 and lines[1] == '' then
      local count = api.nvim_buf_line_count(b)
      if count > 1 and api.nvim_buf_get_lines(b, count - 1, count, false)[1] == '' then
        lines = vim.list_slice(lines, 2)
      end
    end
    api.nvim_buf_set_lines(b, -1, -1, false, lines)
  end)
  col = #lines[#lines]
  for _, s in pairs(M.sessions) do
    s.block = nil
  end
  schedule_scroll()
end

--- Appends `text` where the last line ends; each new line after the first gets `prefix`.
---@param text string
---@param prefix? string
local function append_text(text, prefix)
  if text == '' then
    return
  end
  local parts = vim.split(text, '\n', { plain = true })
  if prefix and #parts > 1 then
    for i = 2, #parts do
      parts[i] = prefix .. parts[i]
    end
  end
  writing(function(b)
    local row = api.nvim_buf_line_count(b) - 1
    if not pcall(api.nvim_buf_set_text, b, row, col, row, col, parts) then
      -- The tracked column is off (the buffer was changed behind our back): measure it again.
      col = #(api.nvim_buf_get_lines(b, row, row + 1, false)[1] or '')
      api.nvim_buf_set_text(b, row, col, row, col, parts)
    end
  end)
  if #parts == 1 then
    col = col + #parts[1]
  else
    col = #parts[#parts]
  end
  schedule_scroll()
end

--- Replaces the text of line `row` (0-based). The line itself stays, and so do the extmarks
--- on it (nvim_buf_set_lines would move them to the next line).
local function set_line(row, text)
  writing(function(b)
    local last = api.nvim_buf_line_count(b) - 1
    local old = api.nvim_buf_get_lines(b, row, row + 1, false)[1] or ''
    api.nvim_buf_set_text(b, row, 0, row, #old, { text })
    if row == last then
      -- The line streamed text would continue is gone: start a new block next time.
      col = #text
      for _, s in pairs(M.sessions) do
        s.block = nil
      end
    end
  end)
end

local function split_lines(text)
  return vim.split(text or '', '\n', { plain = true, trimempty = false })
end

-- State line --------------------------------------------------------------------------------

--- The first line of the chat: the current session's state.
function M.state_line()
  local s = M.current and M.sessions[M.current]
  if not s then
    return 'Tandem: no session yet (:TandemAsk {question})'
  end
  local parts = {}
  if s.running then
    table.insert(parts, 'running' .. (s.activity and (': ' .. s.activity) or ''))
  elseif s.settled then
    table.insert(parts, 'settled' .. (s.outcome and (' (' .. s.outcome .. ')') or ''))
  else
    table.insert(parts, 'idle')
  end
  if s.model then
    table.insert(parts, s.model)
  end
  table.insert(parts, 'session ' .. short(s.id))
  local steering, follow = #(s.queue.steering or {}), #(s.queue.followUp or {})
  if steering + follow > 0 then
    table.insert(parts, string.format('queued: %d steering, %d follow-up', steering, follow))
  end
  return 'Tandem: ' .. table.concat(parts, ' · ')
end

function M.update_state()
  if valid() then
    set_line(0, M.state_line())
  end
  vim.api.nvim_exec_autocmds('User', { pattern = 'TandemState', modeline = false })
end

--- The current session's model, asked once per run (tandem/state).
local function refresh_model(id)
  local lsp = require('tandem.lsp')
  if not lsp.get() then
    return
  end
  lsp.request('tandem/state', { session = id }, function(result)
    local s = M.sessions[id]
    if s and result and type(result.model) == 'table' then
      s.model = result.model.provider .. '/' .. result.model.id
      if id == M.current then
        M.update_state()
      end
    end
  end, function() end)
end
M.refresh_model = refresh_model

--- Makes `id` the current session; `note` is shown when it changes.
---@param id string
---@param note? string
function M.set_current(id, note)
  local s = session(id)
  if M.current ~= id then
    M.current = id
    if note then
      M.divider(s, note)
    end
    refresh_model(id)
  end
  M.update_state()
end

--- Writes a divider naming the session; later events of it start fresh blocks and headers.
function M.divider(s, note)
  -- The first session needs none: the state line names it.
  if rendered ~= nil then
    append({ '', string.format('── %s %s ──', note or 'session', short(s.id)) })
  end
  s.header = nil
  rendered = s.id
end

--- A run started by someone else (a code action, another window) for `id`: the chat follows
--- it unless the current session is running.
---@param id string
---@param why? string
function M.follow(id, why)
  local current = M.current and M.sessions[M.current]
  if M.current == id or (current and current.running) or not config.options.chat.follow_runs then
    session(id)
    return
  end
  M.set_current(id, why and why:gsub('^tandem%.', '') or 'session')
  if config.options.chat.open_on_ask then
    M.open({ focus = false })
  end
end

-- Windows -----------------------------------------------------------------------------------

local function chat_windows()
  local wins = {}
  if valid() then
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      if api.nvim_win_get_buf(win) == buf then
        table.insert(wins, win)
      end
    end
  end
  return wins
end

function M.is_open()
  return #chat_windows() > 0
end

--- Opens the chat in a split (when not already visible in this tab).
---@param opts? {focus?: boolean}
function M.open(opts)
  opts = opts or {}
  local b = M.buf()
  local wins = chat_windows()
  if #wins > 0 then
    if opts.focus then
      api.nvim_set_current_win(wins[1])
    end
    return wins[1]
  end
  local chat = config.options.chat
  local vertical = chat.position == 'right' or chat.position == 'left'
  local win_opts = { split = chat.position or 'right', win = 0 }
  if vertical then
    win_opts.width = math.min(chat.width or 80, math.max(20, math.floor(vim.o.columns / 2)))
  else
    win_opts.height = chat.height or 15
  end
  local win = api.nvim_open_win(b, opts.focus == true, win_opts)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = 'no'
  vim.wo[win].conceallevel = 2
  pcall(api.nvim_win_set_cursor, win, { api.nvim_buf_line_count(b), 0 })
  return win
end

function M.close()
  for _, win in ipairs(chat_windows()) do
    if #api.nvim_list_wins() > 1 then
      api.nvim_win_close(win, false)
    end
  end
end

function M.toggle()
  if M.is_open() then
    M.close()
  else
    M.open({ focus = true })
  end
end

-- Rendering ---------------------------------------------------------------------------------

--- Before rendering an event of `s`: a divider when another session was rendered last.
local function enter(s)
  if rendered ~= s.id then
    if rendered ~= nil then
      M.divider(s, 'session')
    end
    rendered = s.id
  end
end

local function header(s, role)
  if s.header ~= role then
    append({ '', role == 'user' and '## You' or '## Tandem' })
    s.header = role
  end
end

--- Starts streaming block `key` of `s` unless it is the one being streamed.
local function begin_block(s, key, first_prefix)
  if s.block == key then
    return
  end
  append({ '', first_prefix or '' })
  s.block = key
end

local function first_line(text)
  return (text or ''):match('^[^\n]*') or ''
end

local ICON = { pending = '…', running = '▶', done = '✓', failed = '✗' }

local function tool_line(tool, status, extra)
  local label = tool.title or ('`' .. tool.name .. '`')
  local line = string.format('- %s %s', ICON[status], label)
  if extra and extra ~= '' then
    line = line .. ' — ' .. extra
  end
  return line
end

local function tool_row(tool)
  if not tool.mark or not valid() then
    return nil
  end
  local pos = api.nvim_buf_get_extmark_by_id(buf, ns, tool.mark, {})
  return pos[1]
end

local function update_tool(tool, status, extra)
  local row = tool_row(tool)
  if row then
    set_line(row, tool_line(tool, status, extra))
  else
    append({ tool_line(tool, status, extra) })
  end
end

--- The row of the last tool line appended (consecutive tool lines share one block).
local last_tool_row = -1

local function new_tool(s, id, name)
  local tool = s.tools[id]
  if tool then
    return tool
  end
  tool = { name = name or 'tool' }
  s.tools[id] = tool
  local b = M.buf()
  local count = api.nvim_buf_line_count(b)
  local last = api.nvim_buf_get_lines(b, count - 1, count, false)[1] or ''
  -- A blank line before the first of a run of tool lines.
  if last:match('^%- [^ ]+ ') and s.block == nil and last_tool_row == count - 1 then
    append({ tool_line(tool, 'pending') })
  else
    append({ '', tool_line(tool, 'pending') })
  end
  local row = api.nvim_buf_line_count(b) - 1
  last_tool_row = row
  tool.mark = api.nvim_buf_set_extmark(b, ns, row, 0, { right_gravity = false })
  return tool
end

--- "+3 -1" from a unified diff.
local function diff_stats(diff)
  local added, removed = 0, 0
  for _, line in ipairs(split_lines(diff)) do
    if line:sub(1, 1) == '+' and line:sub(1, 3) ~= '+++' then
      added = added + 1
    elseif line:sub(1, 1) == '-' and line:sub(1, 3) ~= '---' then
      removed = removed + 1
    end
  end
  return added, removed
end

local function render_diff(tool, diff)
  local added, removed = diff_stats(diff)
  local file = diff:match('\n%+%+%+ b/([^\n]+)') or diff:match('^%-%-%- a/([^\n]+)') or tool.title or ''
  local lines = { string.format('  %s: +%d -%d', file, added, removed) }
  local max = config.options.chat.max_diff_lines or 0
  local body = {}
  for _, l in ipairs(split_lines(diff)) do
    -- The diff is built from the call's snippets: "no newline" is about them, not the file.
    if not vim.startswith(l, '\\ No newline') then
      table.insert(body, l)
    end
  end
  if body[#body] == '' then
    table.remove(body)
  end
  if max > 0 and #body > 0 then
    table.insert(lines, '  ```diff')
    for i, l in ipairs(body) do
      if i > max then
        table.insert(lines, string.format('  … %d more lines', #body - max))
        break
      end
      table.insert(lines, '  ' .. l)
    end
    table.insert(lines, '  ```')
  end
  append(lines)
end

local function message_text(message, kind)
  local out = {}
  for _, block in ipairs(message and message.content or {}) do
    if type(block) == 'table' and block.type == kind then
      table.insert(out, block[kind] or block.text or '')
    end
  end
  return table.concat(out, '\n\n')
end

--- Splits the editor context the server puts before a prompt from the prompt itself: returns a
--- one-line summary of the context (nil when there is none) and the prompt.
---@param text string
---@return string? summary
---@return string prompt
function M.split_context(text)
  if not vim.startswith(text, '<editor-context>') then
    return nil, text
  end
  local block, rest = text:match('^<editor%-context>\n(.-)</editor%-context>\n*(.*)$')
  if not block then
    -- Cut short (a list's preview): the prompt is not in it.
    return 'editor context', ''
  end
  local file = block:match('\nFile: ([^\n]+)') or block:match('^File: ([^\n]+)')
  local focus = block:match('\n(Selection: [^\n]+)') or block:match('\n(Cursor: [^\n]+)')
  local parts = {}
  if file then
    table.insert(parts, file)
  end
  if focus then
    table.insert(parts, focus)
  end
  if block:find('\nDiagnostics in range:\n') then
    table.insert(parts, 'with diagnostics')
  end
  return table.concat(parts, ' · '), rest
end

local handlers = {}

function handlers.agent_start(s)
  s.running = true
  s.outcome = nil
  s.activity = nil
end

function handlers.settled(s)
  s.running = false
  s.settled = true
  s.activity = nil
  s.tools = {}
end

function handlers.message_start(s, e)
  if e.role == 'user' then
    header(s, 'user')
    local out = { '' }
    local summary, text = M.split_context(e.text or '')
    if summary then
      table.insert(out, '_Context: ' .. summary .. '_')
      table.insert(out, '')
    end
    vim.list_extend(out, split_lines(text))
    append(out)
  elseif e.role == 'assistant' then
    header(s, 'assistant')
    s.block = nil
  elseif e.role == 'bashExecution' or e.role == 'custom' or e.role == 'branchSummary'
    or e.role == 'compactionSummary' then
    if e.text and e.text ~= '' then
      append({ '', string.format('_%s:_ %s', e.role, first_line(e.text)) })
    end
  end
end

function handlers.text_delta(s, e)
  s.text_deltas = (s.text_deltas or 0) + 1
  begin_block(s, 'text:' .. tostring(e.contentIndex or 0), '')
  append_text(e.delta or '')
end

function handlers.thinking_delta(s, e)
  local key = 'thinking:' .. tostring(e.contentIndex or 0)
  if config.options.chat.show_thinking then
    begin_block(s, key, '> ')
    append_text(e.delta or '', '> ')
  elseif s.block ~= key then
    begin_block(s, key, '> _thinking…_')
  end
end

function handlers.toolcall_start(s, e)
  new_tool(s, e.toolCallId, e.name)
end

function handlers.toolcall_end(s, e)
  local tool = new_tool(s, e.toolCallId, nil)
  tool.arguments = e.arguments
end

--- The edit or write tool running now: the server's confirmation question is about it.
---@type tandem.Tool?
local running_change = nil

function handlers.tool_start(s, e)
  local tool = new_tool(s, e.toolCallId, e.name)
  tool.name = e.name or tool.name
  tool.title = e.title
  s.activity = e.title
  if tool.name == 'edit' or tool.name == 'write' then
    running_change = tool
  end
  update_tool(tool, 'running')
end

function handlers.tool_end(s, e)
  local tool = new_tool(s, e.toolCallId, e.name)
  if running_change == tool then
    running_change = nil
  end
  if e.isError then
    update_tool(tool, 'failed', first_line(e.text))
  else
    update_tool(tool, 'done')
  end
  if type(e.diff) == 'string' and e.diff ~= '' then
    render_diff(tool, e.diff)
  end
  s.activity = nil
end

function handlers.message_end(s, e)
  local message = e.message or {}
  if message.role ~= 'assistant' then
    return
  end
  if s.gap then
    -- Deltas were lost: the message is the truth.
    s.gap = false
    local text = message_text(message, 'text')
    if text ~= '' then
      append({ '', '_(some of the stream was missed; the whole message:)_' })
      append(split_lines(text))
    end
  end
  local reason = message.stopReason
  if reason == 'aborted' then
    s.outcome = 'aborted'
    append({ '', '_Aborted._' })
  elseif reason == 'error' then
    s.outcome = 'error'
    local lines = split_lines('**Error:** ' .. (message.errorMessage or 'the model call failed'))
    table.insert(lines, 1, '')
    append(lines)
  elseif reason == 'length' then
    append({ '', '_(stopped: the output length limit was reached)_' })
  end
end

function handlers.retry_start(s, e)
  append({
    '',
    string.format(
      '_Retrying (attempt %s of %s, in %.1f s): %s_',
      tostring(e.attempt),
      tostring(e.maxAttempts),
      (tonumber(e.delayMs) or 0) / 1000,
      first_line(e.errorMessage)
    ),
  })
  s.header = nil
end

function handlers.retry_end(_, e)
  if not e.success then
    append({ '', '_Retry failed: ' .. first_line(e.finalError or '') .. '_' })
  end
end

function handlers.compaction_start(s, e)
  s.activity = 'compacting'
  append({ '', string.format('_Compacting the context (%s)…_', tostring(e.reason)) })
end

function handlers.compaction_end(s, e)
  s.activity = nil
  if e.aborted then
    append({ '', '_Compaction aborted._' })
  elseif e.errorMessage then
    append({ '', '_Compaction failed: ' .. first_line(e.errorMessage) .. '_' })
  else
    append({ '', string.format('_Compacted (%s tokens before)._', tostring(e.tokensBefore or '?')) })
  end
end

function handlers.queue_update(s, e)
  s.queue = { steering = e.steering or {}, followUp = e.followUp or {} }
end

function handlers.error(s, e)
  s.outcome = 'error'
  local lines = split_lines('**Error:** ' .. (e.message or 'the run failed'))
  table.insert(lines, 1, '')
  append(lines)
end

--- Events that change the state line.
local STATE_EVENTS = {
  agent_start = true,
  settled = true,
  tool_start = true,
  tool_end = true,
  queue_update = true,
  compaction_start = true,
  compaction_end = true,
  error = true,
}

--- Events that write nothing to the buffer.
local SILENT = {
  agent_start = true,
  agent_end = true,
  turn_start = true,
  turn_end = true,
  toolcall_delta = true,
  tool_update = true,
  queue_update = true,
  settled = true,
}

--- One `tandem/event` notification: `{session, seq, event}`.
---@param params {session: string, seq: integer, event: table}
function M.on_event(params)
  local id, event = params.session, params.event
  if type(id) ~= 'string' or type(event) ~= 'table' then
    return
  end
  local s = session(id)
  local seq = tonumber(params.seq)
  if seq then
    if seq <= s.last_seq then
      return -- stale
    end
    if seq > s.last_seq + 1 and s.last_seq > 0 then
      s.gap = true
      refresh_model(id)
    end
    s.last_seq = seq
  end
  local kind = event.type
  if kind == 'agent_start' and M.current ~= id then
    M.follow(id)
  end
  if not SILENT[kind] then
    M.buf()
    enter(s)
  end
  local handler = handlers[kind]
  if handler then
    handler(s, event)
  end
  if STATE_EVENTS[kind] and id == M.current then
    M.update_state()
  end
  if kind == 'settled' then
    vim.api.nvim_exec_autocmds('User', { pattern = 'TandemSettled', modeline = false, data = { session = id } })
  end
end

-- Notes from the plugin ---------------------------------------------------------------------

--- A question from the server (window/showMessageRequest): shown before the picker opens.
---@param message string
function M.question(message)
  M.buf()
  local lines = split_lines(message)
  local out = { '', '**Tandem asks:** ' .. lines[1] }
  local body = {}
  for i = 2, #lines do
    table.insert(body, lines[i])
  end
  if #body == 0 and (message:find('^Tandem wants to edit ') or message:find('^Tandem wants to create ')) then
    body = M.preview(running_change)
  end
  if #body > 0 then
    local max = config.options.chat.max_diff_lines or 0
    table.insert(out, '```diff')
    for i, l in ipairs(body) do
      if max > 0 and i > max then
        table.insert(out, string.format('… %d more lines', #body - max))
        break
      end
      table.insert(out, l)
    end
    table.insert(out, '```')
  end
  append(out)
end

--- What an edit or write call proposes, from its arguments: the replaced and new text of each
--- edit, or the content written.
---@param tool? tandem.Tool
---@return string[]
function M.preview(tool)
  local args = tool and tool.arguments
  if type(args) ~= 'table' then
    return {}
  end
  local out = {}
  local function add(prefix, text)
    for _, l in ipairs(split_lines(text)) do
      table.insert(out, prefix .. l)
    end
  end
  if tool.name == 'edit' and type(args.edits) == 'table' then
    for i, edit in ipairs(args.edits) do
      if type(edit) == 'table' then
        if i > 1 then
          table.insert(out, '@@')
        end
        add('-', tostring(edit.oldText or ''))
        add('+', tostring(edit.newText or ''))
      end
    end
  elseif tool.name == 'write' and type(args.content) == 'string' then
    add('+', args.content)
  end
  return out
end

--- The answer to the last question.
---@param title? string
function M.answer(title)
  append({ '→ ' .. (title or 'dismissed') })
end

--- A line of the plugin's own (errors of requests, queued prompts).
---@param text string
function M.note(text)
  local lines = split_lines(text)
  table.insert(lines, 1, '')
  append(lines)
end

function M.on_exit(code, signal)
  for _, s in pairs(M.sessions) do
    s.running = false
  end
  if valid() then
    M.note(string.format('_The Tandem server exited (code %s, signal %s)._', tostring(code), tostring(signal)))
    M.update_state()
  end
end

--- The chat's lines (for tests and scripts).
---@return string[]
function M.lines()
  if not valid() then
    return {}
  end
  return api.nvim_buf_get_lines(buf, 0, -1, false)
end

return M
