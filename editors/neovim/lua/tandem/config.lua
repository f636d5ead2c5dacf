-- Tandem's options: defaults, validation and the server settings they map to.

local M = {}

---@class tandem.ChatOptions
---@field position? 'right'|'left'|'above'|'below'  where :TandemChat opens the split
---@field width? integer   width of a vertical split
---@field height? integer  height of a horizontal split
---@field open_on_ask? boolean  open the chat when you send a prompt
---@field follow_runs? boolean  switch the chat to a session whose run starts while yours is idle (code actions)
---@field show_thinking? boolean  show reasoning text (quoted with "> "); false: one line per block
---@field max_diff_lines? integer  longest diff shown under an edit (0: summary only)

---@class tandem.Options
---@field cmd? string[]  the server command
---@field cmd_env? table<string, string>  extra environment for the server
---@field model? string  "provider/id" for new sessions (nil: pi's default, then the first available)
---@field thinking_level? string  off | minimal | low | medium | high | xhigh | max
---@field edit_mode? 'confirm'|'auto'
---@field bash_permission? 'ask'|'allow'|'deny'
---@field agent_dir? string  pi's agent dir (nil: $PI_CODING_AGENT_DIR, then ~/.pi/agent)
---@field edit_timeout_ms? integer  how long the server waits for an answer to an edit or a question
---@field save_before_commands? boolean  save the files Tandem changed before the agent runs a command (nil: the server's default, true)
---@field tools? string[]  the agent's tools (nil: read, bash, edit, write, grep, find, ls)
---@field filetypes? string[]  attach only to buffers of these filetypes (nil: every file buffer)
---@field root_markers? string[]  files or folders that mark a project root
---@field autostart? boolean  start the server and attach file buffers automatically
---@field capabilities? table  merged into the client capabilities
---@field on_attach? fun(client: vim.lsp.Client, bufnr: integer)
---@field progress? 'echo'|false  how to show the server's work-done progress
---@field confirm? boolean  answer the server's questions (Apply / Reject / Apply all …) with vim.ui.select
---@field fix_code_actions? boolean  "Ask Tandem to fix" for every diagnostic on the line, from every source (not only Tandem's)
---@field trust? 'vim.secure'|'ask'  who decides whether a project's own configuration (.pi/settings.json, mcp.json, skills…) is used: Neovim's trust database for the root directory (`:trust`), else the server asks; 'ask': the server always decides
---@field chat? tandem.ChatOptions

---@type tandem.Options
M.defaults = {
  cmd = { 'tandem', 'lsp' },
  cmd_env = nil,
  model = nil,
  thinking_level = nil,
  edit_mode = 'confirm',
  bash_permission = 'ask',
  agent_dir = nil,
  edit_timeout_ms = nil,
  save_before_commands = nil,
  filetypes = nil,
  root_markers = { '.git', '.pi', '.hg', '.jj', '.svn' },
  autostart = true,
  capabilities = nil,
  on_attach = nil,
  progress = 'echo',
  confirm = true,
  fix_code_actions = true,
  trust = 'vim.secure',
  chat = {
    position = 'right',
    width = 80,
    height = 15,
    open_on_ask = true,
    follow_runs = true,
    show_thinking = true,
    max_diff_lines = 40,
  },
}

M.thinking_levels = { 'off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max' }

---@type tandem.Options
M.options = vim.deepcopy(M.defaults)

local one_of = {
  trust = { 'vim.secure', 'ask' },
  edit_mode = { 'confirm', 'auto' },
  bash_permission = { 'ask', 'allow', 'deny' },
  thinking_level = M.thinking_levels,
}

--- Merges `opts` over the defaults; a bad value is reported and replaced by its default.
---@param opts? tandem.Options
---@return tandem.Options
function M.set(opts)
  local options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  -- Lists replace, they are not merged index by index.
  for _, key in ipairs({ 'cmd', 'filetypes', 'root_markers' }) do
    if opts and opts[key] ~= nil then
      options[key] = opts[key]
    end
  end
  if type(options.cmd) == 'string' then
    options.cmd = { options.cmd, 'lsp' }
  end
  if type(options.cmd) ~= 'table' or type(options.cmd[1]) ~= 'string' then
    vim.notify('tandem: `cmd` must be a list such as {"tandem", "lsp"}; using the default', vim.log.levels.WARN)
    options.cmd = vim.deepcopy(M.defaults.cmd)
  end
  for key, values in pairs(one_of) do
    local value = options[key]
    if value ~= nil and not vim.tbl_contains(values, value) then
      vim.notify(
        string.format('tandem: `%s` must be one of %s, not %q; using the default', key, table.concat(values, ', '), tostring(value)),
        vim.log.levels.WARN
      )
      options[key] = M.defaults[key]
    end
  end
  M.options = options
  return options
end

--- The server's configuration (protocol-ext README, "Configuration"): camelCase keys, unset
--- options left out so the server applies pi's defaults.
---@param options? tandem.Options
---@return table
function M.server_settings(options)
  options = options or M.options
  local settings = vim.empty_dict()
  local function put(key, value)
    if value ~= nil then
      settings[key] = value
    end
  end
  put('model', options.model)
  put('thinkingLevel', options.thinking_level)
  put('editMode', options.edit_mode)
  put('bashPermission', options.bash_permission)
  put('agentDir', options.agent_dir and vim.fn.expand(options.agent_dir) or nil)
  put('editTimeoutMs', options.edit_timeout_ms)
  put('saveBeforeCommands', options.save_before_commands)
  put('tools', options.tools)
  return settings
end

--- Neovim's own trust decision for the directory `dir`, from vim.secure's trust database
--- ($XDG_STATE_HOME/nvim/trust, written by `:trust` and vim.secure.read()): true when the
--- directory is allowed, false when denied, nil when Neovim has no decision (the server then
--- decides, asking when needed) or the `trust` option is 'ask'. vim.secure has no query that
--- does not prompt, so the database is read here; a line is "<hash> <path>", the hash
--- "directory" for an allowed directory and "!" for a denied path.
---@param dir string
---@param options? tandem.Options
---@return boolean|nil
function M.editor_trust(dir, options)
  options = options or M.options
  if options.trust ~= 'vim.secure' then
    return nil
  end
  local real = vim.uv.fs_realpath(dir)
  local file = real and io.open(vim.fn.stdpath('state') .. '/trust', 'r')
  if not file then
    return nil
  end
  local decision = nil
  for line in file:lines() do
    local hash, path = line:match('^(%S+) (.+)$')
    if path == real then
      if hash == '!' then
        decision = false
      elseif hash == 'directory' then
        decision = true
      end
    end
  end
  file:close()
  return decision
end

return M
