-- The user types while the agent's edit is pending, and the agent then runs a command.
-- :TandemAsk makes the model edit main.py (valus → values), then run `cat main.py`, then
-- answer. A timer types '#' at the start of line 1 with nvim_buf_set_text every 20 ms, from the
-- ask until 40 keystrokes; in confirm mode the plugin's question (vim.ui.select) is answered
-- Apply only after 400 ms, so keystrokes land while the question is open too. The report
-- holds the buffer, the keystrokes typed, whether the buffer is still modified, and the file on
-- disk when the run settled.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init({ edit_mode = vim.env.TANDEM_EDIT_MODE or 'auto', bash_permission = 'allow' })

H.run(function()
  local buf = H.open('main.py')

  H.stub_select(function(titles)
    for i, title in ipairs(titles) do
      if title == 'Apply' then
        return i
      end
    end
  end, 400)

  local typed = 0
  H.typed = 0
  -- When the fix reached the buffer, how many keystrokes had been typed (proves the overlap).
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function()
      local line = vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] or ''
      if H.report.typed_when_fixed == nil and line:find('len(values)', 1, true) then
        H.report.typed_when_fixed = typed
      end
    end,
  })
  local timer = assert(vim.uv.new_timer())
  timer:start(0, 20, vim.schedule_wrap(function()
    if typed >= 40 or not vim.api.nvim_buf_is_valid(buf) then
      timer:stop()
      return
    end
    vim.api.nvim_buf_set_text(buf, 0, 0, 0, 0, { '#' })
    typed = typed + 1
    H.typed = typed
  end))

  H.step('ask, and type while the edit is pending')
  vim.cmd('TandemAsk fix the typo in main.py, then run cat main.py')
  H.wait_for('the typing to finish', function()
    return typed >= 40
  end)
  H.wait_settled('the run to settle')
  H.report.typed = typed
  H.report.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  H.report.modified = vim.bo[buf].modified
  H.report.disk = table.concat(vim.fn.readfile(vim.env.TANDEM_PROJECT .. '/main.py'), '\n')
end)
