-- :checkhealth tandem

local M = {}

local health = vim.health

local KEY_VARS = {
  'ANTHROPIC_API_KEY', 'ANTHROPIC_OAUTH_TOKEN', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'OPENROUTER_API_KEY',
  'GROQ_API_KEY', 'XAI_API_KEY', 'MISTRAL_API_KEY', 'DEEPSEEK_API_KEY', 'CEREBRAS_API_KEY',
}

function M.check()
  local config = require('tandem.config')
  local lsp = require('tandem.lsp')
  local tandem = require('tandem')
  local opts = config.options

  health.start('tandem: Neovim')
  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.10 or newer is needed')
  end
  if tandem.did_setup then
    health.ok('require("tandem").setup{} was called')
  else
    health.warn('require("tandem").setup{} was not called: the first :Tandem command uses the defaults')
  end

  health.start('tandem: server')
  local exe = opts.cmd[1]
  if vim.fn.executable(exe) == 1 then
    local path = vim.fn.exepath(exe)
    local out = vim.fn.system({ exe, '--version' })
    health.ok(string.format('%s (%s): %s', exe, path, vim.trim(out or '')))
  else
    health.error(
      string.format('`%s` is not executable or not on $PATH', exe),
      { 'Install it: cargo install --path server/tandem (from the Tandem repository)',
        'or set cmd = { "/path/to/tandem", "lsp" } in require("tandem").setup{}' }
    )
  end
  local client = lsp.get()
  if client then
    health.ok(string.format('client %d running, root %s, position encoding %s', client.id,
      tostring(client.root_dir or client.config.root_dir), tostring(client.offset_encoding)))
  else
    health.info('the server is not running (it starts when a file buffer opens, or with :TandemAsk)')
  end
  health.info('LSP log: ' .. vim.lsp.get_log_path() .. ' (:TandemLog; every message with vim.lsp.set_log_level("debug"))')

  health.start('tandem: models and keys')
  if opts.model then
    health.info('model: ' .. opts.model)
  else
    health.info("model: not set (pi's defaultProvider/defaultModel, then the first model with a key)")
  end
  local dir = opts.agent_dir or vim.env.PI_CODING_AGENT_DIR or '~/.pi/agent'
  dir = vim.fn.expand(dir)
  if vim.fn.isdirectory(dir) == 1 then
    health.ok('agent dir: ' .. dir)
  else
    health.warn('agent dir ' .. dir .. ' does not exist (only built-in models and environment keys are available)')
  end
  for _, file in ipairs({ 'models.json', 'auth.json', 'settings.json' }) do
    local path = dir .. '/' .. file
    if vim.fn.filereadable(path) == 1 then
      local ok = pcall(vim.json.decode, table.concat(vim.fn.readfile(path), '\n'))
      if ok then
        health.ok(file .. ' is valid JSON')
      else
        health.error(file .. ' is not valid JSON: ' .. path)
      end
    else
      health.info(file .. ': none')
    end
  end
  local found = {}
  for _, var in ipairs(KEY_VARS) do
    if vim.env[var] and vim.env[var] ~= '' then
      table.insert(found, var)
    end
  end
  if #found > 0 then
    health.ok('API key variables set: ' .. table.concat(found, ', '))
  elseif vim.fn.filereadable(dir .. '/auth.json') == 1 or vim.fn.filereadable(dir .. '/models.json') == 1 then
    health.info('no API key variable set; keys may come from auth.json or models.json')
  else
    health.warn('no API key found', { 'export ANTHROPIC_API_KEY=… (or another provider variable), or add it to ' .. dir .. '/auth.json' })
  end
  if client and client.initialized then
    local done, result, err = false, nil, nil
    lsp.call(client, 'request', 'tandem/models/list', vim.empty_dict(), function(e, r)
      done, result, err = true, r, e
    end)
    vim.wait(3000, function()
      return done
    end, 20)
    if err then
      health.error('tandem/models/list failed: ' .. (err.message or vim.inspect(err)))
    elseif result then
      local available = 0
      for _, m in ipairs(result) do
        if m.available then
          available = available + 1
        end
      end
      if available > 0 then
        health.ok(string.format('%d of %d models have a key', available, #result))
      else
        health.warn('no model has an API key: set one (see above) or configure a local model in models.json')
      end
    end
  end
end

return M
