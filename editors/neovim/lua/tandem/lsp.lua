-- The language-server side: starting `tandem lsp` once, attaching file buffers, requests that
-- wait for initialization, and the handlers of this client (tandem/event, window/showMessage,
-- window/showMessageRequest, workspace/applyEdit, tandem/saveDocuments, and the language
-- intelligence requests of diagnostics.lua and language.lua).

local config = require('tandem.config')

local M = {}

local NAME = 'tandem'
local PROTOCOL_VERSION = 1
local has_011 = vim.fn.has('nvim-0.11') == 1

---@type integer?
M.client_id = nil
--- Callbacks waiting for the client to finish `initialize`.
---@type fun(client: vim.lsp.Client)[]
local pending = {}

--- Calls a client method the same way on Neovim 0.10 (`client.request(...)`) and 0.11+
--- (`client:request(...)`).
local function call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
end
M.call = call

--- The running Tandem client, if any.
---@return vim.lsp.Client?
function M.get()
  if not M.client_id then
    return nil
  end
  local client = vim.lsp.get_client_by_id(M.client_id)
  if not client or (client.is_stopped and call(client, 'is_stopped')) then
    M.client_id = nil
    return nil
  end
  return client
end

--- Whether `buf` is a file buffer Tandem should attach to.
---@param buf integer
function M.is_file_buffer(buf)
  if not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return false
  end
  if vim.fn.isdirectory(name) == 1 then
    return false
  end
  local filetypes = config.options.filetypes
  if filetypes and not vim.tbl_contains(filetypes, vim.bo[buf].filetype) then
    return false
  end
  return true
end

--- The project root of `buf`: the nearest folder with a root marker, else the working directory
--- when the file is inside it, else the file's folder.
---@param buf? integer
---@return string
function M.root_dir(buf)
  local cwd = vim.fn.getcwd()
  if not buf or vim.api.nvim_buf_get_name(buf) == '' then
    return cwd
  end
  local root = vim.fs.root(buf, config.options.root_markers)
  if root then
    return root
  end
  local file = vim.fs.normalize(vim.api.nvim_buf_get_name(buf))
  if vim.startswith(file, vim.fs.normalize(cwd) .. '/') then
    return cwd
  end
  return vim.fs.dirname(file)
end

--- Client capabilities: Neovim's own plus Tandem's event opt-in, `tandem/saveDocuments` and the
--- language intelligence requests (protocol-ext README, "initialize").
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps = vim.tbl_deep_extend('force', caps, config.options.capabilities or {})
  caps.experimental = caps.experimental or {}
  caps.experimental.tandem = { events = true, saveDocuments = true, diagnostics = true, languageRequests = true }
  caps.workspace = caps.workspace or {}
  caps.workspace.applyEdit = true
  caps.workspace.configuration = true
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  return caps
end

--- Wraps the client's `request` so that code action requests carry every diagnostic of their
--- lines (code_actions.lua), and so that the session a command starts becomes the chat's.
---@param client vim.lsp.Client
local function wrap_requests(client)
  local original = client.request
  client.request = function(...)
    local args = { ... }
    local n = select('#', ...)
    local off = args[1] == client and 1 or 0
    local method, params = args[1 + off], args[2 + off]
    --- The original request with other params and handler.
    local function send(p, handler)
      local a = { unpack(args, 1, n) }
      a[2 + off], a[3 + off] = p, handler
      return original(unpack(a, 1, math.max(n, 3 + off)))
    end
    if method == 'textDocument/codeAction' and config.options.fix_code_actions and type(params) == 'table' then
      return require('tandem.code_actions').request(client, params, args[3 + off], args[4 + off], send)
    elseif method == 'workspace/executeCommand' and type(params) == 'table' then
      local handler = args[3 + off]
      return send(params, function(err, result, ctx)
        if not err and type(result) == 'table' and type(result.session) == 'string' then
          require('tandem.chat').follow(result.session, params.command)
        end
        local h = handler or client.handlers[method] or vim.lsp.handlers[method]
        if h then
          return h(err, result, ctx)
        elseif err then
          require('tandem.notify').show('Tandem: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
        end
      end)
    end
    return original(unpack(args, 1, n))
  end
end

--- How long a question about an edit or a command waits for the events that say what it is
--- about.
local EXPLAINED_WITHIN_MS = 1000

--- Whether the events that explain `message` have arrived: for an edit or a new file, the call
--- running now with its arguments (tool_start, after toolcall_end); for a command, its call
--- running (so the question, its answer and then the output come under the call's line).
local function explained(message)
  local render = require('tandem.chat.render')
  local state = require('tandem.chat.state')
  if render.is_change_question(message) then
    local change = state.running_change
    return change ~= nil and change.arguments ~= nil
  elseif render.is_command_question(message) then
    return state.running_command ~= nil
  end
  return true
end

--- `window/showMessageRequest` for this client. The order is what the user needs: the chat
--- shows what is asked about (an edit's diff) and the question, the screen is redrawn, and only
--- then does vim.ui.select ask; its answer goes to the chat. Dismissing answers null (the server
--- then rejects or denies).
local function show_message_request(_, params, _)
  local actions = params.actions or {}
  local message = params.message or ''
  if #actions == 0 then
    require('tandem.notify').show('Tandem: ' .. message, vim.log.levels.INFO)
    return vim.NIL
  end
  local chat = require('tandem.chat')
  local notify = require('tandem.notify')
  local co, is_main = coroutine.running()
  if co and not is_main then
    -- The events that explain the question (the edit call, its arguments) may still be on
    -- their way: the server coalesces events, and sends requests at once. Let them land first
    -- (a short wait at most), so that the chat can show what the edit changes.
    local waited = 0
    while not explained(message) and waited < EXPLAINED_WITHIN_MS do
      vim.defer_fn(function()
        if coroutine.status(co) == 'suspended' then
          coroutine.resume(co)
        end
      end, 20)
      coroutine.yield()
      waited = waited + 20
    end
    chat.question(message)
    vim.cmd.redraw()
    local answered, answer, waiting = false, vim.NIL, false
    vim.ui.select(actions, {
      prompt = notify.select_prompt(message),
      kind = 'tandem.confirm',
      format_item = function(action)
        return action.title
      end,
    }, function(choice)
      if answered then
        return
      end
      answered, answer = true, choice or vim.NIL
      chat.answer(choice and choice.title or nil)
      -- Resume only a handler that waits: a select that calls back before it returns (the
      -- default one does) is answered below, without waiting, even if it runs the event loop
      -- after calling back (this callback must never resume a running coroutine).
      vim.schedule(function()
        if waiting and coroutine.status(co) == 'suspended' then
          coroutine.resume(co)
        end
      end)
    end)
    if not answered then
      waiting = true
      coroutine.yield()
    end
    return answer
  end
  -- Not in a coroutine (older Neovim): ask synchronously.
  chat.question(message)
  vim.cmd.redraw()
  local lines = notify.wrap(message)
  table.insert(lines, '')
  for i, action in ipairs(actions) do
    table.insert(lines, string.format('%d. %s', i, action.title))
  end
  local choice = vim.fn.inputlist(lines)
  local action = actions[choice]
  chat.answer(action and action.title or nil)
  return action or vim.NIL
end

--- `window/showMessage` for this client. Neovim's own handler echoes the message with a line
--- break after it, which always asks for ENTER; here it is one line that fits (notify.lua), and
--- a message that had to be cut is written whole to the chat.
--- `tandem/saveDocuments`: before the agent runs a command, write the buffers it changed (and
--- the user accepted), so the command sees what the user sees. A buffer that is not loaded or
--- not modified has nothing to save; a failed write (read-only, changed on disk…) is reported
--- with Neovim's message, never dropped. `:write` runs the user's BufWrite autocommands, as
--- their own :w would.
---@return table
local function save_documents(_, params, _)
  local result = { saved = {}, failed = {} }
  for _, uri in ipairs(params and params.uris or {}) do
    local ok_buf, buf = pcall(vim.uri_to_bufnr, uri)
    if not ok_buf then
      table.insert(result.failed, { uri = uri, message = 'not a file URI Neovim can open' })
    elseif vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
      local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
        vim.cmd('silent write')
      end)
      if ok and not vim.bo[buf].modified then
        table.insert(result.saved, uri)
      else
        local why = ok and 'the buffer is still modified after :write' or tostring(err)
        table.insert(result.failed, { uri = uri, message = why })
      end
    end
  end
  return result
end

local function show_message(_, params, _)
  local text = type(params) == 'table' and params.message or ''
  local levels = vim.log.levels
  local level = ({ levels.ERROR, levels.WARN, levels.INFO, levels.DEBUG })[params and params.type] or levels.INFO
  if require('tandem.notify').show(text, level) then
    require('tandem.chat').note(text)
  end
  return vim.NIL
end

--- `workspace/applyEdit` for this client: Neovim's own handler, without its
--- `print('Workspace edit', label)`. That message comes right after the Apply, when
--- inputlist()'s list may still hold the screen, and the label names the file ("Tandem: edit
--- <path>"): a path deep in folders makes it longer than the command line. Either way Neovim
--- stopped at "Press ENTER" after the user confirmed. What the edit is and that it was applied
--- are in the chat (the edit's line, its diff, "→ Apply").
---@return table ApplyWorkspaceEditResult
local function apply_edit(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if type(params) ~= 'table' or type(params.edit) ~= 'table' or not client then
    return { applied = false, failureReason = 'no workspace edit to apply' }
  end
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, params.edit, client.offset_encoding)
  return { applied = ok, failureReason = not ok and tostring(err) or nil }
end

--- The `tandem/event` notification.
local function on_event(_, params, _)
  if params then
    require('tandem.chat').on_event(params)
  end
end

local function on_init(client, result)
  local tandem = result and result.capabilities and result.capabilities.experimental
    and result.capabilities.experimental.tandem
  local version = tandem and tandem.version
  if version ~= PROTOCOL_VERSION then
    -- The spec: a plugin refuses protocol versions it does not know.
    require('tandem.notify').show(
      string.format(
        'Tandem: server protocol %s, plugin protocol %d: update the plugin or the server',
        tostring(version),
        PROTOCOL_VERSION
      ),
      vim.log.levels.ERROR
    )
    vim.schedule(function()
      call(client, 'stop')
    end)
    return
  end
  wrap_requests(client)
  vim.schedule(function()
    local waiting = pending
    pending = {}
    for _, fn in ipairs(waiting) do
      fn(client)
    end
  end)
end

local warned_missing = false

--- The client config for vim.lsp.start.
---@param root string
function M.client_config(root)
  local opts = config.options
  local settings = config.server_settings()
  -- The editor's own trust goes in initializationOptions only, beside (not inside) the
  -- settings, so no settings source can vouch for the project.
  local init_options = vim.deepcopy(settings)
  local trusted = config.editor_trust(root)
  if trusted ~= nil then
    init_options.workspaceTrusted = trusted
  end
  local handlers = {
    ['tandem/event'] = on_event,
    ['window/showMessage'] = show_message,
    ['workspace/applyEdit'] = apply_edit,
    ['tandem/saveDocuments'] = save_documents,
    ['tandem/diagnostics'] = function(...)
      return require('tandem.diagnostics').handle(...)
    end,
    ['tandem/languageRequest'] = function(...)
      return require('tandem.language').handle(...)
    end,
  }
  if opts.confirm then
    handlers['window/showMessageRequest'] = show_message_request
  end
  return {
    name = NAME,
    cmd = opts.cmd,
    cmd_cwd = root,
    cmd_env = opts.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } },
    init_options = init_options,
    settings = { tandem = settings },
    capabilities = M.capabilities(),
    handlers = handlers,
    on_init = on_init,
    on_attach = opts.on_attach,
    on_exit = function(code, signal, client_id)
      if client_id == M.client_id then
        M.client_id = nil
        pending = {}
        vim.schedule(function()
          require('tandem.chat').on_exit(code, signal)
        end)
      end
    end,
  }
end

--- Starts the server (once) and attaches `buf` when it is a file buffer. Returns the client.
---@param buf? integer
---@return vim.lsp.Client?
function M.start(buf)
  local client = M.get()
  local attach = buf and M.is_file_buffer(buf)
  if client then
    if attach and not vim.lsp.buf_is_attached(buf, client.id) then
      M.add_folder(client, M.root_dir(buf))
      vim.lsp.buf_attach_client(buf, client.id)
    end
    return client
  end
  local exe = config.options.cmd[1]
  if vim.fn.executable(exe) == 0 then
    if not warned_missing then
      warned_missing = true
      -- One line (no "Press ENTER"): :checkhealth tandem says how to install it or set `cmd`.
      require('tandem.notify').show(
        string.format('Tandem: the server `%s` was not found: see :checkhealth tandem', exe),
        vim.log.levels.ERROR
      )
    end
    return nil
  end
  local root = M.root_dir(attach and buf or nil)
  local cfg = M.client_config(root)
  local id
  if attach then
    id = vim.lsp.start(cfg, {
      bufnr = buf,
      reuse_client = function(c, _)
        return c.name == NAME
      end,
    })
  elseif has_011 then
    id = vim.lsp.start(cfg, { attach = false })
  else
    ---@diagnostic disable-next-line: deprecated
    id = vim.lsp.start_client(cfg)
  end
  if not id then
    return nil
  end
  M.client_id = id
  return vim.lsp.get_client_by_id(id)
end

--- Adds `root` to the client's workspace folders when no folder contains it.
---@param client vim.lsp.Client
---@param root string
function M.add_folder(client, root)
  local uri = vim.uri_from_fname(root)
  for _, folder in ipairs(client.workspace_folders or {}) do
    if folder.uri == uri or vim.startswith(uri, folder.uri .. '/') then
      return
    end
  end
  local folder = { uri = uri, name = vim.fs.basename(root) }
  client.workspace_folders = client.workspace_folders or {}
  table.insert(client.workspace_folders, folder)
  call(client, 'notify', 'workspace/didChangeWorkspaceFolders', {
    event = { added = { folder }, removed = {} },
  })
end

--- Runs `fn(client)` once the client is initialized, starting it when needed.
---@param fn fun(client: vim.lsp.Client)
---@param buf? integer
function M.with_client(fn, buf)
  local client = M.get() or M.start(buf)
  if not client then
    return
  end
  if client.initialized then
    fn(client)
  else
    table.insert(pending, fn)
  end
end

--- Sends a request once the client is ready; `cb(result)` on success, errors are reported
--- (to `on_error(err)` when given, else with vim.notify).
---@param method string
---@param params table
---@param cb? fun(result: any, client: vim.lsp.Client)
---@param on_error? fun(err: table)
---@param buf? integer a buffer whose pending changes must reach the server first
function M.request(method, params, cb, on_error, buf)
  M.with_client(function(client)
    call(client, 'request', method, params, function(err, result)
      if err then
        if on_error then
          on_error(err)
        else
          require('tandem.notify').show('Tandem: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
        end
        return
      end
      if cb then
        cb(result, client)
      end
    end, buf)
  end, buf)
end

--- Sends the current settings with workspace/didChangeConfiguration.
function M.push_settings()
  local client = M.get()
  if not client then
    return
  end
  local settings = config.server_settings()
  client.settings = { tandem = settings }
  if client.initialized then
    call(client, 'notify', 'workspace/didChangeConfiguration', { settings = { tandem = settings } })
  end
end

return M
