-- `:help tandem` with the plugin installed as a plain runtimepath entry (as README's "Plain
-- runtimepath" install, or a plugin manager that adds the folder and runs no :helptags): Neovim
-- finds the plugin's help through its doc/tags, which is shipped. Also checks that doc/tags is
-- what :helptags makes of doc/tandem.txt now (run in a copy of the doc folder), so that a tag
-- added to the help is never missing from the shipped tags. Needs no server.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
vim.opt.runtimepath:append(vim.env.TANDEM_PLUGIN)

local function read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local text = f:read('*a')
  f:close()
  return text
end

H.run(function()
  local doc = vim.env.TANDEM_PLUGIN .. '/doc'
  H.report.help = {}
  for _, subject in ipairs({ 'tandem', 'tandem.txt', ':TandemAsk', 'tandem-chat', 'tandem-confirmations', 'tandem.status()' }) do
    H.step(':help ' .. subject)
    local ok, err = pcall(vim.cmd.help, subject)
    local entry = { ok = ok, error = not ok and tostring(err) or nil }
    if ok then
      entry.file = vim.fs.basename(vim.api.nvim_buf_get_name(0))
      entry.line = vim.api.nvim_get_current_line()
      vim.cmd.helpclose()
    end
    H.report.help[subject] = entry
  end

  H.step('doc/tags is what :helptags makes of doc/tandem.txt')
  local copy = vim.fn.tempname() .. '/doc'
  vim.fn.mkdir(copy, 'p')
  vim.fn.writefile(vim.fn.readfile(doc .. '/tandem.txt', 'b'), copy .. '/tandem.txt', 'b')
  vim.cmd.helptags(vim.fn.fnameescape(copy))
  H.report.tags_shipped = read(doc .. '/tags') or vim.NIL
  H.report.tags_made = read(copy .. '/tags') or vim.NIL
end)
