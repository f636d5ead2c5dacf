-- Every piece of text the chat shows, built from a session's state or an event as plain lines.
--
-- Pure: no buffer, no window, no option lookups (the caller passes the diff limit), so each
-- function is a value in and lines out, tested without an editor in tests/chat_render.lua.
-- Writing the lines, and deciding where they go, is the transcript's job.
--
-- A block is a list of lines that starts with '' (the blank line that separates it from what is
-- above). There are no highlight ranges: the chat buffer is markdown, and Neovim's markdown
-- syntax colours these lines (headings, `_notes_`, `> ` thinking, ```diff fences).

local M = {}

--- The first 8 characters of a session id: enough to tell sessions apart on one screen.
---@param id? string
---@return string
function M.short(id)
  return id and id:sub(1, 8) or '?'
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
    table.insert(parts, 'running' .. (s.activity and (': ' .. s.activity) or ''))
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

--- The line that separates the events of one session from another's.
---@param note? string why the chat moved to this session ('session' when nil)
---@param id string
---@return string[] block
function M.divider(note, id)
  return { '', string.format('── %s %s ──', note or 'session', M.short(id)) }
end

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
--- so that no two blank lines meet.
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
  elseif reason == 'error' then
    table.insert(blocks, M.error(message.errorMessage, 'the model call failed'))
  elseif reason == 'length' then
    table.insert(blocks, { '', '_(stopped: the output length limit was reached)_' })
  end
  return blocks
end

-- Tools ---------------------------------------------------------------------------------------

local ICON = { pending = '…', running = '▶', done = '✓', failed = '✗' }

--- A tool call's one line, rewritten in place as its status changes.
---@param tool tandem.Tool
---@param status 'pending'|'running'|'done'|'failed'
---@param extra? string what follows the label (a failure's first line)
---@return string
function M.tool_line(tool, status, extra)
  local label = tool.title or ('`' .. tool.name .. '`')
  local line = string.format('- %s %s', ICON[status], label)
  if extra and extra ~= '' then
    line = line .. ' — ' .. extra
  end
  return line
end

--- "+3 -1" from a unified diff.
local function diff_stats(diff)
  local added, removed = 0, 0
  for _, line in ipairs(M.split_lines(diff)) do
    if line:sub(1, 1) == '+' and line:sub(1, 3) ~= '+++' then
      added = added + 1
    elseif line:sub(1, 1) == '-' and line:sub(1, 3) ~= '---' then
      removed = removed + 1
    end
  end
  return added, removed
end

--- The diff under an edit's or write's tool line: `file: +a -r`, then the diff itself (indented,
--- fenced), at most `max` lines of it; none when `max` is 0.
---@param tool tandem.Tool
---@param diff string
---@param max integer
---@return string[]
function M.diff(tool, diff, max)
  local added, removed = diff_stats(diff)
  local file = diff:match('\n%+%+%+ b/([^\n]+)') or diff:match('^%-%-%- a/([^\n]+)') or tool.title or ''
  local lines = { string.format('  %s: +%d -%d', file, added, removed) }
  local body = {}
  for _, l in ipairs(M.split_lines(diff)) do
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
  return lines
end

-- Other events ----------------------------------------------------------------------------------

---@param e table a retry_start event
---@return string[] block
function M.retry_start(e)
  return {
    '',
    string.format(
      '_Retrying (attempt %s of %s, in %.1f s): %s_',
      tostring(e.attempt),
      tostring(e.maxAttempts),
      (tonumber(e.delayMs) or 0) / 1000,
      M.first_line(e.errorMessage)
    ),
  }
end

--- Nil when the retry succeeded: the answer that follows says so.
---@param e table a retry_end event
---@return string[]? block
function M.retry_end(e)
  if e.success then
    return nil
  end
  return { '', '_Retry failed: ' .. M.first_line(e.finalError or '') .. '_' }
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
    for _, l in ipairs(M.split_lines(text)) do
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

--- A question from the server: its first line, then its body as a diff of at most `max` lines.
--- A one-line question about an edit or a file creation gets the preview of `change`, the edit
--- or write call running now.
---@param message string
---@param change? tandem.Tool
---@param max integer
---@return string[] block
function M.question(message, change, max)
  local lines = M.split_lines(message)
  local out = { '', '**Tandem asks:** ' .. lines[1] }
  local body = {}
  for i = 2, #lines do
    table.insert(body, lines[i])
  end
  if #body == 0 and (message:find('^Tandem wants to edit ') or message:find('^Tandem wants to create ')) then
    body = M.preview(change)
  end
  if #body > 0 then
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
