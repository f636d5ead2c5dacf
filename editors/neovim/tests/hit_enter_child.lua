-- The user's Neovim of tests/hit_enter.lua: a real TUI (it runs in a terminal of the test's
-- headless Neovim), the plugin set up as in an init.lua, Neovim's own vim.ui.select
-- (inputlist(), answered by the test typing into the terminal). It sets a diagnostic on main.py
-- and opens the code action menu; what follows is the user's (the test's) doing. Once the run
-- has settled and its last messages are out, it writes what it saw to $TANDEM_RESULT and waits
-- to be stopped. Nothing here waits with vim.wait once the menu is open: Neovim's main loop must
-- run (and redraw, and ask for ENTER if a message is too long) as it does for a user.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

-- Neovim's own vim.ui.select, with a moment's work after each choice, as a slower machine or
-- another plugin takes: the server's messages that arrive meanwhile (the run's progress, which
-- the plugin echoes) come while inputlist()'s list still holds the screen, and must not make
-- Neovim ask for ENTER.
local select = vim.ui.select
vim.ui.select = function(items, opts, on_choice)
  select(items, opts, function(...)
    on_choice(...)
    vim.wait(300)
  end)
end

local function write_report()
  local ok_chat, chat = pcall(require, 'tandem.chat')
  if ok_chat then
    H.report.chat = chat.lines()
    H.report.current = chat.current
  end
  if H.report.buf and vim.api.nvim_buf_is_valid(H.report.buf) then
    H.report.lines = vim.api.nvim_buf_get_lines(H.report.buf, 0, -1, false)
  end
  H.report.messages = vim.api.nvim_exec2('messages', { output = true }).output
  vim.fn.writefile({ vim.json.encode(H.report) }, vim.env.TANDEM_RESULT)
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  nested = true,
  callback = function()
    local ok, err = xpcall(function()
      local buf = H.open('main.py')
      H.set_linter_diagnostic(buf)
      vim.api.nvim_create_autocmd('User', {
        pattern = 'TandemSettled',
        once = true,
        callback = function()
          -- The run's last messages (progress end) come right after it settles.
          vim.defer_fn(function()
            H.report.ok = true
            H.report.step = 'settled'
            write_report()
          end, 1500)
        end,
      })
      H.step('open the code action menu')
      vim.defer_fn(function()
        vim.lsp.buf.code_action()
      end, 50)
    end, debug.traceback)
    if not ok then
      H.report.error = tostring(err)
      write_report()
    end
  end,
})
