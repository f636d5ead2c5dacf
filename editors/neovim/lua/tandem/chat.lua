-- The chat: one scratch markdown buffer that shows the `tandem/event` stream of every session,
-- with the current session's state on its first line ("Tandem: running · …" / "settled").
--
-- This module is the chat's front door for the rest of the plugin: it takes the server's events
-- and the plugin's notes, and passes them along:
--   chat/state.lua       the sessions and how events change them (pure)
--   chat/render.lua      the text of every line (pure)
--   chat/transcript.lua  writes that text into the buffer as events arrive
--   chat/window.lua      the buffer's making, its windows, `q`, scrolling

local config = require('tandem.config')
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
M.preview = render.preview

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

-- Notes from the plugin ---------------------------------------------------------------------

--- A question from the server (window/showMessageRequest): shown before the picker opens.
---@param message string
function M.question(message)
  transcript.append(render.question(message, state.running_change, config.options.chat.max_diff_lines or 0))
end

--- The answer to the last question.
---@param title? string
function M.answer(title)
  transcript.append(render.answer(title))
end

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
