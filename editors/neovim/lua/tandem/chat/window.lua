-- The chat's buffer and windows: makes the scratch buffer (its name, options and `q` mapping),
-- shows it in a split, closes and toggles it, and keeps the windows that show it at its end while
-- text arrives. What the buffer holds is the transcript's business.

local config = require('tandem.config')

local M = {}

local api = vim.api

local buf = nil ---@type integer?
local scroll_pending = false

--- The chat buffer, or nil when there is none (never made, or wiped).
---@return integer?
function M.get()
  if buf ~= nil and api.nvim_buf_is_valid(buf) then
    return buf
  end
  return nil
end

--- Makes a new, empty chat buffer (not modifiable: the transcript unlocks it to write).
---@return integer
function M.create()
  buf = api.nvim_create_buf(false, true)
  pcall(api.nvim_buf_set_name, buf, 'tandem://chat')
  local bo = vim.bo[buf]
  bo.buftype = 'nofile'
  bo.bufhidden = 'hide'
  bo.swapfile = false
  bo.undolevels = -1
  bo.filetype = 'markdown'
  bo.modifiable = false
  vim.keymap.set('n', 'q', function()
    M.close()
  end, { buffer = buf, desc = 'Tandem: close the chat' })
  return buf
end

--- Moves the windows showing the chat to its last line now: every window but the one the user
--- is in, and that one unless they moved up in it.
function M.scroll_to_end()
  local b = M.get()
  if not b then
    return
  end
  local last = api.nvim_buf_line_count(b)
  local current = api.nvim_get_current_win()
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == b then
      local row = api.nvim_win_get_cursor(win)[1]
      if win ~= current or row >= last - 3 then
        pcall(api.nvim_win_set_cursor, win, { last, 0 })
      end
    end
  end
end

--- Moves the windows showing the chat to its last line, once per tick however many writes
--- came in it.
function M.follow_end()
  if scroll_pending then
    return
  end
  scroll_pending = true
  vim.schedule(function()
    scroll_pending = false
    M.scroll_to_end()
  end)
end

--- The windows of the current tab that show the chat.
---@return integer[]
local function chat_windows()
  local wins = {}
  local b = M.get()
  if b then
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      if api.nvim_win_get_buf(win) == b then
        table.insert(wins, win)
      end
    end
  end
  return wins
end

function M.is_open()
  return #chat_windows() > 0
end

--- The width a vertical chat split gets: the configured width, at most half the screen.
---@return integer
local function split_width()
  return math.min(config.options.chat.width or 80, math.max(20, math.floor(vim.o.columns / 2)))
end

--- The columns the chat's text has: its window's in this tab, else the window it would open in.
---@return integer
function M.text_width()
  local wins = chat_windows()
  if #wins > 0 then
    local info = vim.fn.getwininfo(wins[1])[1]
    return api.nvim_win_get_width(wins[1]) - (info and info.textoff or 0)
  end
  local position = config.options.chat.position
  if position == 'right' or position == 'left' then
    return split_width()
  end
  return vim.o.columns
end

--- Shows buffer `b` (the chat) in a split, unless it is already visible in this tab.
---@param b integer
---@param opts {focus?: boolean}
---@return integer win
function M.open(b, opts)
  local wins = chat_windows()
  if #wins > 0 then
    if opts.focus then
      api.nvim_set_current_win(wins[1])
    end
    return wins[1]
  end
  local chat = config.options.chat
  local vertical = chat.position == 'right' or chat.position == 'left'
  local win_opts = { split = chat.position or 'right', win = 0 }
  if vertical then
    win_opts.width = split_width()
  else
    win_opts.height = chat.height or 15
  end
  local win = api.nvim_open_win(b, opts.focus == true, win_opts)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = 'no'
  vim.wo[win].conceallevel = 2
  pcall(api.nvim_win_set_cursor, win, { api.nvim_buf_line_count(b), 0 })
  return win
end

--- Closes the chat's windows in this tab (never the last window).
function M.close()
  for _, win in ipairs(chat_windows()) do
    if #api.nvim_list_wins() > 1 then
      api.nvim_win_close(win, false)
    end
  end
end

return M
