-- The chat's data: a record per session the plugin has heard of (running or not, the last
-- sequence number, the queue, the tool calls of its run, its model), which one is current, and
-- how each `tandem/event` changes them.
--
-- Pure Lua: nothing here touches a buffer, a window or the server, so the state line and the
-- transcript can be rendered from it and tested without an editor. The transcript itself is not
-- kept here: the chat buffer is the transcript (see transcript.lua for why).

local M = {}

---@class tandem.Tool
---@field name string
---@field title? string
---@field arguments? table  the call's arguments, once complete (toolcall_end)

---@class tandem.Session
---@field id string
---@field running boolean
---@field settled boolean   a run ended at least once
---@field last_seq integer
---@field gap boolean       deltas were missed: take the next message_end as the full text
---@field tools table<string, tandem.Tool>  the calls of the current run, by id
---@field queue {steering: string[], followUp: string[]}
---@field model? string
---@field activity? string  the current tool's title
---@field outcome? string   how the last run ended: 'aborted' | 'error'
---@field text_deltas? integer  text_delta events received (statistics)

---@type table<string, tandem.Session>
M.sessions = {}
---@type string? the session prompts go to and the state line describes
M.current = nil
--- The edit or write call running now: the server's confirmation question is about it.
---@type tandem.Tool?
M.running_change = nil

--- The session `id`, created on first use.
---@param id string
---@return tandem.Session
function M.session(id)
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

---@return tandem.Session?
function M.current_session()
  return M.current and M.sessions[M.current]
end

--- Takes the sequence number of an event of `s`: 'stale' when it was seen already (drop the
--- event), 'gap' when some before it were missed (the session is marked: see `gap`), else 'next'.
---@param s tandem.Session
---@param seq any the notification's `seq` (events without one are always taken)
---@return 'next'|'gap'|'stale'
function M.receive(s, seq)
  seq = tonumber(seq)
  if not seq then
    return 'next'
  end
  if seq <= s.last_seq then
    return 'stale'
  end
  local gap = seq > s.last_seq + 1 and s.last_seq > 0
  if gap then
    s.gap = true
  end
  s.last_seq = seq
  return gap and 'gap' or 'next'
end

--- The tool call `id` of `s`, created (named `name`, else 'tool') on first mention.
---@param s tandem.Session
---@param id string
---@param name? string
---@return tandem.Tool
function M.tool(s, id, name)
  local tool = s.tools[id]
  if not tool then
    tool = { name = name or 'tool' }
    s.tools[id] = tool
  end
  return tool
end

local transitions = {}

function transitions.agent_start(s)
  s.running = true
  s.outcome = nil
  s.activity = nil
end

function transitions.settled(s)
  s.running = false
  s.settled = true
  s.activity = nil
  s.tools = {}
end

function transitions.text_delta(s)
  s.text_deltas = (s.text_deltas or 0) + 1
end

function transitions.toolcall_start(s, e)
  M.tool(s, e.toolCallId, e.name)
end

function transitions.toolcall_end(s, e)
  M.tool(s, e.toolCallId, nil).arguments = e.arguments
end

function transitions.tool_start(s, e)
  local tool = M.tool(s, e.toolCallId, e.name)
  tool.name = e.name or tool.name
  tool.title = e.title
  s.activity = e.title
  if tool.name == 'edit' or tool.name == 'write' then
    M.running_change = tool
  end
end

function transitions.tool_end(s, e)
  local tool = M.tool(s, e.toolCallId, e.name)
  if M.running_change == tool then
    M.running_change = nil
  end
  s.activity = nil
end

function transitions.message_end(s, e)
  local message = e.message or {}
  if message.role ~= 'assistant' then
    return false
  end
  local repaired = s.gap
  s.gap = false
  if message.stopReason == 'aborted' then
    s.outcome = 'aborted'
  elseif message.stopReason == 'error' then
    s.outcome = 'error'
  end
  return repaired
end

function transitions.compaction_start(s)
  s.activity = 'compacting'
end

function transitions.compaction_end(s)
  s.activity = nil
end

function transitions.queue_update(s, e)
  s.queue = { steering = e.steering or {}, followUp = e.followUp or {} }
end

function transitions.error(s)
  s.outcome = 'error'
end

--- Applies event `e` to session `s`. Returns true when `e` ends a gap: a message_end whose whole
--- text stands for the deltas that were missed.
---@param s tandem.Session
---@param e table
---@return boolean repaired
function M.apply(s, e)
  local transition = transitions[e.type]
  return transition ~= nil and transition(s, e) == true
end

--- Events that change what the state line shows.
M.STATE_LINE_EVENTS = {
  agent_start = true,
  settled = true,
  tool_start = true,
  tool_end = true,
  queue_update = true,
  compaction_start = true,
  compaction_end = true,
  error = true,
}

--- Forgets the tool calls of every session: their lines went with the chat buffer, and a later
--- event about one of them starts it afresh.
function M.forget_tools()
  for _, s in pairs(M.sessions) do
    s.tools = {}
  end
end

--- The server is gone: no session runs any more.
function M.stop_all()
  for _, s in pairs(M.sessions) do
    s.running = false
  end
end

return M
