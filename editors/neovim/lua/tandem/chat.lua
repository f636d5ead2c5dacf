-- The chat: one scratch markdown buffer that shows the `tandem/event` stream of every session,
-- with the current session's state on its first line ("Tandem: running · …" / "settled").
--
-- This module is the chat's front door for the rest of the plugin: it takes the server's events
-- and the plugin's notes, and passes them along:
--   chat/state.lua       the sessions and how events change them (pure)
--   chat/render.lua      the text of every line (pure)
--   chat/diff.lua        the lines of a change: a numbered diff, or the arguments' text (pure)
--   chat/proposal.lua    the diff of an edit the server asks about, before it is applied (pure)
--   chat/output.lua      the lines of a command's output: its end, or all of it (pure)
--   chat/transcript.lua  writes that text into the buffer as events arrive (Enter on an output
--                        shows all of it)
--   chat/window.lua      the buffer's making, its windows, `q`, scrolling

local config = require('tandem.config')
local diff = require('tandem.chat.diff')
local proposal = require('tandem.chat.proposal')
local render = require('tandem.chat.render')
local state = require('tandem.chat.state')
local transcript = require('tandem.chat.transcript')
local window = require('tandem.chat.window')

local M = {}

-- `chat.sessions` (table<string, tandem.Session>) and `chat.current` (the session prompts go to
-- and the state line describes) are the state module's; the plugin and its tests read them (a
-- test sets `current`), so they are forwarded rather than copied.
local FORWARDED = { sessions = true, current = true }
setmetatable(M, {
  __index = function(_, key)
    if FORWARDED[key] then
      return state[key]
    end
  end,
  __newindex = function(t, key, value)
    if FORWARDED[key] then
      state[key] = value
    else
      rawset(t, key, value)
    end
  end,
})

M.short = render.short
M.session = state.session
M.split_context = render.split_context
M.preview = diff.preview

--- The chat buffer, created on first use.
---@return integer
function M.buf()
  return transcript.buf()
end

--- The chat's lines (for tests and scripts).
---@return string[]
function M.lines()
  return transcript.lines()
end

-- State line --------------------------------------------------------------------------------

--- The first line of the chat: the current session's state.
---@return string
function M.state_line()
  return render.state_line(state.current_session())
end

function M.update_state()
  transcript.set_state_line()
  vim.api.nvim_exec_autocmds('User', { pattern = 'TandemState', modeline = false })
end

--- The current session's model, asked once per run (tandem/state).
---@param id string
function M.refresh_model(id)
  local lsp = require('tandem.lsp')
  if not lsp.get() then
    return
  end
  lsp.request('tandem/state', { session = id }, function(result)
    local s = state.sessions[id]
    if s and result and type(result.model) == 'table' then
      s.model = result.model.provider .. '/' .. result.model.id
      if id == state.current then
        M.update_state()
      end
    end
  end, function() end)
end

-- Sessions ----------------------------------------------------------------------------------

--- Makes `id` the current session; `note` is shown when it changes.
---@param id string
---@param note? string
function M.set_current(id, note)
  local s = state.session(id)
  if state.current ~= id then
    state.current = id
    if note then
      M.divider(s, note)
    end
    M.refresh_model(id)
  end
  M.update_state()
end

--- Writes a divider naming the session; later events of it start fresh blocks and headers.
---@param s tandem.Session
---@param note? string
function M.divider(s, note)
  transcript.divider(s, note)
end

--- A run started by someone else (a code action, another window) for `id`: the chat follows
--- it unless the current session is running.
---@param id string
---@param why? string
function M.follow(id, why)
  local current = state.current_session()
  if state.current == id or (current and current.running) or not config.options.chat.follow_runs then
    state.session(id)
    return
  end
  M.set_current(id, why and why:gsub('^tandem%.', '') or 'session')
  if config.options.chat.open_on_ask then
    M.open({ focus = false })
  end
end

-- Windows -----------------------------------------------------------------------------------

function M.is_open()
  return window.is_open()
end

--- Opens the chat in a split (when not already visible in this tab).
---@param opts? {focus?: boolean}
---@return integer win
function M.open(opts)
  return window.open(transcript.buf(), opts or {})
end

function M.close()
  window.close()
end

function M.toggle()
  if window.is_open() then
    window.close()
  else
    M.open({ focus = true })
  end
end

-- Events ------------------------------------------------------------------------------------

--- One `tandem/event` notification: `{session, seq, event}`.
---@param params {session: string, seq: integer, event: table}
function M.on_event(params)
  local id, event = params.session, params.event
  if type(id) ~= 'string' or type(event) ~= 'table' then
    return
  end
  local s = state.session(id)
  local seq = state.receive(s, params.seq)
  if seq == 'stale' then
    return
  elseif seq == 'gap' then
    M.refresh_model(id)
  end
  local kind = event.type
  if kind == 'agent_start' and state.current ~= id then
    M.follow(id)
  end
  -- Before apply: making the buffer anew forgets the tool calls, and apply may add one.
  transcript.enter(s, kind)
  local repaired = state.apply(s, event)
  transcript.write(s, event, repaired)
  if state.STATE_LINE_EVENTS[kind] and id == state.current then
    M.update_state()
  end
  if kind == 'settled' then
    vim.api.nvim_exec_autocmds('User', { pattern = 'TandemSettled', modeline = false, data = { session = id } })
  end
end

-- Questions --------------------------------------------------------------------------------

--- The edit or write call the question being asked is about.
---@type tandem.Tool?
local asked = nil

--- The file a change call works on: its absolute path, and the path its diff names (relative to
--- the working directory, as the server's is to the session's folder).
---@param tool tandem.Tool
---@return string? file
---@return string? shown
local function change_file(tool)
  local location = tool.locations and tool.locations[1]
  local path = type(tool.arguments) == 'table' and tool.arguments.path or nil
  local file
  if type(location) == 'table' and type(location.uri) == 'string' then
    file = vim.uri_to_fname(location.uri)
  elseif type(path) == 'string' and path ~= '' then
    file = vim.fs.normalize(vim.fn.fnamemodify(path, ':p'))
  else
    return nil, nil
  end
  local shown = (type(path) == 'string' and path ~= '' and not vim.startswith(path, '/')) and path
    or vim.fn.fnamemodify(file, ':.')
  return file, shown
end

--- The text of `file` as the user sees it: its loaded buffer (unsaved changes included, which
--- is what the server edits), else the file on disk; nil when there is no such file.
---@param file string
---@return string?
local function source_text(file)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.fs.normalize(vim.api.nvim_buf_get_name(b)) == file then
      local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
      if vim.bo[b].eol or vim.bo[b].fixeol then
        text = text .. '\n'
      end
      return text
    end
  end
  local f = io.open(file, 'rb')
  if not f then
    return nil
  end
  local text = f:read('*a')
  f:close()
  return text
end

--- What `tool` (an edit or write the server asks about) would change, as the lines shown under
--- its tool line: a diff of the file with its line numbers, else (the arguments do not apply
--- exactly) the arguments' old and new text.
---@param tool tandem.Tool
---@return string[]?
local function proposed_change(tool)
  local max = config.options.chat.max_diff_lines or 0
  local file, shown = change_file(tool)
  if file and shown then
    local unified = proposal.diff(tool, source_text(file), shown)
    if unified then
      return diff.block(tool, unified, max, 'proposed')
    end
  end
  local preview = diff.preview(tool)
  if #preview == 0 then
    return nil
  end
  return diff.fenced(string.format('  %s (proposed)', shown or render.plain(tool.title)), preview, max)
end

--- A question from the server (window/showMessageRequest), written before the picker opens.
--- When it asks to apply an edit, what the edit changes is written first, under the edit's line
--- (the server's own diff replaces it when the edit ends, so the change is shown once), and the
--- chat is opened to show it.
---@param message string
function M.question(message)
  asked = nil
  local change = state.running_change
  if change and render.is_change_question(message) then
    asked = change
    if not transcript.has_change(change) then
      local lines = proposed_change(change)
      if lines then
        transcript.tool_change(change, lines)
      end
    end
    if config.options.chat.open_on_ask and not window.is_open() then
      M.open({ focus = false })
    end
  end
  transcript.append(render.question(message, config.options.chat.max_diff_lines or 0, window.text_width()))
  -- The picker may take the screen at once (the default vim.ui.select is inputlist()): the
  -- chat must show the change and the question before it does.
  window.scroll_to_end()
end

--- The answer to the last question.
---@param title? string nil when it was dismissed
function M.answer(title)
  if asked then
    asked.answer = title or 'dismissed'
    asked = nil
  end
  transcript.append(render.answer(title))
end

-- Notes from the plugin ---------------------------------------------------------------------

--- A line of the plugin's own (errors of requests, queued prompts).
---@param text string
function M.note(text)
  transcript.append(render.note(text))
end

function M.on_exit(code, signal)
  state.stop_all()
  if window.get() then
    M.note(render.server_exited(code, signal))
    M.update_state()
  end
end

return M
