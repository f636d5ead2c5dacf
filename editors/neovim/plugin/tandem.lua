-- Tandem's user commands. They load the plugin on first use; require('tandem').setup{} is still
-- the place for options (without it, the first command sets up with the defaults).

if vim.g.loaded_tandem then
  return
end
vim.g.loaded_tandem = true

if vim.fn.has('nvim-0.10') == 0 then
  vim.api.nvim_echo({ { 'tandem.nvim needs Neovim 0.10 or newer', 'ErrorMsg' } }, true, {})
  return
end

local function tandem()
  return require('tandem')
end

local command = vim.api.nvim_create_user_command

command('TandemAsk', function(args)
  tandem().ask(args.args, args)
end, { nargs = '+', range = true, desc = 'Tandem: ask (with the selection or cursor as context)' })

command('TandemSteer', function(args)
  tandem().steer(args.args, args)
end, { nargs = '+', range = true, desc = 'Tandem: steer the running session (or ask)' })

command('TandemFollowUp', function(args)
  tandem().follow_up(args.args, args)
end, { nargs = '+', range = true, desc = 'Tandem: queue a follow-up for when the run ends (or ask)' })

command('TandemAbort', function(args)
  tandem().abort(args.bang)
end, { nargs = 0, bang = true, desc = 'Tandem: abort the current run (! every run)' })

command('TandemSessions', function(args)
  tandem().sessions(args.bang)
end, { nargs = 0, bang = true, desc = 'Tandem: open a stored session (! for every project) or a new one' })

command('TandemNew', function()
  tandem().new_session()
end, { nargs = 0, desc = 'Tandem: start a new session' })

command('TandemModel', function(args)
  if args.args ~= '' then
    tandem().set_model(args.args)
  else
    tandem().models()
  end
end, { nargs = '?', desc = 'Tandem: choose the model' })

command('TandemThinking', function(args)
  tandem().thinking(args.args)
end, {
  nargs = '?',
  complete = function()
    return { 'off', 'minimal', 'low', 'medium', 'high', 'xhigh' }
  end,
  desc = 'Tandem: set the thinking level',
})

command('TandemChat', function()
  tandem().toggle_chat()
end, { nargs = 0, desc = 'Tandem: toggle the chat split' })

command('TandemFix', function(args)
  tandem().fix(args)
end, { nargs = 0, range = true, desc = "Tandem: Tandem's code actions here (fix, explain, document, tests)" })

command('TandemUndo', function(args)
  tandem().undo(args.args)
end, { nargs = '?', desc = 'Tandem: undo the last turn (or every turn after an entry id)' })

command('TandemLog', function()
  vim.cmd.tabnew(vim.fn.fnameescape(vim.lsp.get_log_path()))
end, { nargs = 0, desc = 'Tandem: open the LSP log' })
