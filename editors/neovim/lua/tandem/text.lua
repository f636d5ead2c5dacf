-- Text from outside (a command's output, the model's answer, the server's questions) shaped for
-- where Neovim shows it: made safe for a buffer line, wrapped at word boundaries for a width,
-- and markdown turned into plain text for the command line.
--
-- Why by hand: Neovim has no function that strips terminal escapes, and its own wrapping (the
-- message area's, 'linebreak') cuts words: the message area at any character, 'linebreak' at
-- every character of the global 'breakat' ("-", "/", "."), so inside flags and paths.
--
-- Pure: strings in, strings out (widths measured with nvim_strwidth); no buffer, no window.

local M = {}

local REPLACEMENT = '\239\191\189' -- U+FFFD

--- The stand-in of a C0 control character: its Control Pictures symbol (ESC is ␛, NUL ␀).
---@param c string one byte, 0x00-0x1F
---@return string
local function picture(c)
  return vim.fn.nr2char(0x2400 + c:byte())
end

--- `text` made safe for a buffer line and for the screen: terminal escape sequences (colours,
--- cursor moves, window titles, OSC 52 clipboard writes) removed; `\r\n` (and a `\r` at the
--- end) is a line end; other control characters shown as visible stand-ins (␛, ␇, ␡, a lone
--- `\r` as ␍), C1 controls and bidirectional overrides as U+FFFD. With `opts.terminal` (a
--- command's output), a lone `\r` rewrites its line as in a terminal: of `10%\r100%` only
--- `100%` is kept. Line feeds and tabs are kept (split the result on '\n' before
--- nvim_buf_set_lines).
---@param text string
---@param opts? {terminal?: boolean}
---@return string
function M.sanitize(text, opts)
  -- Fast path: nothing to do for most text (C1 controls and the bidi overrides start with
  -- \194 and \226).
  if not text:find('[%z\1-\8\11-\31\127\194\226]') then
    return text
  end
  -- CSI (ESC [ parameters intermediates final), OSC (ESC ] … BEL or ESC \), charset
  -- designations (ESC ( B) and the other two-byte escapes (ESC 7, ESC =, …).
  text = text:gsub('\27%[[0-?]*[ -/]*[@-~]', '')
  text = text:gsub('\27%][^\7\27]*\7', '')
  text = text:gsub('\27%][^\7\27]*\27\\', '')
  text = text:gsub('\27[()*+][0-~]', '')
  text = text:gsub('\27[0-~]', '')
  text = text:gsub('\r+\n', '\n'):gsub('\r+$', '')
  if opts and opts.terminal then
    -- What a terminal shows of a line rewritten with \r (a progress bar): its last version.
    text = text:gsub('[^\n]*\r', '')
  end
  text = text:gsub('[%z\1-\8\11-\31]', picture)
  text = text:gsub('\127', '\226\144\161') -- U+2421 ␡
  text = text:gsub('\194[\128-\159]', REPLACEMENT)
  text = text:gsub('\226\128[\170-\174]', REPLACEMENT) -- U+202A-U+202E
  text = text:gsub('\226\129[\166-\169]', REPLACEMENT) -- U+2066-U+2069
  return text
end

--- The last `keep` lines of a command's output (sanitized as a terminal shows it, trailing
--- blank lines left out), and how many came before them.
---@param text string
---@param keep integer
---@return string[] lines
---@return integer skipped
function M.tail(text, keep)
  text = M.sanitize(text, { terminal = true }):gsub('%s+$', '')
  if text == '' then
    return {}, 0
  end
  local all = vim.split(text, '\n', { plain = true })
  local skipped = math.max(0, #all - keep)
  return vim.list_slice(all, skipped + 1), skipped
end

local width_of = vim.api.nvim_strwidth

--- Characters a markdown line must not start with when a word is cut before them: there they
--- would begin emphasis or code (`_windows/…` shows as italics, its `_` hidden).
local MARKDOWN_DELIMITER = { ['_'] = true, ['*'] = true, ['`'] = true }

--- `word` cut into pieces of at most `width` cells (a wide character is never split). With
--- `markdown`, a piece never starts with a markdown delimiter: the cut moves one character
--- back.
---@param word string
---@param width integer
---@param markdown? boolean
---@return string[]
local function hard_wrap(word, width, markdown)
  local pieces, piece, used = {}, {}, 0
  for char in word:gmatch('[%z\1-\127\192-\255][\128-\191]*') do
    local w = width_of(char)
    if used + w > width and used > 0 then
      local carried = {}
      if markdown and MARKDOWN_DELIMITER[char] and #piece > 1 then
        carried = { table.remove(piece) }
      end
      table.insert(pieces, table.concat(piece))
      piece, used = carried, carried[1] and width_of(carried[1]) or 0
    end
    table.insert(piece, char)
    used = used + w
  end
  if #piece > 0 then
    table.insert(pieces, table.concat(piece))
  end
  return pieces
end

--- `text` as lines of at most `width` cells, broken at spaces only; a word longer than the
--- width (a long path) starts a line and is cut where the width ends (with `opts.markdown`, a
--- character earlier when a line would start with `_`, `*` or a backtick). Each line of `text`
--- is wrapped on its own (an empty one stays); runs of spaces become one.
---@param text string
---@param width integer
---@param opts? {markdown?: boolean}
---@return string[]
function M.wrap(text, width, opts)
  local markdown = opts and opts.markdown
  width = math.max(1, width)
  local out = {}
  for _, paragraph in ipairs(vim.split(text, '\n', { plain = true })) do
    local line, used = {}, 0
    local function flush()
      table.insert(out, table.concat(line, ' '))
      line, used = {}, 0
    end
    local any = false
    for word in paragraph:gmatch('%S+') do
      any = true
      local w = width_of(word)
      if used > 0 and used + 1 + w > width then
        flush()
      end
      if w > width then
        local pieces = hard_wrap(word, width, markdown)
        for i = 1, #pieces - 1 do
          table.insert(out, pieces[i])
        end
        word = pieces[#pieces]
        w = width_of(word)
      end
      table.insert(line, word)
      used = used + (used > 0 and 1 or 0) + w
    end
    if used > 0 or not any then
      flush()
    end
  end
  return out
end

--- Inline markdown of a text without code spans, as plain text: links and images as their
--- text, emphasis and strike-through markers removed.
---@param s string
---@return string
local function plain_inline(s)
  s = s:gsub('!%[([^%]]*)%]%b()', '%1')
  s = s:gsub('%[([^%]]*)%]%b()', '%1')
  s = s:gsub('%[([^%]]*)%]%[[^%]]*%]', '%1')
  s = s:gsub('<(%a[%w+.-]*:[^>%s]+)>', '%1')
  s = s:gsub('~~(.-)~~', '%1')
  -- Emphasis: `**x**` and `*x*` whose markers hug the text (a lone `*`, as in 2 * 3, stays);
  -- `__x__` and `_x_` only outside words (snake_case stays).
  for _, marker in ipairs({ '%*%*', '%*' }) do
    s = s:gsub(marker .. '([^%s%*])' .. marker, '%1')
    s = s:gsub(marker .. '([^%s%*][^%*]-[^%s%*])' .. marker, '%1')
  end
  for _, marker in ipairs({ '__', '_' }) do
    local source = s
    s = source:gsub('()' .. marker .. '([^%s_][^_]-)' .. marker .. '()', function(first, inner, after)
      local before, next = source:sub(first - 1, first - 1), source:sub(after, after)
      if (first > 1 and before:match('%w')) or next:match('%w') or inner:match('%s$') then
        return nil
      end
      return inner
    end)
  end
  return s
end

--- One line of markdown as plain text: heading marks, quote marks, list bullets and task
--- boxes, emphasis, strike-through and code-span backticks removed; links and images as their
--- text. The text inside code spans is kept as it is. A fence or a rule gives ''.
---@param line string
---@return string
function M.plain(line)
  local s = vim.trim(line or '')
  if s:match('^```') or s:match('^~~~') or s:match('^[-*_][-*_%s]*$') and #s:gsub('%s', '') >= 3 then
    return ''
  end
  repeat
    local before = s
    s = s:gsub('^>%s*', '')
  until s == before
  s = s:gsub('^#+%s+', ''):gsub('%s+#+$', '')
  s = s:gsub('^[-*+]%s+%[[ xX]%]%s+', ''):gsub('^[-*+]%s+', ''):gsub('^%d+[.)]%s+', '')
  -- Code spans (`x`, ``x``) keep their text as it is; the rest is read as inline markdown.
  local out, at = {}, 1
  while true do
    local open_first, open_last = s:find('`+', at)
    if not open_first then
      break
    end
    local fence = s:sub(open_first, open_last)
    local close_first, close_last = s:find(fence, open_last + 1, true)
    if not close_first then
      break
    end
    table.insert(out, plain_inline(s:sub(at, open_first - 1)))
    table.insert(out, vim.trim(s:sub(open_last + 1, close_first - 1)))
    at = close_last + 1
  end
  table.insert(out, plain_inline((s:sub(at):gsub('`', ''))))
  return vim.trim((table.concat(out):gsub('%s+', ' ')))
end

return M
