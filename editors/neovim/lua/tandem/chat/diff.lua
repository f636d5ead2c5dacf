-- How the chat shows a change (an edit's or a write's): a unified diff as lines with the file's
-- own line numbers under a `file: +a -r` head saying what became of it, fenced and indented
-- under the call's line; or, before there is a diff, what the call's arguments replace.
--
-- Pure, as render.lua (whose helpers it uses): lines in, lines out, tested without an editor in
-- tests/chat_render.lua.

local proposal = require('tandem.chat.proposal')
local render = require('tandem.chat.render')
local sanitize = require('tandem.text').sanitize

local M = {}

--- "+3 -1" from a unified diff.
local function diff_stats(diff)
  local added, removed = 0, 0
  for _, line in ipairs(render.split_lines(diff)) do
    if line:sub(1, 1) == '+' and line:sub(1, 3) ~= '+++' then
      added = added + 1
    elseif line:sub(1, 1) == '-' and line:sub(1, 3) ~= '---' then
      removed = removed + 1
    end
  end
  return added, removed
end

--- The lines of a unified diff with the file's own line numbers, read from its hunk headers
--- (`@@ -3,7 +3,8 @@`: old and new lines from 3): `-  12 │ old`, `+  12 │ new`, `   13 │ same`
--- (a removed line has its old number, the others their new one). The `---`/`+++` header and
--- "\ No newline" lines are left out; a hunk header stays, as `@@ … @@`, between hunks.
--- Inside a hunk a line is read by the counts its header gives, so a removed line that starts
--- with "-- " is not taken for a file header.
---@param diff string
---@return string[]
function M.numbered(diff)
  local rows = {}
  local width = 1
  local old_line, new_line, old_left, new_left = 0, 0, 0, 0
  for _, text in ipairs(render.split_lines(diff)) do
    local o, oc, n, nc = text:match('^@@ %-(%d+),?(%d*) %+(%d+),?(%d*) @@')
    if o and old_left <= 0 and new_left <= 0 then
      old_line, new_line = tonumber(o), tonumber(n)
      old_left = oc == '' and 1 or tonumber(oc)
      new_left = nc == '' and 1 or tonumber(nc)
      table.insert(rows, { hunk = true })
    elseif (old_left > 0 or new_left > 0) and not vim.startswith(text, '\\') then
      local sign, number = text:sub(1, 1), nil
      if sign == '-' then
        number, old_line, old_left = old_line, old_line + 1, old_left - 1
      elseif sign == '+' then
        number, new_line, new_left = new_line, new_line + 1, new_left - 1
      else
        sign = ' '
        number = new_line
        old_line, new_line = old_line + 1, new_line + 1
        old_left, new_left = old_left - 1, new_left - 1
      end
      width = math.max(width, #tostring(number))
      table.insert(rows, { sign = sign, number = number, text = text:sub(2) })
    end
  end
  local out = {}
  for i, row in ipairs(rows) do
    if row.hunk then
      -- The first hunk needs no separator: the numbers say where it is.
      if i > 1 then
        table.insert(out, '@@ … @@')
      end
    else
      table.insert(out, string.format('%s%' .. width .. 'd │ %s', row.sign, row.number, row.text))
    end
  end
  return out
end

--- The file a unified diff is about (`+++ b/…`, else `--- a/…`), or nil.
---@param diff string
---@return string?
function M.file(diff)
  return diff:match('\n%+%+%+ b/([^\n]+)') or diff:match('^%-%-%- a/([^\n]+)')
end

--- The change under an edit's or write's tool line: `file: +a -r` with what became of it
--- (`note`: 'proposed', 'rejected, not applied', …), then the diff with the file's line numbers
--- (indented, fenced), at most `max` lines of it; none when `max` is 0.
---@param tool tandem.Tool
---@param diff string a unified diff
---@param max integer
---@param note? string
---@return string[]
function M.block(tool, diff, max, note)
  -- The file's text, from the repository: no escape or control character reaches the screen.
  diff = sanitize(diff)
  local added, removed = diff_stats(diff)
  local file = M.file(diff) or render.plain(tool.title)
  local head = string.format('  %s: +%d -%d', file, added, removed)
  if note and note ~= '' then
    head = head .. ' (' .. note .. ')'
  end
  return M.fenced(head, M.numbered(diff), max)
end

--- `head`, then `body` fenced as a diff and indented under a tool line, cut after `max` lines.
---@param head string
---@param body string[]
---@param max integer
---@return string[]
function M.fenced(head, body, max)
  local lines = { head }
  if max > 0 and #body > 0 then
    table.insert(lines, '  ```diff')
    for i, l in ipairs(body) do
      if i > max then
        table.insert(lines, '  ' .. render.more_lines(#body - max))
        break
      end
      table.insert(lines, '  ' .. l)
    end
    table.insert(lines, '  ```')
  end
  return lines
end

--- What became of an edit's or write's change, for the line above its diff: nil when applied.
---@param tool tandem.Tool
---@param is_error boolean the tool call failed
---@return string?
function M.change_note(tool, is_error)
  if not is_error then
    return nil
  end
  if tool.answer == 'Reject' or tool.answer == 'dismissed' then
    return 'rejected, not applied'
  end
  return 'not applied'
end

--- What an edit or write call proposes, from its arguments alone (when the file's text is not
--- at hand to diff against): the replaced and new text of each edit, or the content written.
---@param tool? tandem.Tool
---@return string[]
function M.preview(tool)
  local args = tool and tool.arguments
  if type(args) ~= 'table' then
    return {}
  end
  local out = {}
  local function add(prefix, text)
    for _, l in ipairs(render.split_lines(text)) do
      table.insert(out, prefix .. l)
    end
  end
  if tool.name == 'edit' then
    for i, edit in ipairs(proposal.edits(args) or {}) do
      if i > 1 then
        table.insert(out, '@@ … @@')
      end
      add('-', edit.oldText)
      add('+', edit.newText)
    end
  elseif tool.name == 'write' and type(args.content) == 'string' then
    add('+', args.content)
  end
  return out
end

return M
