-- Answering a server request later, without blocking the editor. Neovim runs each server
-- request's handler in a coroutine and sends whatever the handler returns; a handler that has
-- to wait (for other language servers, for diagnostics to settle) yields, and is resumed from a
-- callback when its answer is ready. The editor goes on meanwhile.

local M = {}

--- The error answer with LSP code `code` (a vim.lsp.protocol.ErrorCodes name) and `message`.
---@param code string
---@param message string
---@return nil, lsp.ResponseError
function M.error(code, message)
  return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes[code], message)
end

--- Runs `start(done)` and returns what it passes to `done(result, err)`: at once when `done`
--- is called before `start` returns, else once it is called, from a handler's coroutine that
--- yields until then. Outside a coroutine (a Neovim that runs handlers without one) the
--- request is answered with an error rather than with a blocking wait.
---@param method string the request, for messages
---@param start fun(done: fun(result: any, err?: lsp.ResponseError))
---@return any result, lsp.ResponseError? err
function M.later(method, start)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return M.error(
      'InternalError',
      string.format('Tandem: this Neovim runs %s outside a coroutine, so it cannot answer it without blocking', method)
    )
  end
  local finished, waiting = false, false
  local result, err
  start(function(r, e)
    if finished then
      return
    end
    finished, result, err = true, r, e
    if waiting then
      -- Never resume from inside another coroutine's callback: on the main loop, once.
      vim.schedule(function()
        if coroutine.status(co) == 'suspended' then
          local ok, why = coroutine.resume(co)
          if not ok then
            require('tandem.notify').show(
              string.format('Tandem: answering %s failed: %s', method, tostring(why)),
              vim.log.levels.ERROR
            )
          end
        end
      end)
    end
  end)
  if not finished then
    waiting = true
    coroutine.yield()
  end
  if result == nil and err == nil then
    result = vim.NIL
  end
  return result, err
end

--- A one-shot libuv timer whose callback runs on the main loop; returns a function that stops
--- it (safe to call twice).
---@param ms integer
---@param fn fun()
---@return fun()
function M.timer(ms, fn)
  local timer = assert(vim.uv.new_timer())
  local stopped = false
  -- libuv counts from the loop's cached time, which lags while a callback runs: without this
  -- a timer started late in a long callback fires early.
  vim.uv.update_time()
  local function stop()
    if not stopped then
      stopped = true
      timer:stop()
      timer:close()
    end
  end
  timer:start(
    math.max(ms, 0),
    0,
    vim.schedule_wrap(function()
      if not stopped then
        stop()
        fn()
      end
    end)
  )
  return stop
end

return M
