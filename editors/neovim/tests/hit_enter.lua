-- The "Ask Tandem to fix" code action as a user runs it, in a real TUI, watched for the
-- "Press ENTER or type command to continue" prompt.
--
-- A headless Neovim has no screen, so it never asks for ENTER. This script (the test's Neovim)
-- runs the user's Neovim (tests/hit_enter_child.lua) in a terminal buffer, where it has a real
-- screen of 100x30 cells, and talks to it over its --listen socket. The user's Neovim uses
-- Neovim's own vim.ui.select, inputlist(): the script reads the terminal's screen and types the
-- number of "Ask Tandem to fix: …", then of "Apply". All along it asks the user's Neovim for its
-- mode (nvim_get_mode, answered even while it waits for a key): mode "r" or "rm" is the hit-enter
-- (or more) prompt. Reported: every hit-enter prompt with the screen under it (it is answered
-- with <CR> so that the run goes on), the screen when the Apply question was asked, and the
-- user's Neovim's own report (chat, buffer).
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')

local COLUMNS, LINES = 100, 30

H.run(function()
  vim.o.columns = COLUMNS
  vim.o.lines = LINES
  local root = vim.fs.dirname(vim.env.TANDEM_RESULT)
  local sock = root .. '/user-nvim.sock'
  local child_result = root .. '/user-nvim-result.json'
  H.report.hit_enter = {}

  H.step("start the user's Neovim in a terminal")
  vim.cmd.enew()
  local term_buf = vim.api.nvim_get_current_buf()
  local job = vim.fn.jobstart({
    vim.v.progpath,
    '--clean',
    '-u',
    vim.env.TANDEM_PLUGIN .. '/tests/hit_enter_child.lua',
    '--listen',
    sock,
  }, { term = true, env = { TANDEM_RESULT = child_result } })
  assert(job > 0, "cannot start the user's Neovim")

  local function screen()
    return vim.api.nvim_buf_get_lines(term_buf, 0, -1, false)
  end
  local function on_screen(text)
    for _, line in ipairs(screen()) do
      if line:find(text, 1, true) then
        return true
      end
    end
    return false
  end

  H.wait_for('the socket of the user\'s Neovim', function()
    return vim.uv.fs_stat(sock) ~= nil
  end)
  local chan
  H.wait_for('a connection to the user\'s Neovim', function()
    local ok, id = pcall(vim.fn.sockconnect, 'pipe', sock, { rpc = true })
    if ok and id > 0 then
      chan = id
      return true
    end
    return false
  end)

  --- Samples the user's Neovim's mode; a hit-enter prompt is recorded and answered.
  local function sample()
    local ok, mode = pcall(vim.rpcrequest, chan, 'nvim_get_mode')
    if not ok then
      return nil
    end
    if mode.blocking and (mode.mode == 'r' or mode.mode == 'rm') then
      -- Let the terminal show the whole prompt before it is copied.
      vim.wait(100)
      table.insert(H.report.hit_enter, { mode = mode.mode, step = H.report.step, screen = screen() })
      vim.rpcrequest(chan, 'nvim_input', '<CR>')
    end
    return mode
  end

  --- Waits until `cond()`, sampling the mode all along. When it times out, the screen and the
  --- mode go with the error.
  local function watch(what, cond)
    local ok, err = pcall(H.wait_for, what, function()
      sample()
      return cond()
    end)
    if not ok then
      local _, mode = pcall(vim.rpcrequest, chan, 'nvim_get_mode')
      error(string.format('%s\nmode: %s\nthe screen:\n%s', tostring(err), vim.inspect(mode), table.concat(screen(), '\n')), 0)
    end
  end

  --- Types the number of the inputlist() item whose text has `text`.
  local function choose(text)
    for _, line in ipairs(screen()) do
      local number = line:match('^(%d+): ') and line:find(text, 1, true) and line:match('^(%d+): ')
      if number then
        vim.rpcrequest(chan, 'nvim_input', number .. '<CR>')
        return
      end
    end
    error('no item ' .. text .. ' on the screen:\n' .. table.concat(screen(), '\n'))
  end

  H.step('the code action menu')
  watch('the code action menu on the screen', function()
    return on_screen('Type number and <Enter>') and on_screen('Ask Tandem to fix: ')
  end)
  choose('Ask Tandem to fix: ')

  H.step('the Apply question')
  watch('the Apply question on the screen', function()
    return on_screen('Type number and <Enter>') and on_screen(': Apply all')
  end)
  -- What the user sees while being asked.
  H.report.screen_at_question = screen()
  choose(': Apply')

  H.step('the run to the end')
  watch("the user's Neovim's report", function()
    return vim.uv.fs_stat(child_result) ~= nil
  end)
  -- A little more, for a prompt that comes late.
  local until_ms = vim.uv.now() + 500
  watch('a quiet end', function()
    return vim.uv.now() >= until_ms
  end)
  H.report.screen_at_end = screen()
  H.report.mode_at_end = sample()
  local child = vim.json.decode(table.concat(vim.fn.readfile(child_result), '\n'))
  H.report.child = child
  H.report.chat = child.chat
  H.report.lines = child.lines
  H.report.current = child.current
  vim.fn.jobstop(job)
  if not child.ok then
    error("the user's Neovim failed at " .. tostring(child.step) .. ': ' .. tostring(child.error))
  end
end)
