-- Position encodings at one boundary. Neovim keeps byte columns; every language server speaks
-- the encoding it negotiated (Tandem: utf-8 with Neovim, the others: often utf-16). What the
-- plugin hands between Tandem and the other servers (diagnostics, positions, results) is
-- converted here, through the text of the line: the buffer's when it is loaded, else the file's.
-- Documents are found by file name, whatever the spelling of their URI.

local M = {}

local has_011 = vim.fn.has('nvim-0.11') == 1

--- The byte index in `line` of `index` units of `encoding` (clamped to the line).
---@param line string
---@param index integer
---@param encoding string 'utf-8'|'utf-16'|'utf-32'
---@return integer
function M.to_byte(line, index, encoding)
  if index <= 0 then
    return 0
  end
  if encoding == 'utf-8' then
    return math.min(index, #line)
  end
  if has_011 then
    return vim.str_byteindex(line, encoding, index, false)
  end
  -- 0.10 raises on an index past the line.
  local ok, byte = pcall(vim.lsp.util._str_byteindex_enc, line, index, encoding)
  return ok and byte or #line
end

--- The index in units of `encoding` of byte `byte` of `line` (clamped to the line).
---@param line string
---@param byte integer
---@param encoding string
---@return integer
function M.from_byte(line, byte, encoding)
  if byte <= 0 then
    return 0
  end
  byte = math.min(byte, #line)
  if encoding == 'utf-8' then
    return byte
  end
  if has_011 then
    return vim.str_utfindex(line, encoding, byte, false)
  end
  return vim.lsp.util._str_utfindex_enc(line, byte, encoding)
end

--- The normalized file name of a buffer (nil for an unnamed one): the key that finds a
--- document however its URI is spelled.
---@param buf integer
---@return string?
function M.buf_fname(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  return name ~= '' and vim.fs.normalize(name) or nil
end

--- The normalized file name of `uri` (nil when it names no file).
---@param uri string
---@return string?
function M.uri_fname(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  return ok and vim.fs.normalize(fname) or nil
end

--- The buffer of file `fname` (any, or only a loaded one), if Neovim has one.
---@param fname string?
---@param loaded? boolean
---@return integer?
function M.fname_buf(fname, loaded)
  if not fname then
    return nil
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if (not loaded or vim.api.nvim_buf_is_loaded(buf)) and M.buf_fname(buf) == fname then
      return buf
    end
  end
  return nil
end

--- The loaded buffer of the file `uri` names, if any (compared by file name, so that two
--- spellings of one URI find the same buffer).
---@param uri string
---@return integer?
function M.loaded_buf(uri)
  return M.fname_buf(M.uri_fname(uri), true)
end

--- A reader of document lines by URI (0-based rows): the loaded buffer's text, else the file's
--- (read once per reader). A row past the end, or an unreadable file, reads as ''.
---@return fun(uri: string, row: integer): string
function M.line_reader()
  local files = {} ---@type table<string, string[]|false>
  local bufs = {} ---@type table<string, integer|false>
  return function(uri, row)
    if bufs[uri] == nil then
      bufs[uri] = M.loaded_buf(uri) or false
    end
    local buf = bufs[uri]
    if buf and vim.api.nvim_buf_is_valid(buf) then
      return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
    end
    if files[uri] == nil then
      local ok, fname = pcall(vim.uri_to_fname, uri)
      local readable = ok and vim.fn.filereadable(fname) == 1
      files[uri] = readable and vim.fn.readfile(fname) or false
    end
    local lines = files[uri]
    return lines and lines[row + 1] or ''
  end
end

---@class tandem.PositionConverter
---@field from string the encoding positions come in
---@field to string the encoding they go out in
---@field line fun(uri: string, row: integer): string
local Converter = {}
Converter.__index = Converter

--- Whether the two encodings are the same (nothing to convert).
function Converter:identity()
  return self.from == self.to
end

--- Converts `pos` (of document `uri`) in place; returns it.
---@param uri string
---@param pos lsp.Position
function Converter:position(uri, pos)
  if self.from ~= self.to and type(pos) == 'table' and type(pos.character) == 'number' and pos.character > 0 then
    local line = self.line(uri, pos.line)
    pos.character = M.from_byte(line, M.to_byte(line, pos.character, self.from), self.to)
  end
  return pos
end

--- Converts `range` (of document `uri`) in place; returns it.
---@param uri string
---@param range lsp.Range?
function Converter:range(uri, range)
  if type(range) == 'table' then
    self:position(uri, range.start)
    self:position(uri, range['end'])
  end
  return range
end

--- A converter of positions from encoding `from` to encoding `to`, reading lines with `line`
--- (default: a new M.line_reader()).
---@param from string
---@param to string
---@param line? fun(uri: string, row: integer): string
---@return tandem.PositionConverter
function M.converter(from, to, line)
  return setmetatable({ from = from, to = to, line = line or M.line_reader() }, Converter)
end

return M
