-- Tandem for Neovim: a coding agent inside a language server (`tandem lsp`).
--
--   require('tandem').setup({ model = 'anthropic/claude-sonnet-4-5' })
--
-- starts the server for file buffers (one client for all of them), opens a chat buffer that
-- renders the server's streamed `tandem/event` notifications, and defines :TandemAsk,
-- :TandemSteer, :TandemFollowUp, :TandemAbort, :TandemSessions, :TandemNew, :TandemModel,
-- :TandemThinking, :TandemChat, :TandemFix and :TandemUndo. See :help tandem and editors/neovim/README.md.

local config = require('tandem.config')
local lsp = require('tandem.lsp')
local chat = require('tandem.chat')
local notify = require('tandem.notify')

local M = {}

local group = vim.api.nvim_create_augroup('tandem', { clear = true })
M.did_setup = false

-- Progress ----------------------------------------------------------------------------------

--- Active work-done progress of the Tandem client: token → last message.
---@type table<string|integer, string>
M.progress = {}

local function on_progress(ev)
  local client = lsp.get()
  local data = ev.data or {}
  if not client or data.client_id ~= client.id then
    return
  end
  local params = data.params or {}
  local value = params.value or {}
  if type(value) ~= 'table' then
    return
  end
  local message = value.message or value.title or ''
  if value.kind == 'end' then
    M.progress[params.token] = nil
  else
    M.progress[params.token] = message
  end
  if config.options.progress == 'echo' then
    -- The answer's first line (the end's message), a prompt, a tool's title: markdown, shown
    -- as plain text ("Tandem: done: Quick overview", not "# Quick overview").
    local first = require('tandem.text').plain(message:match('^[^\n]*'))
    local text = 'Tandem: ' .. first
    if value.kind == 'end' then
      text = 'Tandem: done' .. (first ~= '' and (': ' .. first) or '')
    end
    -- A status, not a message: one line that fits, no history, never a hit-enter prompt.
    notify.status(text)
  end
end

--- A short status for the statusline: "Tandem: Edit main.py" while a run works, else "".
---@return string
function M.status()
  local s = chat.current and chat.sessions[chat.current]
  if s then
    return s.running and ('Tandem: ' .. (s.activity or 'running')) or ''
  end
  for _, message in pairs(M.progress) do
    return 'Tandem: ' .. message
  end
  return ''
end

-- Setup -------------------------------------------------------------------------------------

local function attach(buf)
  if config.options.autostart and lsp.is_file_buffer(buf) then
    lsp.start(buf)
  end
end

--- Configures the plugin and starts the server for file buffers.
---@param opts? tandem.Options
function M.setup(opts)
  local before = M.did_setup and config.server_settings() or nil
  config.set(opts)
  M.did_setup = true
  vim.api.nvim_clear_autocmds({ group = group })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'FileType' }, {
    group = group,
    callback = function(ev)
      attach(ev.buf)
    end,
  })
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = on_progress })
  -- Diagnostics generations for tandem/diagnostics, counted from the start.
  local diagnostics = require('tandem.diagnostics')
  vim.api.nvim_create_autocmd('DiagnosticChanged', { group = group, callback = diagnostics.on_changed })
  vim.api.nvim_create_autocmd('LspDetach', { group = group, callback = diagnostics.on_detach })
  diagnostics.watch_reports()
  if before and not vim.deep_equal(before, config.server_settings()) then
    lsp.push_settings()
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      attach(buf)
    end
  end
end

local function ensure_setup()
  if not M.did_setup then
    M.setup({})
  end
end

-- Prompts -----------------------------------------------------------------------------------

--- Editor context for a prompt from `buf` (protocol-ext README, tandem/prompt): the file, the
--- selection (or the cursor) and the diagnostics on those lines.
---@param buf integer
---@param range? {start: integer[], finish: integer[]} 1-based rows, 0-based byte columns (end inclusive)
---@param client vim.lsp.Client
---@return table?
function M.context(buf, range, client)
  if not lsp.is_file_buffer(buf) or not vim.lsp.buf_is_attached(buf, client.id) then
    return nil
  end
  local enc = client.offset_encoding or 'utf-16'
  local function pos(row, byte_col)
    local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
    byte_col = math.min(byte_col, #line)
    local char = byte_col
    if enc ~= 'utf-8' and byte_col > 0 then
      char = vim.lsp.util.character_offset(buf, row, byte_col, enc)
    end
    return { line = row, character = char }
  end
  local start, finish
  if range then
    local srow, scol = range.start[1] - 1, range.start[2]
    local erow, ecol = range.finish[1] - 1, range.finish[2]
    local eline = vim.api.nvim_buf_get_lines(buf, erow, erow + 1, false)[1] or ''
    -- Inclusive end column → exclusive, past the whole (possibly multi-byte) character.
    if ecol >= #eline then
      ecol = #eline
    else
      local char_end = vim.str_utf_end and vim.str_utf_end(eline, ecol + 1) or 0
      ecol = ecol + 1 + char_end
    end
    start, finish = pos(srow, scol), pos(erow, ecol)
  else
    local cursor = vim.api.nvim_win_get_cursor(0)
    start = pos(cursor[1] - 1, cursor[2])
    finish = start
  end
  local context = {
    uri = vim.uri_from_bufnr(buf),
    selection = { start = start, ['end'] = finish },
  }
  local diagnostics = require('tandem.diagnostics').on_lines(buf, start.line, finish.line, enc)
  if #diagnostics > 0 then
    context.includeDiagnostics = true
    context.diagnostics = diagnostics
  end
  return context
end

--- The selection of a command invoked with a range: the visual selection when the range is
--- the last visual one, else whole lines.
local function command_range(args)
  if not args or args.range == 0 then
    return nil
  end
  local buf = vim.api.nvim_get_current_buf()
  local vstart = vim.api.nvim_buf_get_mark(buf, '<')
  local vend = vim.api.nvim_buf_get_mark(buf, '>')
  if vstart[1] == args.line1 and vend[1] == args.line2 and vim.fn.visualmode() == 'v' then
    return { start = vstart, finish = vend }
  end
  local last = vim.api.nvim_buf_get_lines(buf, args.line2 - 1, args.line2, false)[1] or ''
  return { start = { args.line1, 0 }, finish = { args.line2, math.max(#last - 1, 0) } }
end

--- Sends a prompt to the current session (a new one when there is none).
---@param text string
---@param opts? {when_busy?: 'steer'|'followUp', range?: table, buf?: integer, new_session?: boolean}
function M.prompt(text, opts)
  ensure_setup()
  opts = opts or {}
  if not text or vim.trim(text) == '' then
    notify.show('Tandem: what should I do? (e.g. :TandemAsk explain this function)', vim.log.levels.WARN)
    return
  end
  local buf = opts.buf or vim.api.nvim_get_current_buf()
  if config.options.chat.open_on_ask then
    chat.open({ focus = false })
  end
  lsp.with_client(function(client)
    local params = { text = text, whenBusy = opts.when_busy }
    if chat.current and not opts.new_session then
      params.session = chat.current
    end
    local ok, context = pcall(M.context, buf, opts.range, client)
    if ok and context then
      params.context = context
    elseif not ok then
      notify.show('Tandem: no editor context: ' .. tostring(context), vim.log.levels.WARN)
    end
    lsp.call(client, 'request', 'tandem/prompt', params, function(err, result)
      if err then
        local message = err.message or vim.inspect(err)
        chat.note('**Error:** ' .. message)
        notify.show('Tandem: ' .. message, vim.log.levels.ERROR)
        return
      end
      if result and result.session then
        chat.set_current(result.session)
        if result.queued then
          local how = opts.when_busy == 'followUp' and 'a follow-up' or 'a steering message'
          notify.status('Tandem: queued as ' .. how)
        end
      end
    end, lsp.is_file_buffer(buf) and buf or nil)
  end, lsp.is_file_buffer(buf) and buf or nil)
end

---@param text string
---@param args? table the user command's arguments (for a range)
function M.ask(text, args)
  M.prompt(text, { range = command_range(args) })
end

function M.steer(text, args)
  M.prompt(text, { when_busy = 'steer', range = command_range(args) })
end

function M.follow_up(text, args)
  M.prompt(text, { when_busy = 'followUp', range = command_range(args) })
end

--- Aborts the current session's run; with `all` (or without a current session) every run.
---@param all? boolean
function M.abort(all)
  ensure_setup()
  if not lsp.get() then
    notify.show('Tandem: the server is not running', vim.log.levels.WARN)
    return
  end
  if chat.current and not all then
    lsp.request('tandem/abort', { session = chat.current })
    return
  end
  -- Every run: cancelling a run's work-done progress aborts it; without progress tokens, ask the
  -- server to abort every running session.
  local client = lsp.get()
  if client and next(M.progress) then
    for token in pairs(M.progress) do
      lsp.call(client, 'notify', 'window/workDoneProgress/cancel', { token = token })
    end
  else
    lsp.request('workspace/executeCommand', { command = 'tandem.abort', arguments = { vim.empty_dict() } })
  end
end

-- Undo --------------------------------------------------------------------------------------

--- Undoes the current session's last turn (with `back_to`, an entry id: every turn after it).
--- The server proposes the reverse as one edit, confirmed like the agent's edits; hunks the
--- user changed since are left, written to the chat and put in the quickfix list.
---@param back_to? string
function M.undo(back_to)
  ensure_setup()
  if not chat.current then
    notify.show('Tandem: no session with a turn to undo yet', vim.log.levels.WARN)
    return
  end
  local params = { session = chat.current }
  if back_to and back_to ~= '' then
    params.backTo = back_to
  end
  lsp.request('tandem/undo', params, function(result)
    local refused = result.refused or {}
    local items = {}
    local lines = { result.message }
    for _, hunk in ipairs(refused) do
      local file = vim.uri_to_fname(hunk.uri)
      table.insert(items, { filename = file, lnum = hunk.line + 1, text = hunk.reason })
      table.insert(lines, ('  %s:%d: %s'):format(vim.fn.fnamemodify(file, ':.'), hunk.line + 1, hunk.reason))
    end
    chat.note(table.concat(lines, '\n'))
    if #items > 0 then
      vim.fn.setqflist({}, ' ', { title = 'Tandem: hunks left by the undo', items = items })
    end
    local ok = result.status == 'applied' and #items == 0
    notify.show('Tandem: ' .. result.message, ok and vim.log.levels.INFO or vim.log.levels.WARN)
  end)
end

-- Sessions and models -----------------------------------------------------------------------

--- Starts a new, empty session and makes it current.
function M.new_session()
  ensure_setup()
  lsp.request('tandem/sessions/new', vim.empty_dict(), function(result)
    chat.set_current(result.session, 'new session')
    chat.open({ focus = false })
  end)
end

local function one_line(text, max)
  text = (text or ''):gsub('%s+', ' ')
  if #text > max then
    text = text:sub(1, max - 1) .. '…'
  end
  return text
end

--- Picks a stored session (tandem/sessions/list) to open, or a new one.
---@param all? boolean every project's sessions
function M.sessions(all)
  ensure_setup()
  lsp.request('tandem/sessions/list', { all = all or false }, function(list)
    local items = { { new = true } }
    vim.list_extend(items, list or {})
    vim.ui.select(items, {
      prompt = 'Tandem sessions',
      kind = 'tandem.sessions',
      format_item = function(item)
        if item.new then
          return '+ New session'
        end
        local when = (item.modified or ''):gsub('T', ' '):sub(1, 16)
        local title = item.name
        if not title then
          local summary, prompt = chat.split_context(item.firstMessage or '')
          title = prompt ~= '' and prompt or (summary and ('(' .. summary .. ')') or '')
        end
        local live = chat.sessions[item.id] and (item.id == chat.current and ' (current)' or ' (open)') or ''
        return string.format('%s  %s  [%d messages]%s', when, one_line(title, 60), item.messageCount or 0, live)
      end,
    }, function(choice)
      if not choice then
        return
      end
      if choice.new then
        M.new_session()
        return
      end
      lsp.request('tandem/sessions/open', { path = choice.path }, function(result)
        chat.set_current(result.session, 'opened session')
        local _, prompt = chat.split_context(choice.firstMessage or '')
        chat.note(string.format('_%s (%d messages)_', one_line(choice.name or prompt, 80), choice.messageCount or 0))
        chat.open({ focus = false })
      end)
    end)
  end)
end

--- Picks a model (tandem/models/list) for the current session and for new ones.
function M.models()
  ensure_setup()
  lsp.request('tandem/models/list', vim.empty_dict(), function(models)
    table.sort(models, function(a, b)
      if a.available ~= b.available then
        return a.available
      end
      return (a.provider .. '/' .. a.id) < (b.provider .. '/' .. b.id)
    end)
    vim.ui.select(models, {
      prompt = 'Tandem model',
      kind = 'tandem.models',
      format_item = function(m)
        return string.format(
          '%s/%s  %s%s%s',
          m.provider,
          m.id,
          m.name or '',
          m.reasoning and '  [reasoning]' or '',
          m.available and '' or '  (no API key)'
        )
      end,
    }, function(choice)
      if choice then
        M.set_model(choice.provider .. '/' .. choice.id)
      end
    end)
  end)
end

--- Uses `ref` ("provider/id") for the current session and for sessions created later.
---@param ref string
function M.set_model(ref)
  ensure_setup()
  local provider, id = ref:match('^([^/]+)/(.+)$')
  if not provider then
    notify.show('Tandem: a model is "provider/id", not ' .. ref, vim.log.levels.ERROR)
    return
  end
  config.options.model = ref
  lsp.push_settings()
  if not chat.current then
    notify.show('Tandem: new sessions will use ' .. ref)
    return
  end
  local session = chat.current
  lsp.request('tandem/models/set', { session = session, provider = provider, id = id }, function(result)
    local s = chat.sessions[session]
    if s and type(result) == 'table' and result.provider then
      s.model = result.provider .. '/' .. result.id
      chat.update_state()
    end
    notify.show('Tandem: model ' .. ref)
  end)
end

--- Sets the thinking level (asks with vim.ui.select when `level` is nil).
---@param level? string
function M.thinking(level)
  ensure_setup()
  local function apply(choice)
    if not vim.tbl_contains(config.thinking_levels, choice) then
      notify.show('Tandem: thinking level must be one of ' .. table.concat(config.thinking_levels, ', '), vim.log.levels.ERROR)
      return
    end
    config.options.thinking_level = choice
    lsp.push_settings()
    if not chat.current then
      notify.show('Tandem: new sessions will think at ' .. choice)
      return
    end
    lsp.request('tandem/thinking/set', { session = chat.current, level = choice }, function(result)
      local now = result and result.level or choice
      notify.show('Tandem: thinking level ' .. now .. (now ~= choice and (' (the model cannot do ' .. choice .. ')') or ''))
    end)
  end
  if level and level ~= '' then
    apply(level)
  else
    vim.ui.select(config.thinking_levels, { prompt = 'Tandem thinking level', kind = 'tandem.thinking' }, function(choice)
      if choice then
        apply(choice)
      end
    end)
  end
end

--- Lists Tandem's code actions for the cursor line (or the selection) and runs the chosen one,
--- with every diagnostic there. A shortcut for vim.lsp.buf.code_action filtered to Tandem.
---@param args? table the user command's arguments (a range: its lines)
function M.fix(args)
  ensure_setup()
  local client = lsp.get()
  if not client then
    notify.show('Tandem: the server is not attached to this buffer', vim.log.levels.WARN)
    return
  end
  local range
  if args and args.range and args.range > 0 then
    local last = vim.api.nvim_buf_get_lines(0, args.line2 - 1, args.line2, false)[1] or ''
    range = { start = { args.line1, 0 }, ['end'] = { args.line2, math.max(#last - 1, 0) } }
  end
  vim.lsp.buf.code_action({
    range = range,
    filter = function(action)
      local cmd = action.command
      if type(cmd) == 'table' then
        cmd = cmd.command
      end
      return type(cmd) == 'string' and vim.startswith(cmd, 'tandem.')
    end,
  })
end

function M.toggle_chat()
  chat.toggle()
end

function M.open_chat()
  chat.open({ focus = true })
end

return M
