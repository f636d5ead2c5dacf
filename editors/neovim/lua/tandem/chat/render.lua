-- Every piece of text the chat shows, built from a session's state or an event as plain lines.
--
-- Pure: no buffer, no window, no option lookups (the caller passes the diff limit), so each
-- function is a value in and lines out, tested without an editor in tests/chat_render.lua.
-- Writing the lines, and deciding where they go, is the transcript's job. How a change (an
-- edit's diff) is shown is in chat/diff.lua.
--
-- A block is a list of lines that starts with '' (the blank line that separates it from what is
-- above). There are no highlight ranges: the chat buffer is markdown, and Neovim's markdown
-- syntax colours these lines (headings, `_notes_`, `> ` thinking, ```diff fences).

local sanitize = require('tandem.text').sanitize
local wrap = require('tandem.text').wrap

local M = {}

--- A session id as the chat names it. Session ids are UUIDv7s, whose first digits are a
--- timestamp shared by sessions made close together, so a UUID is named by its last 8 (random)
--- hex digits; another (opaque) id is shown whole.
---@param id? string
---@return string
function M.short(id)
  if not id then
    return '?'
  end
  local hex = id:gsub('-', '')
  if #hex == 32 and not hex:find('[^%x]') then
    return hex:sub(-8):lower()
  end
  return id
end

--- `text` on one line, at most `max` characters (an ellipsis when cut).
---@param text? string
---@param max integer
---@return string
function M.one_line(text, max)
  text = vim.trim((text or ''):gsub('%s+', ' '))
  local count, cut_at = 0, nil
  -- Each character starts with a byte that is not a UTF-8 continuation byte.
  for pos in text:gmatch('()[^\128-\191]') do
    count = count + 1
    if count == max then
      cut_at = pos
    end
  end
  if count <= max or not cut_at then
    return text
  end
  return text:sub(1, cut_at - 1) .. '…'
end

---@param text? string
---@return string[]
function M.split_lines(text)
  return vim.split(text or '', '\n', { plain = true, trimempty = false })
end

---@param text? string
---@return string
function M.first_line(text)
  return (text or ''):match('^[^\n]*') or ''
end

--- The last line of `text` that is not blank.
---@param text? string
---@return string
function M.last_line(text)
  return (text or ''):match('([^\n]*%S[^\n]*)%s*$') or ''
end

--- "… 3 more lines": what a cut left out.
---@param n integer
---@return string
function M.more_lines(n)
  return string.format('… %d more %s', n, n == 1 and 'line' or 'lines')
end

-- The state line ------------------------------------------------------------------------------

--- The first line of the chat: what session `s` (the current one) is doing.
---@param s? tandem.Session
---@return string
function M.state_line(s)
  if not s then
    return 'Tandem: no session yet (:TandemAsk {question})'
  end
  local parts = {}
  if s.running then
    table.insert(parts, 'running' .. (s.activity and (': ' .. M.plain(s.activity)) or ''))
  elseif s.settled then
    table.insert(parts, 'settled' .. (s.outcome and (' (' .. s.outcome .. ')') or ''))
  else
    table.insert(parts, 'idle')
  end
  if s.model then
    table.insert(parts, s.model)
  end
  table.insert(parts, 'session ' .. M.short(s.id))
  local steering, follow = #(s.queue.steering or {}), #(s.queue.followUp or {})
  if steering + follow > 0 then
    table.insert(parts, string.format('queued: %d steering, %d follow-up', steering, follow))
  end
  return 'Tandem: ' .. table.concat(parts, ' · ')
end

-- Structure -----------------------------------------------------------------------------------

--- The line that separates the events of one session from another's: the session's short id
--- and, once known, what it is about (its title or first prompt).
---@param note? string why the chat moved to this session ('session' when nil)
---@param id string
---@param title? string
---@return string[] block
function M.divider(note, id, title)
  local about = title and title ~= '' and (': ' .. M.one_line(title, 50)) or ''
  return { '', string.format('── %s %s%s ──', note or 'session', M.short(id), about) }
end

--- Who speaks: every user message gets its label, and so does each answer that follows one.
---@param role 'user'|'assistant'
---@return string[] block
function M.header(role)
  return { '', role == 'user' and '## You' or '## Tandem' }
end

--- The first line of a streamed block: empty for text, `> ` for thinking shown as it streams.
M.THINKING_PREFIX = '> '
--- The one line a thinking block gets when reasoning is not shown.
M.THINKING_HIDDEN = '> _thinking…_'

--- A delta as the parts nvim_buf_set_text takes: the first continues the last line, each later
--- one is a new line and gets `prefix`. Nil for an empty delta.
---@param text string
---@param prefix? string
---@return string[]?
function M.stream(text, prefix)
  if text == '' then
    return nil
  end
  local parts = vim.split(text, '\n', { plain = true })
  if prefix and #parts > 1 then
    for i = 2, #parts do
      parts[i] = prefix .. parts[i]
    end
  end
  return parts
end

-- Messages ------------------------------------------------------------------------------------

--- One line summing up an `<editor-context>` block: the file, the selection or cursor, and
--- whether diagnostics came with it. Nil for an empty context.
---@param block? string
---@return string? summary
function M.context_summary(block)
  if not block or block == '' then
    return nil
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
  if #parts == 0 then
    return 'editor context'
  end
  return table.concat(parts, ' · ')
end

--- Splits an editor context written before a prompt (as older servers sent it, and as old
--- session files hold it) from the prompt: returns the context's one-line summary (nil when
--- there is none) and the prompt.
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
  return M.context_summary('\n' .. block), rest
end

--- A prompt: the editor context it was sent with (the event's `context`) summarized in one
--- line, then the prompt.
---@param text string
---@param context? string
---@return string[] block
function M.user_message(text, context)
  local out = { '' }
  local summary, prompt = M.split_context(text)
  summary = M.context_summary(context) or summary
  if summary then
    table.insert(out, '_Context: ' .. summary .. '_')
    table.insert(out, '')
  end
  vim.list_extend(out, M.split_lines(prompt))
  return out
end

local NOTED_ROLES = { bashExecution = true, custom = true, branchSummary = true, compactionSummary = true }

--- A message that is neither the user's nor the model's (a `!command`, a summary…): its role and
--- first line. Nil for other roles and for an empty text.
---@param role? string
---@param text? string
---@return string[]? block
function M.other_message(role, text)
  if not NOTED_ROLES[role] or not text or text == '' then
    return nil
  end
  return { '', string.format('_%s:_ %s', role, M.first_line(text)) }
end

--- The text of a message's `kind` blocks ('text' or 'thinking'), one blank line between them.
---@param message table
---@param kind string
---@return string
function M.message_text(message, kind)
  local out = {}
  for _, block in ipairs(message and message.content or {}) do
    if type(block) == 'table' and block.type == kind then
      table.insert(out, block[kind] or block.text or '')
    end
  end
  return table.concat(out, '\n\n')
end

---@param message? string
---@param default string what failed, when the message is missing
---@return string[] block
function M.error(message, default)
  local lines = M.split_lines('**Error:** ' .. (message or default))
  table.insert(lines, 1, '')
  return lines
end

--- What the end of an assistant message adds: the whole text when deltas were missed
--- (`repaired`), then how it stopped when that is worth saying. Each block is written on its own,
--- so that no two blank lines meet. A failed call's error is not here: it waits to be shown
--- once, by the retry that takes it over or as the run's error (see `state.failure`).
---@param message table
---@param repaired? boolean
---@return string[][] blocks
function M.message_end(message, repaired)
  local blocks = {}
  if repaired then
    local text = M.message_text(message, 'text')
    if text ~= '' then
      table.insert(blocks, { '', '_(some of the stream was missed; the whole message:)_' })
      table.insert(blocks, M.split_lines(text))
    end
  end
  local reason = message.stopReason
  if reason == 'aborted' then
    table.insert(blocks, { '', '_Aborted._' })
  elseif reason == 'length' then
    table.insert(blocks, { '', '_(stopped: the output length limit was reached)_' })
  end
  return blocks
end

-- Tools ---------------------------------------------------------------------------------------

local ICON = { pending = '…', running = '▶', done = '✓', failed = '✗' }

--- A tool's title as the chat shows it: without the backticks the server puts around code
--- ("Run `cargo test`"), which a plain markdown buffer would show as they are.
---@param title? string
---@return string
function M.plain(title)
  return ((title or ''):gsub('`', ''))
end

--- A tool call's one line, rewritten in place as its status changes.
---@param tool tandem.Tool
---@param status 'pending'|'running'|'done'|'failed'
---@param extra? string what follows the label (a failure's first line)
---@return string
function M.tool_line(tool, status, extra)
  local label = tool.title and M.plain(tool.title) or tool.name
  local line = string.format('- %s %s', ICON[status], label)
  if extra and extra ~= '' then
    line = line .. ' — ' .. extra
  end
  -- From the model and the repository: one safe line.
  return (sanitize(line):gsub('\n', ' '))
end

-- Other events ----------------------------------------------------------------------------------

--- A short name for a transient failure: the HTTP statuses providers retry get a plain name
--- ("Rate limited (429)"); anything else is the error's first line.
---@param err? string
---@return string
function M.failure_reason(err)
  err = err or ''
  local status
  for code in err:gmatch('%f[%w.](%d%d%d)%f[^%w.]') do
    if code == '429' or code == '500' or code == '502' or code == '503' or code == '504' or code == '529' then
      status = code
      break
    end
  end
  if status == '429' then
    return 'Rate limited (429)'
  elseif status == '529' then
    return 'Overloaded (529)'
  elseif status == '503' then
    return 'Service unavailable (503)'
  elseif status then
    return 'Server error (' .. status .. ')'
  end
  local lower = err:lower()
  if lower:find('rate.?limit') then
    return 'Rate limited'
  elseif lower:find('overloaded') then
    return 'Overloaded'
  end
  local line = M.one_line(M.first_line(err), 120)
  return line ~= '' and line or 'The model call failed'
end

--- "50 ms", "2 s", "2.5 s".
---@param ms? number
---@return string
function M.delay(ms)
  ms = tonumber(ms) or 0
  if ms < 1000 then
    return string.format('%d ms', math.max(0, math.floor(ms + 0.5)))
  end
  local tenths = math.floor(ms / 100 + 0.5)
  if tenths % 10 == 0 then
    return string.format('%d s', tenths / 10)
  end
  return string.format('%.1f s', tenths / 10)
end

--- The one line of a retry, rewritten in place as it goes: a neutral note, not an error (the
--- error is shown only if the retries give up).
---@param retry tandem.Retry
---@return string
function M.retry_line(retry)
  local reason = M.failure_reason(retry.error)
  if retry.result == 'succeeded' then
    return string.format('_%s: retry %s succeeded._', reason, tostring(retry.attempt))
  elseif retry.result == 'failed' then
    local n = tonumber(retry.attempt) or 1
    return string.format('_%s: gave up after %d %s._', reason, n, n == 1 and 'retry' or 'retries')
  elseif retry.result == 'ended' then
    return string.format('_%s: not retried, the run ended._', reason)
  end
  return string.format(
    '_%s, retrying in %s… (attempt %s of %s)_',
    reason,
    M.delay(retry.delay_ms),
    tostring(retry.attempt),
    tostring(retry.max_attempts)
  )
end

---@param e table a compaction_start event
---@return string[] block
function M.compaction_start(e)
  return { '', string.format('_Compacting the context (%s)…_', tostring(e.reason)) }
end

---@param e table a compaction_end event
---@return string[] block
function M.compaction_end(e)
  if e.aborted then
    return { '', '_Compaction aborted._' }
  elseif e.errorMessage then
    return { '', '_Compaction failed: ' .. M.first_line(e.errorMessage) .. '_' }
  end
  return { '', string.format('_Compacted (%s tokens before)._', tostring(e.tokensBefore or '?')) }
end

-- Questions and notes -------------------------------------------------------------------------

--- Whether a question from the server asks to apply an edit or a new file (its change is then
--- shown under the call's line before the question).
---@param message string
---@return boolean
function M.is_change_question(message)
  return message:find('^Tandem wants to edit ') ~= nil or message:find('^Tandem wants to create ') ~= nil
end

--- Whether a question from the server asks to run a command (bash).
---@param message string
---@return boolean
function M.is_command_question(message)
  return message:find('^Tandem wants to run: ') ~= nil
end

--- A question from the server: its first line, then the rest of it (a list of what would run,
--- for instance) fenced, at most `max` lines. What an edit would change is not here: it is under
--- the edit's own line, written before the question. With `width`, the first line is wrapped at
--- spaces to lines of at most that many cells (the window's own wrapping, 'linebreak', would
--- cut words at any "-", "/" or "." of a command or a path); a word longer than the width (a
--- long path) is cut where the width ends, never before a `_` or `*` (which would start
--- emphasis there).
---@param message string
---@param max integer
---@param width? integer
---@return string[] block
function M.question(message, max, width)
  local lines = M.split_lines(sanitize(message))
  local out = { '' }
  local first = '**Tandem asks:** ' .. lines[1]
  if width then
    vim.list_extend(out, wrap(first, width, { markdown = true }))
  else
    table.insert(out, first)
  end
  local body = {}
  for i = 2, #lines do
    table.insert(body, lines[i])
  end
  if #body > 0 then
    table.insert(out, '```')
    for i, l in ipairs(body) do
      if max > 0 and i > max then
        table.insert(out, M.more_lines(#body - max))
        break
      end
      table.insert(out, l)
    end
    table.insert(out, '```')
  end
  return out
end

--- The answer to the last question, right under it.
---@param title? string nil when it was dismissed
---@return string[]
function M.answer(title)
  return { '→ ' .. (title or 'dismissed') }
end

--- A line of the plugin's own (errors of requests, queued prompts).
---@param text string
---@return string[] block
function M.note(text)
  local lines = M.split_lines(text)
  table.insert(lines, 1, '')
  return lines
end

---@return string
function M.server_exited(code, signal)
  return string.format('_The Tandem server exited (code %s, signal %s)._', tostring(code), tostring(signal))
end

return M
