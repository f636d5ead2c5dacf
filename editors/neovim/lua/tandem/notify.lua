-- The plugin's messages, made so that Neovim never stops to ask "Press ENTER or type command to
-- continue".
--
-- Neovim asks that whenever a message needs more room than the command line has: a message of
-- two lines, or one longer than the last line (`v:echospace` cells, more with 'cmdheight'), or
-- one echoed while an earlier message still holds the screen (after inputlist(), the default
-- vim.ui.select). So a message here is one line, cut to the room there is, shown after a redraw
-- has cleared what inputlist() left; a status (a run's progress) is echoed so too, without
-- history. Whatever the cut leaves out is in the chat (errors and the server's messages are
-- written there in full) or in the LSP log.
--
-- A vim.notify replaced by a plugin (nvim-notify, noice, snacks, fidget) shows messages in its
-- own windows: it gets the whole text.

local M = {}

--- Whether `fn` is still Neovim's own, defined in `file` (a runtime Lua file).
---@param fn function
---@param file string
---@return boolean
local function builtin(fn, file)
  local info = debug.getinfo(fn, 'S')
  return info ~= nil and info.source ~= nil and vim.endswith(info.source, file)
end

--- Whether vim.notify is still Neovim's own, which echoes into the command line.
---@return boolean
local function builtin_notify()
  return builtin(vim.notify, 'vim/_editor.lua')
end

--- `text` as the lines the command line shows it in: wrapped at spaces to the screen's width
--- (the message area itself cuts lines at any character, inside words and paths), a word
--- longer than the width cut where the width ends.
---@param text string
---@return string[]
function M.wrap(text)
  return require('tandem.text').wrap(text, vim.o.columns - 1)
end

--- The prompt of a question for vim.ui.select: for Neovim's own (inputlist(), which prints it
--- in the message area) wrapped at word boundaries for the screen (M.wrap); a replacement
--- (telescope, dressing, fzf-lua, snacks) shows it its own way and gets it as it is.
---@param text string
---@return string
function M.select_prompt(text)
  if builtin(vim.ui.select, 'vim/ui.lua') then
    return table.concat(M.wrap(text), '\n')
  end
  return text
end

--- The cells a message may use without a hit-enter prompt.
---@return integer
function M.room()
  local echospace = tonumber(vim.v.echospace) or (vim.o.columns - 12)
  return math.max(20, (vim.o.cmdheight - 1) * vim.o.columns + echospace)
end

--- `text` as one line of at most `width` cells: its lines joined, cut with an ellipsis.
---@param text string
---@param width? integer
---@return string
function M.fit(text, width)
  width = width or M.room()
  local line = vim.trim((text:gsub('%s*\n%s*', ' · '):gsub('%s+', ' ')))
  if vim.fn.strdisplaywidth(line) <= width then
    return line
  end
  -- Characters, not bytes: never cut inside a multi-byte character.
  local keep = math.min(vim.fn.strchars(line), width - 1)
  local cut = vim.fn.strcharpart(line, 0, keep)
  while keep > 0 and vim.fn.strdisplaywidth(cut) > width - 1 do
    keep = keep - 1
    cut = vim.fn.strcharpart(line, 0, keep)
  end
  return cut .. '…'
end

--- Tells the user `text` with vim.notify: one line that fits (see above) unless vim.notify was
--- replaced by a plugin that shows messages its own way. Returns true when the text was cut
--- (the caller may show it whole elsewhere).
---@param text string
---@param level? integer vim.log.levels
---@return boolean cut
function M.show(text, level)
  if not builtin_notify() then
    vim.notify(text, level)
    return false
  end
  local shown = M.fit(text)
  if not vim.api.nvim_get_mode().blocking then
    -- What inputlist() left on the screen would make even one line ask for ENTER.
    vim.cmd.redraw()
  end
  vim.notify(shown, level)
  return shown ~= vim.trim(text)
end

--- Echoes a status (no history), one line that fits. When a message that needed more than the
--- command line (inputlist()'s list) still holds the screen, a redraw clears it first: echoing
--- below it would make Neovim ask for ENTER.
---@param text string
---@param hl? string
function M.status(text, hl)
  local mode = vim.api.nvim_get_mode()
  if mode.blocking or mode.mode:match('^[cr]') then
    -- Waiting for input (a prompt, a picker, the command line): a status would be in the way.
    return
  end
  vim.cmd.redraw()
  vim.api.nvim_echo({ { M.fit(text), hl or 'Comment' } }, false, {})
end

return M
