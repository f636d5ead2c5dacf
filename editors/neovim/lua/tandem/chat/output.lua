-- How the chat shows a command's output (a bash call's): its last lines under the call's line,
-- fenced and indented, with a count of the lines left out above them; all of it once expanded
-- (Enter on the block, see transcript.lua). As the terminal mode's tool card shows it: the end
-- of the output while the command runs (6 lines), then the end of the result (12 lines).
--
-- The text comes from the repository and the model: it is sanitized (text.lua) before it
-- becomes buffer lines, so no escape sequence, carriage return or control character reaches
-- the screen, and a line never holds a line feed (nvim_buf_set_lines refuses those).
--
-- Pure: text in, lines out.

local text = require('tandem.text')

local M = {}

--- Lines shown while the command runs.
M.LIVE_LINES = 6
--- Lines shown once it ended.
M.DONE_LINES = 12

--- Whether the call `tool` runs a command whose output the chat shows.
---@param tool tandem.Tool
---@return boolean
function M.shows(tool)
  return tool.name == 'bash'
end

--- How many lines `output` shows (trailing blank lines left out).
---@param output? string
---@return integer
function M.count(output)
  local lines, skipped = text.tail(output or '', 1)
  return #lines + skipped
end

--- The fence around `lines`: more backticks than any run of them in the lines, so that output
--- holding ``` does not end the block.
---@param lines string[]
---@return string
local function fence(lines)
  local longest = 2
  for _, l in ipairs(lines) do
    for run in l:gmatch('`+') do
      longest = math.max(longest, #run)
    end
  end
  return string.rep('`', longest + 1)
end

--- The lines under a command's tool line: nothing for no output; else, when lines are left
--- out, a line that counts them, then the kept lines, fenced and indented. `running`: the
--- output so far (fewer lines); `expanded`: all of it.
---@param output? string the output (as tool_update and tool_end send it)
---@param running boolean
---@param expanded boolean
---@return string[]
function M.block(output, running, expanded)
  local keep = running and M.LIVE_LINES or M.DONE_LINES
  local all = text.tail(output or '', math.huge)
  if #all == 0 then
    return {}
  end
  local shown = all
  local out = {}
  if not expanded and #all > keep then
    shown = vim.list_slice(all, #all - keep + 1)
    local skipped = #all - keep
    table.insert(out, string.format('  … %d earlier %s (Enter: show all)', skipped, skipped == 1 and 'line' or 'lines'))
  elseif expanded and #all > keep then
    table.insert(out, string.format('  %d lines (Enter: show the last %d)', #all, keep))
  end
  local f = fence(shown)
  table.insert(out, '  ' .. f .. 'text')
  for _, l in ipairs(shown) do
    table.insert(out, l == '' and '' or ('  ' .. l))
  end
  table.insert(out, '  ' .. f)
  return out
end

return M
