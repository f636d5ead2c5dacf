-- tandem/languageRequest with in-process stand-in servers (vim.lsp.start with a `cmd` function,
-- UTF-16 like most servers), for what the real ones do not show: answers of different shapes
-- merged (LocationLink and Location, DocumentSymbol and SymbolInformation, MarkedString and
-- MarkupContent), a server that never answers (the answer comes after the per-server timeout),
-- and every server failing (an error naming each). Each stand-in echoes the position it received,
-- so the round trip through the encodings shows. server/tandem/tests/neovim_plugin/language.rs
-- checks the report.
local H = dofile(vim.env.TANDEM_PLUGIN .. '/tests/helpers.lua')
H.init()

--- A stand-in server: `answers[method](params)` returns the result, or nil and an error, or
--- 'never' (no answer at all).
local function stand_in(capabilities, answers)
  return function(dispatchers)
    local closing, last_id = false, 0
    return {
      request = function(method, params, callback)
        last_id = last_id + 1
        local result, err = vim.NIL, nil
        if method == 'initialize' then
          result = { capabilities = capabilities }
        elseif answers[method] then
          result, err = answers[method](params)
        end
        if result ~= 'never' then
          -- Through JSON, as from a real server (no table shared with the request).
          local wire = vim.json.decode(vim.json.encode({ result = result }), { luanil = { object = true } })
          vim.schedule(function()
            callback(err, wire.result == nil and vim.NIL or wire.result)
          end)
        end
        return true, last_id
      end,
      notify = function(method)
        if method == 'exit' then
          closing = true
          dispatchers.on_exit(0, 0)
        end
        return true
      end,
      is_closing = function()
        return closing
      end,
      terminate = function()
        closing = true
      end,
    }
  end
end

--- The range of an echoed position, one character wide.
local function at(params)
  local p = params.position
  return { start = p, ['end'] = { line = p.line, character = p.character + 1 } }
end

H.run(function()
  local buf = H.open('main.py')
  local uri = vim.uri_from_bufnr(buf)
  -- Non-ASCII before the position: "é" is 2 bytes and 1 UTF-16 unit, "👋" 4 bytes and 2 units.
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'é👋 = target', 'second line' })
  local tandem = assert(require('tandem.lsp').get())
  local caps = {
    positionEncoding = 'utf-16',
    definitionProvider = true,
    hoverProvider = true,
    documentSymbolProvider = true,
    referencesProvider = true,
  }
  H.step('start the stand-in servers')
  local links = vim.lsp.start({
    name = 'links',
    cmd = stand_in(caps, {
      ['textDocument/definition'] = function(params)
        return { { targetUri = uri, targetRange = at(params), targetSelectionRange = at(params) } }
      end,
      ['textDocument/hover'] = function()
        return { contents = { 'plain words', { language = 'python', value = 'target: int' } } }
      end,
      ['textDocument/documentSymbol'] = function()
        return {
          {
            name = 'outer',
            kind = 12,
            range = { start = { line = 0, character = 3 }, ['end'] = { line = 1, character = 0 } },
            selectionRange = { start = { line = 0, character = 3 }, ['end'] = { line = 0, character = 4 } },
            children = {
              {
                name = 'inner',
                kind = 13,
                range = { start = { line = 1, character = 0 }, ['end'] = { line = 1, character = 6 } },
                selectionRange = { start = { line = 1, character = 0 }, ['end'] = { line = 1, character = 6 } },
              },
            },
          },
        }
      end,
      ['textDocument/references'] = function()
        return nil, { code = -32603, message = 'links cannot find references' }
      end,
    }),
  }, { bufnr = buf })
  local locations = vim.lsp.start({
    name = 'locations',
    cmd = stand_in(caps, {
      ['textDocument/definition'] = function(params)
        return { uri = uri, range = at(params) }
      end,
      ['textDocument/hover'] = function()
        return { contents = { kind = 'markdown', value = '**target**' } }
      end,
      ['textDocument/documentSymbol'] = function()
        return { { name = 'info', kind = 13, location = { uri = uri, range = at({ position = { line = 0, character = 3 } }) } } }
      end,
      ['textDocument/references'] = function()
        return nil, { code = -32603, message = 'locations cannot find references' }
      end,
    }),
  }, { bufnr = buf })
  local silent = vim.lsp.start({
    name = 'silent',
    cmd = stand_in({ positionEncoding = 'utf-16', hoverProvider = true }, {
      ['textDocument/hover'] = function()
        return 'never'
      end,
    }),
  }, { bufnr = buf })
  H.wait_for('the stand-ins to initialize', function()
    for _, id in ipairs({ links, locations, silent }) do
      local c = vim.lsp.get_client_by_id(id)
      if not (c and c.initialized and vim.lsp.buf_is_attached(buf, id)) then
        return false
      end
    end
    return true
  end)
  require('tandem.language').TIMEOUT_MS = 400

  local function request(method, params)
    return H.server_request('tandem/languageRequest', { method = method, params = params })
  end
  local line = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]
  local byte = assert(line:find('target', 1, true)) - 1
  local position = { line = 0, character = require('tandem.position').from_byte(line, byte, tandem.offset_encoding) }
  local r = H.report
  r.position = position
  r.encodings = {}
  for _, id in ipairs({ links, locations }) do
    table.insert(r.encodings, vim.lsp.get_client_by_id(id).offset_encoding)
  end
  H.step('definition: a LocationLink and a Location')
  r.definition = request('textDocument/definition', { textDocument = { uri = uri }, position = position })
  H.step('hover: MarkedStrings, MarkupContent, and a server that never answers')
  r.hover = request('textDocument/hover', { textDocument = { uri = uri }, position = position })
  H.step('documentSymbol: a DocumentSymbol tree and a SymbolInformation')
  r.symbols = request('textDocument/documentSymbol', { textDocument = { uri = uri } })
  H.step('references: every server fails')
  r.references = request('textDocument/references', {
    textDocument = { uri = uri },
    position = position,
    context = { includeDeclaration = true },
  })
end)
