-- The chat buffer's content as it grows: the state line on top, then every session's events as
-- render.lua words them, appended in the order they arrive.
--
-- The buffer is the transcript; no copy of it is kept. The chat is an append log, so a change
-- never needs the whole of it redrawn: streamed text goes where the last line ends
-- (nvim_buf_set_text at a tracked column), so a delta costs work proportional to its own length,
-- never to the message's; a tool's line and a retry's line are rewritten in place (an extmark
-- follows each), and so is an edit's change (the diff proposed with the question, replaced by
-- the server's when the edit ends: shown once) and a command's output (its end, as it runs,
-- then the end of its result; Enter on it shows all of it); everything else is appended. What
-- that takes (the column, which session and which streamed block were written last, the
-- extmarks, the commands' outputs) is kept here, and forgotten with the buffer.

local diff = require('tandem.chat.diff')
local output = require('tandem.chat.output')
local render = require('tandem.chat.render')
local state = require('tandem.chat.state')
local window = require('tandem.chat.window')
local config = require('tandem.config')

local M = {}

local api = vim.api

local ns = api.nvim_create_namespace('tandem-chat')
--- Byte length of the buffer's last line: where the next delta goes.
local col = 0
---@type string? the session whose events were written last
local rendered = nil
---@type table<string, string> by session: the role of the last message header written
local headers = {}
---@type table<string, string> by session: the block being streamed, 'text:<i>' | 'thinking:<i>'
local blocks = {}
---@type table<tandem.Tool, integer> the extmark on each tool call's line
local marks = setmetatable({}, { __mode = 'k' })
---@type table<tandem.Tool, {mark: integer, count: integer}> each change's diff block: where it
--- starts (an extmark) and how many lines it has, so that the final diff replaces the proposed one
local diff_blocks = setmetatable({}, { __mode = 'k' })
---@type table<tandem.Retry, integer> the extmark on each retry's line
local retry_marks = setmetatable({}, { __mode = 'k' })

---@class tandem.OutputBlock
---@field mark? integer  the extmark on its first line (nil until written)
---@field count integer  its lines
---@field tool_mark? integer  the extmark on its call's line
---@field text string  the output it shows
---@field running boolean  the command still runs
---@field expanded boolean  all of it is shown, not just its end

---@type table<tandem.Tool, tandem.OutputBlock> each command's output block
local output_blocks = setmetatable({}, { __mode = 'k' })
--- Every output block of the buffer, kept after its run for Enter to expand it.
---@type tandem.OutputBlock[]
local outputs = {}
--- The row of the last tool line appended (consecutive tool lines share one block).
local last_tool_row = -1

--- The chat buffer, made (with the state line in it) on first use, and again after a wipe.
---@return integer
function M.buf()
  local b = window.get()
  if b then
    return b
  end
  b = window.create()
  vim.keymap.set('n', '<CR>', function()
    if not M.toggle_output(api.nvim_win_get_cursor(0)[1] - 1) then
      api.nvim_feedkeys(vim.v.count1 .. vim.keycode('<CR>'), 'n', false)
    end
  end, { buffer = b, desc = "Tandem: all of a command's output, or its end" })
  vim.bo[b].modifiable = true
  api.nvim_buf_set_lines(b, 0, -1, false, { render.state_line(state.current_session()) })
  vim.bo[b].modifiable = false
  col = 0
  rendered = nil
  headers, blocks = {}, {}
  marks = setmetatable({}, { __mode = 'k' })
  diff_blocks = setmetatable({}, { __mode = 'k' })
  retry_marks = setmetatable({}, { __mode = 'k' })
  output_blocks = setmetatable({}, { __mode = 'k' })
  outputs = {}
  state.forget_tools()
  return b
end

-- Writing -------------------------------------------------------------------------------------

local function writing(fn)
  local b = M.buf()
  vim.bo[b].modifiable = true
  local ok, err = pcall(fn, b)
  vim.bo[b].modifiable = false
  if not ok then
    error(err, 0)
  end
end

--- Appends whole lines at the end. Ends every streamed block.
---@param lines string[]
function M.append(lines)
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
  blocks = {}
  window.follow_end()
end

--- Appends `text` where the last line ends; each new line after the first gets `prefix`.
---@param text string
---@param prefix? string
local function stream(text, prefix)
  local parts = render.stream(text, prefix)
  if not parts then
    return
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
  window.follow_end()
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
      blocks = {}
    end
  end)
end

--- Rewrites the state line, when there is a buffer to show it.
function M.set_state_line()
  if window.get() then
    set_line(0, render.state_line(state.current_session()))
  end
end

--- The chat's lines ({} when there is no buffer).
---@return string[]
function M.lines()
  local b = window.get()
  if not b then
    return {}
  end
  return api.nvim_buf_get_lines(b, 0, -1, false)
end

-- Structure -----------------------------------------------------------------------------------

--- Writes a divider naming session `s`; its later events start fresh blocks and headers.
---@param s tandem.Session
---@param note? string
function M.divider(s, note)
  -- The first session needs none: the state line names it.
  if rendered ~= nil then
    M.append(render.divider(note, s.id, s.title))
  end
  headers[s.id] = nil
  rendered = s.id
end

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

--- Makes sure there is a buffer, and writes a divider when another session than `s` was
--- written last.
---@param s tandem.Session
local function arrive(s)
  M.buf()
  if rendered ~= s.id then
    if rendered ~= nil then
      M.divider(s, 'session')
    end
    rendered = s.id
  end
end

--- Before an event of `s` is applied and written: `arrive`, unless the event is silent (a
--- silent event that has something to say after all arrives itself).
---@param s tandem.Session
---@param kind string the event's type
function M.enter(s, kind)
  if not SILENT[kind] then
    arrive(s)
  end
end

local function header(s, role)
  if headers[s.id] ~= role then
    M.append(render.header(role))
    headers[s.id] = role
  end
end

--- Starts streaming block `key` of `s` unless it is the one being streamed.
local function begin_block(s, key, first_line)
  if blocks[s.id] == key then
    return
  end
  M.append({ '', first_line })
  blocks[s.id] = key
end

-- Tool lines ----------------------------------------------------------------------------------

local function tool_row(tool)
  local b = window.get()
  if not marks[tool] or not b then
    return nil
  end
  return api.nvim_buf_get_extmark_by_id(b, ns, marks[tool], {})[1]
end

--- The line of tool call `id` of `s`, appended (pending) when it has none yet.
---@return tandem.Tool
local function tool_with_line(s, id)
  local tool = s.tools[id]
  if marks[tool] then
    return tool
  end
  local b = M.buf()
  local count = api.nvim_buf_line_count(b)
  local last = api.nvim_buf_get_lines(b, count - 1, count, false)[1] or ''
  -- A blank line before the first of a run of tool lines.
  if last:match('^%- [^ ]+ ') and blocks[s.id] == nil and last_tool_row == count - 1 then
    M.append({ render.tool_line(tool, 'pending') })
  else
    M.append({ '', render.tool_line(tool, 'pending') })
  end
  local row = api.nvim_buf_line_count(b) - 1
  last_tool_row = row
  marks[tool] = api.nvim_buf_set_extmark(b, ns, row, 0, { right_gravity = false })
  return tool
end

local function update_tool(tool, status, extra)
  local row = tool_row(tool)
  if row then
    set_line(row, render.tool_line(tool, status, extra))
  else
    M.append({ render.tool_line(tool, status, extra) })
  end
end

--- Writes `lines` as `block` ({mark, count}): in place of its lines where it is, else appended
--- (and marked).
---@param block {mark?: integer, count: integer}
---@param lines string[]
local function put_block(block, lines)
  local b = M.buf()
  local row = block.mark and api.nvim_buf_get_extmark_by_id(b, ns, block.mark, {})[1]
  if row then
    local count = api.nvim_buf_line_count(b)
    local last = math.min(row + block.count, count)
    writing(function()
      api.nvim_buf_set_lines(b, row, last, false, lines)
    end)
    block.count = #lines
    if last == count then
      -- The block was the end of the buffer: streamed text continues after its new last line.
      col = #lines[#lines]
      blocks = {}
      window.follow_end()
    end
    return
  end
  M.append(lines)
  block.mark = api.nvim_buf_set_extmark(b, ns, api.nvim_buf_line_count(b) - #lines, 0, { right_gravity = false })
  block.count = #lines
end

--- Shows `lines` as the change of `tool` (an edit or write): they replace the change shown
--- before (the proposal the question was about) where it is, else they are appended. A change
--- is shown once, in one place.
---@param tool tandem.Tool
---@param lines string[]
function M.tool_change(tool, lines)
  local block = diff_blocks[tool] or { count = 0 }
  diff_blocks[tool] = block
  put_block(block, lines)
end

--- Shows the output of command `tool` under its line: its end while it runs (`running`), the
--- end of its result once it ended; in place of what was shown before. No output, no block.
---@param tool tandem.Tool
---@param running boolean
local function tool_output(tool, running)
  local block = output_blocks[tool]
  local text = tool.output or ''
  local lines = output.block(text, running, block ~= nil and block.expanded)
  if #lines == 0 then
    return
  end
  if not block then
    -- Right under the call's line, or after a blank line when something came between (the
    -- question to run it, and the answer).
    local b = M.buf()
    local count = api.nvim_buf_line_count(b)
    if tool_row(tool) ~= count - 1 and api.nvim_buf_get_lines(b, count - 1, count, false)[1] ~= '' then
      M.append({ '' })
    end
    block = { count = 0, running = running, expanded = false, text = text, tool_mark = marks[tool] }
    output_blocks[tool] = block
    table.insert(outputs, block)
  end
  block.text, block.running = text, running
  put_block(block, lines)
end

--- Enter in the chat: on a command's output (or its call's line), shows all of it, or again
--- only its end. Returns false when `row` (0-based) is on none.
---@param row integer
---@return boolean
function M.toggle_output(row)
  local b = window.get()
  if not b then
    return false
  end
  for _, block in ipairs(outputs) do
    local first = block.mark and api.nvim_buf_get_extmark_by_id(b, ns, block.mark, {})[1]
    local call = block.tool_mark and api.nvim_buf_get_extmark_by_id(b, ns, block.tool_mark, {})[1]
    if first and ((row >= first and row < first + block.count) or row == call) then
      block.expanded = not block.expanded
      put_block(block, output.block(block.text, block.running, block.expanded))
      return true
    end
  end
  return false
end

--- Whether a change of `tool` is shown.
---@param tool tandem.Tool
---@return boolean
function M.has_change(tool)
  return diff_blocks[tool] ~= nil
end

--- Writes the line of `retry`, or rewrites it where it is.
---@param retry tandem.Retry
local function retry_line(retry)
  local b = M.buf()
  local mark = retry_marks[retry]
  local row = mark and api.nvim_buf_get_extmark_by_id(b, ns, mark, {})[1]
  if row then
    set_line(row, render.retry_line(retry))
    return
  end
  M.append({ '', render.retry_line(retry) })
  retry_marks[retry] = api.nvim_buf_set_extmark(b, ns, api.nvim_buf_line_count(b) - 1, 0, { right_gravity = false })
end

-- Events --------------------------------------------------------------------------------------

local writers = {}

function writers.message_start(s, e)
  if e.role == 'user' then
    -- Every prompt is labelled, a steering message right after another one too.
    headers[s.id] = nil
    header(s, 'user')
    M.append(render.user_message(e.text or '', e.context))
  elseif e.role == 'assistant' then
    -- Its label waits for something to show under it: a call that fails before it writes
    -- anything leaves no empty "## Tandem" (its error or retry is shown on its own).
    blocks[s.id] = nil
  else
    local lines = render.other_message(e.role, e.text)
    if lines then
      M.append(lines)
    end
  end
end

function writers.text_delta(s, e)
  header(s, 'assistant')
  begin_block(s, 'text:' .. tostring(e.contentIndex or 0), '')
  stream(e.delta or '')
end

function writers.thinking_delta(s, e)
  local key = 'thinking:' .. tostring(e.contentIndex or 0)
  header(s, 'assistant')
  if config.options.chat.show_thinking then
    begin_block(s, key, render.THINKING_PREFIX)
    stream(e.delta or '', render.THINKING_PREFIX)
  elseif blocks[s.id] ~= key then
    begin_block(s, key, render.THINKING_HIDDEN)
  end
end

function writers.toolcall_start(s, e)
  header(s, 'assistant')
  tool_with_line(s, e.toolCallId)
end

writers.toolcall_end = writers.toolcall_start

function writers.tool_start(s, e)
  update_tool(tool_with_line(s, e.toolCallId), 'running')
end

--- A command's output so far: its end, under its line.
function writers.tool_update(s, e)
  local tool = s.tools[e.toolCallId]
  if tool and output.shows(tool) then
    arrive(s)
    tool_output(tool_with_line(s, e.toolCallId), true)
  end
end

function writers.tool_end(s, e)
  local tool = tool_with_line(s, e.toolCallId)
  local note = diff.change_note(tool, e.isError == true)
  -- A command's output is shown under its line; a failure of one line (a refusal: "denied by
  -- the user") is said on the line alone.
  local shows_output = output.shows(tool)
    and (not e.isError or output_blocks[tool] ~= nil or output.count(tool.output) > 1)
  if e.isError then
    local rejected = note == 'rejected, not applied'
    -- With the output under it, the line says how the command ended (its result's last line,
    -- "Command exited with code 2"); else why the call failed (the first line).
    local why = shows_output and render.last_line(e.text) or render.first_line(e.text)
    update_tool(tool, 'failed', rejected and 'rejected: the file is unchanged' or why)
  else
    update_tool(tool, 'done')
  end
  if shows_output then
    tool_output(tool, false)
  end
  if type(e.diff) == 'string' and e.diff ~= '' then
    -- The server's diff of the change, with the file's line numbers: it replaces the proposal
    -- shown with the question, so the change is shown once.
    M.tool_change(tool, diff.block(tool, e.diff, config.options.chat.max_diff_lines or 0, note))
  elseif note and diff_blocks[tool] then
    -- No diff came (an older server): the proposal stays, marked with what became of it.
    local b = M.buf()
    local row = api.nvim_buf_get_extmark_by_id(b, ns, diff_blocks[tool].mark, {})[1]
    local head = row and api.nvim_buf_get_lines(b, row, row + 1, false)[1]
    if head then
      set_line(row, (head:gsub(' %(proposed%)$', '')) .. ' (' .. note .. ')')
    end
  end
end

function writers.message_end(s, e, repaired)
  local message = e.message or {}
  if message.role ~= 'assistant' then
    return
  end
  if repaired and render.message_text(message, 'text') ~= '' then
    header(s, 'assistant')
  end
  for _, block in ipairs(render.message_end(message, repaired)) do
    M.append(block)
  end
end

function writers.retry_start(s, _, retry)
  retry_line(retry)
  headers[s.id] = nil
end

function writers.retry_end(_, _, retry)
  retry_line(retry)
end

function writers.compaction_start(_, e)
  M.append(render.compaction_start(e))
end

function writers.compaction_end(_, e)
  M.append(render.compaction_end(e))
end

function writers.error(_, e)
  M.append(render.error(e.message, 'the run failed'))
end

--- What a run leaves unsaid when it settles: a failed call's error that no retry took over and
--- no `error` event showed, and a retry that never ran.
function writers.settled(s, _, unsaid)
  if not unsaid or not (unsaid.retry or unsaid.failure) then
    return
  end
  arrive(s)
  if unsaid.retry then
    retry_line(unsaid.retry)
  end
  if unsaid.failure then
    M.append(render.error(unsaid.failure, 'the model call failed'))
  end
end

--- Writes event `e` of `s`, once state.apply has taken it (`applied` is what apply returned).
---@param s tandem.Session
---@param e table
---@param applied any
function M.write(s, e, applied)
  local writer = writers[e.type]
  if writer then
    writer(s, e, applied)
  end
end

return M
