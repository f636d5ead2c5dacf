-- What an edit or write call proposes, as a unified diff of the file with its own line numbers,
-- made before the server asks whether to apply it.
--
-- Why the plugin computes it: Neovim declares no change-annotation support, so in confirm mode
-- the server asks first (window/showMessageRequest: "Tandem wants to edit main.py (+1/-1
-- lines)") and only then sends the edit; the diff it computes comes with `tool_end`, after the
-- answer. The call's arguments are already here (`toolcall_end`), and the file's text is the
-- buffer the user sees, so the plugin applies the arguments to that text as the edit tool does
-- (each `oldText` found exactly once, non-overlapping) and diffs the two with Neovim's own
-- xdiff. When the arguments do not apply that simply (the tool also matches loosely, e.g.
-- ignoring trailing whitespace), there is no diff here and the chat falls back to the
-- arguments' text; either way the server's diff replaces it when the call ends.
--
-- Pure: the caller reads the file's text; nothing here touches a buffer or the server.

local M = {}

--- The `edits` of an edit call, in every argument form the edit tool accepts: `edits` as a
--- list or as a JSON string, and a top-level `oldText` / `newText` (appended). Nil when there
--- are none or one is not a pair of strings.
---@param args table
---@return {oldText: string, newText: string}[]?
function M.edits(args)
  local edits = args.edits
  if type(edits) == 'string' then
    local ok, parsed = pcall(vim.json.decode, edits)
    edits = ok and parsed or nil
  end
  local out = {}
  if type(edits) == 'table' then
    for _, edit in ipairs(edits) do
      if type(edit) ~= 'table' or type(edit.oldText) ~= 'string' or type(edit.newText) ~= 'string' then
        return nil
      end
      table.insert(out, { oldText = edit.oldText, newText = edit.newText })
    end
  end
  if type(args.oldText) == 'string' and type(args.newText) == 'string' then
    table.insert(out, { oldText = args.oldText, newText = args.newText })
  end
  return #out > 0 and out or nil
end

--- The text the call `tool` would leave in a file whose text is `old` (nil: no such file).
--- Nil when the arguments do not apply exactly.
---@param tool tandem.Tool
---@param old? string
---@return string?
function M.apply(tool, old)
  local args = tool.arguments
  if type(args) ~= 'table' then
    return nil
  end
  if tool.name == 'write' then
    return type(args.content) == 'string' and args.content or nil
  end
  if tool.name ~= 'edit' or not old then
    return nil
  end
  local edits = M.edits(args)
  if not edits then
    return nil
  end
  local spans = {}
  for _, edit in ipairs(edits) do
    if edit.oldText == '' then
      return nil
    end
    local first, last = old:find(edit.oldText, 1, true)
    -- Found once: a second occurrence makes the tool refuse the edit.
    if not first or old:find(edit.oldText, first + 1, true) then
      return nil
    end
    table.insert(spans, { first = first, last = last, text = edit.newText })
  end
  table.sort(spans, function(a, b)
    return a.first < b.first
  end)
  local parts, at = {}, 1
  for _, span in ipairs(spans) do
    if span.first < at then
      return nil -- overlapping edits
    end
    table.insert(parts, old:sub(at, span.first - 1))
    table.insert(parts, span.text)
    at = span.last + 1
  end
  table.insert(parts, old:sub(at))
  return table.concat(parts)
end

local diff = vim.text and vim.text.diff or vim.diff

--- A unified diff from `old` to `new` of the file `path` (relative to the session's folder),
--- with 3 lines of context, as the server writes one: `--- a/path` (`--- /dev/null` for a new
--- file, `old` nil), `+++ b/path`, hunks with the file's line numbers. Nil when nothing changes.
---@param path string
---@param old? string
---@param new string
---@return string?
function M.unified(path, old, new)
  local hunks = diff(old or '', new, { result_type = 'unified', ctxlen = 3 })
  if type(hunks) ~= 'string' or hunks == '' then
    return nil
  end
  local from = old and ('a/' .. path) or '/dev/null'
  return string.format('--- %s\n+++ b/%s\n%s', from, path, hunks)
end

--- The diff of what `tool` proposes against `old`, the file's text (nil: the file does not
--- exist); nil when the arguments do not apply exactly or change nothing.
---@param tool tandem.Tool
---@param old? string
---@param path string the file, as the diff names it
---@return string?
function M.diff(tool, old, path)
  local new = M.apply(tool, old)
  if not new then
    return nil
  end
  return M.unified(path, old, new)
end

return M
