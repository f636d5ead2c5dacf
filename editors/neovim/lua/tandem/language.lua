-- `tandem/languageRequest` (server → client): the agent's definition, references, symbols,
-- hover and rename, answered by the language servers Neovim runs for the document (Tandem's
-- own client excepted), each asked in its own position encoding, the answers converted back to
-- Tandem's and merged (protocol-ext README, "Language intelligence").
--
-- A document must be loaded in Neovim: a server answers only for documents it was told about
-- (didOpen), so for one that is not loaded the answer is `servers: 0`. Loading it here would
-- leave hidden buffers behind the user's back. `workspace/symbol` needs no document.

local answer = require('tandem.answer')
local diagnostics = require('tandem.diagnostics')
local position = require('tandem.position')

local M = {}

--- How long one language server may take; the server waits 10 s for the whole answer.
M.TIMEOUT_MS = 8000

local has_011 = vim.fn.has('nvim-0.11') == 1

local function call(client, method, ...)
  return require('tandem.lsp').call(client, method, ...)
end

--- Whether `client` handles `method` (for `buf`, when given).
local function supports(client, method, buf)
  if has_011 then
    return client:supports_method(method, buf)
  end
  return client.supports_method(method, { bufnr = buf })
end

local function is_list(value)
  return type(value) == 'table' and (next(value) == nil or vim.islist(value))
end

local function list_of(result)
  if result == nil or result == vim.NIL then
    return {}
  end
  if is_list(result) then
    return result
  end
  return { result }
end

-- Results, converted from a server's encoding to Tandem's -------------------------------------

---@param conv tandem.PositionConverter
local function location(conv, loc)
  if type(loc) == 'table' and type(loc.uri) == 'string' then
    conv:range(loc.uri, loc.range)
  end
  return loc
end

---@param conv tandem.PositionConverter
local function location_link(conv, link, origin_uri)
  conv:range(link.targetUri, link.targetRange)
  conv:range(link.targetUri, link.targetSelectionRange)
  if origin_uri then
    conv:range(origin_uri, link.originSelectionRange)
  end
  return link
end

---@param conv tandem.PositionConverter
local function document_symbol(conv, uri, symbol)
  if symbol.location then
    -- SymbolInformation
    location(conv, symbol.location)
    return symbol
  end
  conv:range(uri, symbol.range)
  conv:range(uri, symbol.selectionRange)
  for _, child in ipairs(symbol.children or {}) do
    document_symbol(conv, uri, child)
  end
  return symbol
end

---@param conv tandem.PositionConverter
local function workspace_edit(conv, edit)
  if type(edit) ~= 'table' then
    return edit
  end
  if type(edit.changes) == 'table' then
    for uri, edits in pairs(edit.changes) do
      for _, e in ipairs(edits) do
        conv:range(uri, e.range)
      end
    end
  end
  for _, change in ipairs(type(edit.documentChanges) == 'table' and edit.documentChanges or {}) do
    if type(change.textDocument) == 'table' and type(change.edits) == 'table' then
      for _, e in ipairs(change.edits) do
        conv:range(change.textDocument.uri, e.range)
      end
    end
  end
  return edit
end

--- `result` of `method` with its positions in Tandem's encoding (converted in place).
---@param conv tandem.PositionConverter
---@param method string
---@param uri string? the request's document
local function convert(conv, method, result, uri)
  if result == nil or result == vim.NIL or conv:identity() then
    return result
  end
  if method == 'textDocument/definition' then
    for _, item in ipairs(list_of(result)) do
      if item.targetUri then
        location_link(conv, item, uri)
      else
        location(conv, item)
      end
    end
  elseif method == 'textDocument/references' or method == 'workspace/symbol' then
    for _, item in ipairs(list_of(result)) do
      location(conv, item.location or item)
    end
  elseif method == 'textDocument/documentSymbol' then
    for _, item in ipairs(list_of(result)) do
      document_symbol(conv, uri, item)
    end
  elseif method == 'textDocument/hover' then
    conv:range(uri, result.range)
  elseif method == 'textDocument/rename' then
    workspace_edit(conv, result)
  end
  return result
end

-- Merging -----------------------------------------------------------------------------------

--- A DocumentSymbol tree as SymbolInformation (for a list that mixes both kinds).
local function flatten(uri, symbol, container, out)
  table.insert(out, {
    name = symbol.name,
    kind = symbol.kind,
    tags = symbol.tags,
    location = { uri = uri, range = symbol.range },
    containerName = container,
  })
  for _, child in ipairs(symbol.children or {}) do
    flatten(uri, child, symbol.name, out)
  end
end

--- Hover contents (MarkupContent, MarkedString or a list of them) as markdown.
local function hover_text(contents)
  if type(contents) == 'string' then
    return contents
  end
  if type(contents) ~= 'table' then
    return ''
  end
  if contents.kind then
    return contents.value or ''
  end
  if contents.language then
    return string.format('```%s\n%s\n```', contents.language, contents.value or '')
  end
  local parts = {}
  for _, part in ipairs(contents) do
    local text = hover_text(part)
    if text ~= '' then
      table.insert(parts, text)
    end
  end
  return table.concat(parts, '\n\n')
end

--- The answers (in the order the clients were asked), merged as the protocol says.
---@param method string
---@param results any[] non-null results
---@param uri string? the request's document
local function merge(method, results, uri)
  if method == 'textDocument/rename' then
    return results[1] or vim.NIL
  end
  if method == 'textDocument/hover' then
    local parts, range = {}, nil
    for _, hover in ipairs(results) do
      local text = hover_text(hover.contents)
      if vim.trim(text) ~= '' then
        table.insert(parts, text)
        range = range or hover.range
      end
    end
    if #parts == 0 then
      return vim.NIL
    end
    return { contents = { kind = 'markdown', value = table.concat(parts, '\n\n') }, range = range }
  end
  local all = {}
  for _, result in ipairs(results) do
    vim.list_extend(all, list_of(result))
  end
  if method == 'textDocument/definition' then
    local links, locations = false, false
    for _, item in ipairs(all) do
      links = links or item.targetUri ~= nil
      locations = locations or item.targetUri == nil
    end
    if links and locations then
      for i, item in ipairs(all) do
        if item.targetUri then
          all[i] = { uri = item.targetUri, range = item.targetSelectionRange or item.targetRange }
        end
      end
    end
  elseif method == 'textDocument/documentSymbol' then
    local infos, trees = false, false
    for _, item in ipairs(all) do
      infos = infos or item.location ~= nil
      trees = trees or item.location == nil
    end
    if infos and trees then
      local flat = {}
      for _, item in ipairs(all) do
        if item.location then
          table.insert(flat, item)
        else
          flatten(uri, item, nil, flat)
        end
      end
      all = flat
    end
  end
  return all
end

-- Asking ------------------------------------------------------------------------------------

--- The clients to ask: for a document, those attached to its loaded buffer; for
--- workspace/symbol, every running one whose root is inside Tandem's workspace folders or holds
--- one of them.
---@param method string
---@param buf integer?
---@param tandem vim.lsp.Client?
---@return vim.lsp.Client[]
local function clients_for(method, buf, tandem)
  local candidates = {}
  if buf then
    candidates = diagnostics.other_clients(buf)
  else
    local folders = {}
    for _, folder in ipairs(tandem and tandem.workspace_folders or {}) do
      local ok, fname = pcall(vim.uri_to_fname, folder.uri)
      if ok then
        table.insert(folders, vim.fs.normalize(fname))
      end
    end
    local function related(dir)
      if not dir then
        return #folders == 0
      end
      dir = vim.fs.normalize(dir)
      for _, folder in ipairs(folders) do
        if dir == folder or vim.startswith(dir, folder .. '/') or vim.startswith(folder, dir .. '/') then
          return true
        end
      end
      return #folders == 0
    end
    for _, client in ipairs(vim.lsp.get_clients()) do
      if not diagnostics.is_tandem(client) and related(client.root_dir) then
        table.insert(candidates, client)
      end
    end
  end
  local clients = {}
  for _, client in ipairs(candidates) do
    if supports(client, method, buf) then
      table.insert(clients, client)
    end
  end
  return clients
end

--- Sends `method` to `client`; `cb(err, result)` once, with an error after M.TIMEOUT_MS.
local function ask(client, method, params, buf, cb)
  local finished, id = false, nil
  local function once(err, result)
    if not finished then
      finished = true
      cb(err, result)
    end
  end
  local stop_timer = answer.timer(M.TIMEOUT_MS, function()
    if id and not finished then
      pcall(call, client, 'cancel_request', id)
    end
    once({ message = string.format('no answer within %d s', M.TIMEOUT_MS / 1000) })
  end)
  local ok
  ok, id = call(client, 'request', method, params, function(err, result)
    stop_timer()
    once(err, result)
  end, buf)
  if not ok then
    stop_timer()
    once({ message = 'the request could not be sent (has the server stopped?)' })
  end
end

--- The request's params in `client`'s encoding.
---@param params table in Tandem's encoding
local function params_for(params, uri, from, to)
  local copy = vim.deepcopy(params)
  if uri and type(copy.position) == 'table' then
    position.converter(from, to):position(uri, copy.position)
  end
  return copy
end

local METHODS = {
  ['textDocument/definition'] = true,
  ['textDocument/references'] = true,
  ['textDocument/documentSymbol'] = true,
  ['workspace/symbol'] = true,
  ['textDocument/hover'] = true,
  ['textDocument/rename'] = true,
}

--- The `tandem/languageRequest` handler (server → client).
---@param params table?
---@param ctx table
function M.handle(_, params, ctx)
  if type(params) ~= 'table' or type(params.method) ~= 'string' then
    return answer.error('InvalidParams', 'Tandem: tandem/languageRequest: `method` must be a string')
  end
  local method, inner = params.method, params.params
  if not METHODS[method] then
    return answer.error('MethodNotFound', 'Tandem: the editor does not forward ' .. method)
  end
  if type(inner) ~= 'table' then
    return answer.error('InvalidParams', 'Tandem: tandem/languageRequest: `params` must be the params of ' .. method)
  end
  local tandem = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = tandem and tandem.offset_encoding or 'utf-16'
  local buf
  if method ~= 'workspace/symbol' then
    local uri = type(inner.textDocument) == 'table' and inner.textDocument.uri
    if type(uri) ~= 'string' then
      return answer.error('InvalidParams', 'Tandem: tandem/languageRequest: `params.textDocument.uri` is missing')
    end
    buf = position.loaded_buf(uri)
    if not buf then
      return { servers = 0, result = vim.NIL }
    end
    -- The servers know the buffer under Neovim's spelling of its URI.
    inner = vim.deepcopy(inner)
    inner.textDocument.uri = vim.uri_from_bufnr(buf)
  end
  local clients = clients_for(method, buf, tandem)
  if #clients == 0 then
    return { servers = 0, result = vim.NIL }
  end
  local doc_uri = buf and inner.textDocument.uri or nil
  return answer.later('tandem/languageRequest', function(done)
    local replies = {}
    local remaining = #clients
    local function finish()
      local results, failures = {}, {}
      for i, client in ipairs(clients) do
        local reply = replies[i]
        if reply.err then
          local why = reply.err.message or vim.inspect(reply.err)
          table.insert(failures, string.format('%s: %s', client.name, why))
        elseif reply.result ~= nil and reply.result ~= vim.NIL then
          local conv = position.converter(client.offset_encoding or 'utf-16', encoding)
          table.insert(results, convert(conv, method, reply.result, doc_uri))
        end
      end
      if #failures == #clients then
        local why = string.format('Tandem: %s failed: %s', method, table.concat(failures, '; '))
        return done(answer.error('RequestFailed', why))
      end
      for _, failure in ipairs(failures) do
        vim.lsp.log.warn('tandem/languageRequest', method, failure)
      end
      done({ servers = #clients, result = merge(method, results, doc_uri) })
    end
    for i, client in ipairs(clients) do
      local p = params_for(inner, doc_uri, encoding, client.offset_encoding or 'utf-16')
      ask(client, method, p, buf, function(err, result)
        replies[i] = { err = err, result = result }
        remaining = remaining - 1
        if remaining == 0 then
          local ok, why = pcall(finish)
          if not ok then
            why = string.format('Tandem: merging the answers to %s failed: %s', method, tostring(why))
            done(answer.error('InternalError', why))
          end
        end
      end)
    end
  end)
end

return M
