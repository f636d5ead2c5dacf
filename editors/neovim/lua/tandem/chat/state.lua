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
---@field locations? table[]  where it works ({uri, line?}), from tool_start
---@field answer? string  the user's answer to the question about it ('Apply', 'Reject', 'dismissed'…)
---@field output? string  its output so far (tool_update), then its result's text (tool_end)

---@class tandem.Retry
---@field attempt integer|string
---@field max_attempts integer|string
---@field delay_ms number
---@field error string  the failure being retried
---@field result? 'succeeded'|'failed'|'ended'  how it ended (nil while it goes on)

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
---@field title? string     what the session is about: its name or first prompt (first line)
---@field failure? string   a failed model call's error, not shown yet: a retry takes it over,
---                         or it is shown once, as the run's error
---@field retry? tandem.Retry  the retry going on
---@field text_deltas? integer  text_delta events received (statistics)

---@type table<string, tandem.Session>
M.sessions = {}
---@type string? the session prompts go to and the state line describes
M.current = nil
--- The edit or write call running now: the server's confirmation question is about it.
---@type tandem.Tool?
M.running_change = nil
--- The bash call running now: the server's question to run a command is about it.
---@type tandem.Tool?
M.running_command = nil

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
  if not s.running then
    -- A new run (a retry's agent_start comes while the run goes on).
    s.failure = nil
  end
  s.running = true
  s.outcome = nil
  s.activity = nil
end

--- Returns what the run leaves unsaid: the error of a failed call that no retry and no `error`
--- event took over, and the retry that never ran (the run ended during its wait).
function transitions.settled(s)
  local unsaid = { failure = s.failure, retry = s.retry }
  if s.retry then
    s.retry.result = 'ended'
  end
  s.failure = nil
  s.retry = nil
  s.running = false
  s.settled = true
  s.activity = nil
  s.tools = {}
  return unsaid
end

function transitions.message_start(s, e)
  if e.role == 'user' and not s.title and type(e.text) == 'string' then
    local title = vim.trim((e.text:gsub('^<editor%-context>.-</editor%-context>%s*', '')))
    title = title:match('^[^\n]*')
    if title ~= '' then
      s.title = title
    end
  end
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
  tool.locations = type(e.locations) == 'table' and e.locations or nil
  s.activity = e.title
  if tool.name == 'edit' or tool.name == 'write' then
    M.running_change = tool
  elseif tool.name == 'bash' then
    M.running_command = tool
  end
end

function transitions.tool_update(s, e)
  if type(e.text) == 'string' then
    M.tool(s, e.toolCallId, nil).output = e.text
  end
end

function transitions.tool_end(s, e)
  local tool = M.tool(s, e.toolCallId, e.name)
  if type(e.text) == 'string' and e.text ~= '' then
    tool.output = e.text
  end
  if M.running_change == tool then
    M.running_change = nil
  end
  if M.running_command == tool then
    M.running_command = nil
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
    -- Shown later, once: by the retry that takes it over, or as the run's error.
    s.failure = message.errorMessage or 'the model call failed'
  end
  return repaired
end

--- Returns the retry (its line is written, or rewritten for a later attempt).
function transitions.retry_start(s, e)
  local retry = s.retry or {}
  retry.attempt = e.attempt or '?'
  retry.max_attempts = e.maxAttempts or '?'
  retry.delay_ms = tonumber(e.delayMs) or 0
  retry.error = e.errorMessage or s.failure or ''
  retry.result = nil
  s.retry = retry
  -- The failed call's error is the retry's now: not an error unless the retries give up.
  s.failure = nil
  return retry
end

--- Returns the retry that ended (nil when none was going on).
function transitions.retry_end(s, e)
  local retry = s.retry or { attempt = e.attempt or '?', max_attempts = '?', delay_ms = 0, error = '' }
  s.retry = nil
  retry.attempt = e.attempt or retry.attempt
  if e.success then
    retry.result = 'succeeded'
  else
    retry.result = 'failed'
    -- Now it is an error, shown once: by the run's `error` event, else when it settles.
    s.failure = e.finalError or (retry.error ~= '' and retry.error) or 'the retries failed'
  end
  return retry
end

function transitions.compaction_start(s, e)
  s.activity = 'compacting'
  if e.reason == 'overflow' then
    -- The call that overflowed is recovered by the compaction: its error is not final.
    s.failure = nil
  end
end

function transitions.compaction_end(s)
  s.activity = nil
end

function transitions.queue_update(s, e)
  s.queue = { steering = e.steering or {}, followUp = e.followUp or {} }
end

function transitions.error(s)
  s.outcome = 'error'
  -- The run's error says it all: the failed call's own error is not shown besides.
  s.failure = nil
end

--- Applies event `e` to session `s`. Returns what the transcript needs beyond the event: for a
--- message_end, true when it ends a gap (its whole text stands for the deltas that were
--- missed); for retry_start and retry_end, the retry; for settled, what is left unsaid.
---@param s tandem.Session
---@param e table
---@return any
function M.apply(s, e)
  local transition = transitions[e.type]
  if not transition then
    return nil
  end
  return transition(s, e)
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
