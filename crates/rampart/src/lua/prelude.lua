-- rampart's Lua prelude: the parts of HAProxy's Lua API written in Lua itself. It
-- runs once in each Lua state, after the Rust side created `core` with its native
-- functions, and returns the functions the Rust side keeps (see `lua::state`).
--
-- Everything that touches the stream goes through CUR, a function the Rust side
-- sets for the duration of one call or resume (`CUR(op, ...)`): TXN, HTTP, the
-- fetch and converter objects and the applets delegate to it.

local core = core
local CUR = nil

local function cur(op, ...)
  if CUR == nil then
    error("this function can only be called from an action, a fetch, a converter or a service", 3)
  end
  return CUR(op, ...)
end

local function set_cur(f)
  local prev = CUR
  CUR = f
  return prev
end

-- An error a native function raised reaches Lua as mlua's error object (printing
-- a traceback); HAProxy's C functions raise the message itself: pcall and xpcall
-- hand scripts that message.
local errmsg = core._errmsg
core._errmsg = nil
local raw_pcall, raw_xpcall = pcall, xpcall
local function caught(ok, ...)
  if ok then return ok, ... end
  return false, errmsg((...))
end
function pcall(f, ...)
  return caught(raw_pcall(f, ...))
end
function xpcall(f, handler, ...)
  return raw_xpcall(f, function(e) return handler(errmsg(e)) end, ...)
end

local function not_yet(what)
  return function()
    error(what .. " is not supported yet by rampart", 2)
  end
end

-- === core ===

core.emerg, core.alert, core.crit, core.err = 0, 1, 2, 3
core.warning, core.notice, core.info, core.debug = 4, 5, 6, 7
core.silent = -1

function core.Debug(msg) core.log(core.debug, msg) end
function core.Info(msg) core.log(core.info, msg) end
function core.Warning(msg) core.log(core.warning, msg) end
function core.Alert(msg) core.log(core.alert, msg) end

-- A yield hands the event loop back to the stream or task that resumed the script;
-- a number is a sleep in milliseconds.
function core.msleep(ms)
  if not coroutine.isyieldable() then
    error("core.msleep: cannot yield here (fetches, converters and init functions run to completion)", 2)
  end
  coroutine.yield(math.max(0, math.tointeger(ms) or math.floor(ms)))
end

function core.sleep(s)
  core.msleep(s * 1000)
end

function core.yield()
  if coroutine.isyieldable() then
    coroutine.yield()
  end
end

local DONE = "\0rampart:done"
function core.done(...)
  local ok = pcall(cur, "done", ...)
  error(DONE, 0)
end

-- === Socket (core.tcp) ===

-- The native methods return IO and a token when they must wait: the token names a
-- future the stream (or task) awaits before it resumes the script, which calls the
-- method again to go on.
local IO = "\0rampart:io"

local function io_call(ud, name, ...)
  if not coroutine.isyieldable() then
    error("The '" .. name .. "' function is only allowed in 'frontend', 'backend' or 'task'", 3)
  end
  local a, b, c = ud[name](ud, true, ...)
  while a == IO do
    coroutine.yield(IO, b)
    a, b, c = ud[name](ud, false, ...)
  end
  return a, b, c
end

local Socket = {}
Socket.__index = Socket
function Socket:connect(host, port)
  if host == nil then error("connect: need at least 2 arguments", 2) end
  return io_call(self._ud, "connect", tostring(host), port and math.tointeger(port))
end
function Socket:connect_ssl(host, port)
  if host == nil or port == nil then error("'connect_ssl' needs 3 arguments", 2) end
  return io_call(self._ud, "connect", tostring(host), math.tointeger(port), true)
end
function Socket:send(data, i, j)
  if type(data) ~= "string" and type(data) ~= "number" then
    error("bad argument #1 to 'send' (string expected, got " .. type(data) .. ")", 2)
  end
  data = tostring(data)
  local part = string.sub(data, i or 1, j or -1)
  if #part == 0 then return 0 end
  return io_call(self._ud, "send", part)
end
function Socket:receive(pattern, prefix)
  if prefix ~= nil and type(prefix) ~= "string" then error("Expect a 'string' for the prefix", 2) end
  return io_call(self._ud, "receive", pattern, prefix)
end
function Socket:settimeout(t) return self._ud:settimeout(t) end
function Socket:setoption() end
function Socket:close() self._ud:close() end
function Socket:getpeername() return self._ud:getpeername() end
function Socket:getsockname() return self._ud:getsockname() end

function core.tcp()
  return setmetatable({ _ud = core._tcp() }, Socket)
end

-- === HTTPClient (core.httpclient) ===

-- An HTTP/1.1 client over a Socket, with HAProxy 2.6's request (the headers given,
-- then host, accept and user-agent unless given, a body sent chunked) and result
-- table ({status, reason, headers, body}, header names in lower case, values from
-- index 0). A request that fails before a response comes back with status 0.
local HTTPClient = {}
HTTPClient.__index = HTTPClient

local function hc_url(url)
  local scheme, rest = string.match(url, "^(%a[%w+.-]*)://(.*)$")
  if not scheme then return nil end
  local authority, path = string.match(rest, "^([^/?#]*)([^#]*)")
  if path == "" then path = "/" elseif string.sub(path, 1, 1) == "?" then path = "/" .. path end
  local hostport = string.gsub(authority, "^.*@", "")
  local host, port = string.match(hostport, "^%[(.+)%]:?(%d*)$")
  if not host then host, port = string.match(hostport, "^([^:]*):?(%d*)$") end
  scheme = string.lower(scheme)
  if port == nil or port == "" then port = (scheme == "https") and 443 or 80 end
  return scheme, authority, host, math.tointeger(tonumber(port)), path
end

local HC_PARAMS = { dst = "string", url = "string", timeout = "number", headers = "table", body = "string" }

local function hc_check(t)
  if type(t) ~= "table" then error("'get' needs a table as argument", 4) end
  for k, v in pairs(t) do
    local want = HC_PARAMS[k]
    if want == nil then error("'" .. tostring(k) .. "' invalid parameter name", 4) end
    if k ~= "dst" and type(v) ~= want then
      error("invalid parameter in '" .. k .. "', must be a " .. want, 4)
    end
  end
  if t.url == nil then error("'get' need a 'url' argument", 4) end
end

local function hc_request(meth, t, authority, path)
  local lines, found = { meth .. " " .. path .. " HTTP/1.1" }, {}
  for n, vs in pairs(t.headers or {}) do
    if type(n) == "string" and type(vs) == "table" then
      local ln = string.lower(n)
      for _, v in pairs(vs) do
        if type(v) == "string" or type(v) == "number" then
          lines[#lines + 1] = ln .. ": " .. v
          found[ln] = true
        end
      end
    end
  end
  if not found.host then lines[#lines + 1] = "host: " .. authority end
  if not found.accept then lines[#lines + 1] = "accept: */*" end
  if not found["user-agent"] then lines[#lines + 1] = "user-agent: HAProxy" end
  local body = t.body or ""
  local chunked = #body > 0 and not found["content-length"]
  if chunked then lines[#lines + 1] = "transfer-encoding: chunked" end
  local req = table.concat(lines, "\r\n") .. "\r\n\r\n"
  if chunked then
    return req .. string.format("%x\r\n", #body) .. body .. "\r\n0\r\n\r\n"
  end
  return req .. body
end

local function hc_add(h, n, v)
  local l = h[n]
  if l == nil then h[n] = { [0] = v } else l[#l + 1] = v end
end

-- The status line and the headers of the final response (interim ones skipped).
local function hc_head(s, res)
  repeat
    local line = s:receive("*l")
    if line == nil then return false end
    local code, reason = string.match(line, "^HTTP/%d%.%d (%d%d%d) ?(.*)$")
    if code == nil then return false end
    res.status, res.reason, res.headers = math.tointeger(tonumber(code)), reason, {}
    while true do
      local h = s:receive("*l")
      if h == nil then return false end
      if h == "" then break end
      local n, v = string.match(h, "^([^:]+):%s*(.-)%s*$")
      if n then hc_add(res.headers, string.lower(n), v) end
    end
  until res.status >= 200 or res.status == 101
  return true
end

local function hc_chunked(s)
  local parts = {}
  while true do
    local l = s:receive("*l")
    local n = l and tonumber(string.match(l, "^%s*(%x+)"), 16)
    if n == nil then break end
    if n == 0 then
      repeat l = s:receive("*l") until l == nil or l == ""
      break
    end
    local d = s:receive(n)
    if d == nil then break end
    parts[#parts + 1] = d
    s:receive("*l")
  end
  return table.concat(parts)
end

local function hc_body(s, meth, res)
  local st, h = res.status, res.headers
  if meth == "HEAD" or st == 204 or st == 304 or st < 200 then return "" end
  local te = h["transfer-encoding"]
  if te and string.find(string.lower(te[#te] or te[0]), "chunked", 1, true) then return hc_chunked(s) end
  local cl = h["content-length"]
  if cl then return s:receive(math.tointeger(tonumber(cl[0])) or 0) or "" end
  return s:receive("*a") or ""
end

local function hc_send(meth, t)
  hc_check(t)
  local scheme, authority, host, port, path = hc_url(t.url)
  if scheme == nil or (scheme ~= "http" and scheme ~= "https") then
    error("Can't generate the HTTP request", 3)
  end
  local res = { status = 0, reason = "", headers = {}, body = "" }
  local s = core.tcp()
  if t.timeout then s:settimeout(t.timeout / 1000) end
  local ok
  -- the URL's host name through the client's resolvers section (httpclient.resolvers.id)
  -- https: TLS with the client's verification, the URL's host as the server name
  local ssl = scheme == "https"
  if t.dst ~= nil then
    ok = io_call(s._ud, "connect", tostring(t.dst), nil, ssl, ssl, host)
  else
    ok = io_call(s._ud, "connect", host, port, ssl, true, host)
  end
  if ok ~= 1 then return res end
  local req = hc_request(meth, t, authority, path)
  if s:send(req) == #req and hc_head(s, res) then
    res.body = hc_body(s, meth, res)
  end
  s:close()
  return res
end

function HTTPClient:get(t) return hc_send("GET", t) end
function HTTPClient:head(t) return hc_send("HEAD", t) end
function HTTPClient:put(t) return hc_send("PUT", t) end
function HTTPClient:post(t) return hc_send("POST", t) end
function HTTPClient:delete(t) return hc_send("DELETE", t) end

function core.httpclient()
  return setmetatable({}, HTTPClient)
end

-- core.concat(): a string builder.
local Concat = {}
Concat.__index = Concat
function Concat:add(s) self.n = self.n + 1; self.parts[self.n] = tostring(s) end
function Concat:dump() return table.concat(self.parts, "", 1, self.n) end
function core.concat() return setmetatable({ parts = {}, n = 0 }, Concat) end

core.register_filter = not_yet("core.register_filter")
core.get_var = not_yet("core.get_var")
core.set_nice = not_yet("core.set_nice")
core.event_sub = not_yet("core.event_sub")

-- core.tokenize(str, separators [, ignore_empty]): the end of the string ends the
-- last token, as HAProxy's loop reads its terminating NUL.
-- As HAProxy, the flag is read when given as the exact third argument (nil there is
-- an error).
function core.tokenize(str, sep, ...)
  for i, v in ipairs({ str, sep }) do
    if type(v) ~= "string" and type(v) ~= "number" then
      error("bad argument #" .. i .. " to 'tokenize' (string expected, got " .. type(v) .. ")", 2)
    end
  end
  local ignore_empty = false
  if select("#", ...) == 1 then
    ignore_empty = ...
    if type(ignore_empty) ~= "boolean" then error("bad argument #3 to 'tokenize' (boolean expected)", 2) end
  end
  str, sep = tostring(str), tostring(sep)
  local t, n, token, last = {}, 0, 1, #str + 1
  for i = 1, last do
    if i == last or string.find(sep, string.sub(str, i, i), 1, true) then
      if not ignore_empty or i > token then
        n = n + 1
        t[n] = string.sub(str, token, i - 1)
      end
      token = i + 1
    end
  end
  return t
end

-- core.proxies, core.frontends, core.backends: set once the files are loaded
-- (`lua::proxy`), nil while they load, as in HAProxy 2.6 (which has no
-- core.listeners either).

-- (a proxy with a stick table has a StickTable object as its `stktable`, as in
-- HAProxy 2.6, which has no StickTable global)

-- === fetches and converters: txn.f, txn.sf, txn.c ===

local function fetches(op)
  return setmetatable({}, {
    __index = function(t, name)
      local f = function(_, ...) return cur(op, name, ...) end
      rawset(t, name, f)
      return f
    end,
  })
end

local F, SF, C, SC = fetches("f"), fetches("sf"), fetches("c"), fetches("sc")

-- === HTTP ===

local HTTP = {}
HTTP.__index = HTTP
for _, m in ipairs({
  "req_get_headers", "req_set_header", "req_add_header", "req_del_header", "req_set_method",
  "req_set_path", "req_set_query", "req_set_uri", "req_rep_header", "req_rep_value",
  "res_get_headers", "res_set_header", "res_add_header", "res_del_header", "res_set_status",
  "res_rep_header", "res_rep_value",
}) do
  HTTP[m] = function(self, ...) return cur("http." .. m, ...) end
end
local http = setmetatable({}, HTTP)

-- === TXN ===

local TXN = {}
TXN.__index = TXN
TXN.f, TXN.sf, TXN.c, TXN.sc = F, SF, C, SC
TXN.http = http
function TXN:get_var(name) return cur("get_var", name) end
function TXN:set_var(name, value, ifexist) return cur("set_var", name, value, ifexist) end
function TXN:unset_var(name) return cur("unset_var", name) end
function TXN:get_priv() return cur("get_priv") end
function TXN:set_priv(v) return cur("set_priv", v) end
function TXN:log(level, msg) core.log(level, msg) end
function TXN:Debug(msg) core.log(core.debug, msg) end
function TXN:Info(msg) core.log(core.info, msg) end
function TXN:Warning(msg) core.log(core.warning, msg) end
function TXN:Alert(msg) core.log(core.alert, msg) end
function TXN:done(reply)
  pcall(cur, "done", reply)
  error(DONE, 0)
end
function TXN:set_loglevel(level) return cur("set_loglevel", level) end
function TXN:set_tos(v) return cur("set_tos", v) end
function TXN:set_mark(v) return cur("set_mark", v) end
function TXN:set_priority_class(v) return cur("set_priority_class", v) end
function TXN:set_priority_offset(v) return cur("set_priority_offset", v) end
TXN.get_headers = not_yet("txn:get_headers")
TXN.deflog = function(self, msg) core.log(core.info, msg) end

-- txn.req / txn.res: the Channel class, in TCP content actions (`lua::channel`). A
-- method that needs more data returns APPLET_IN while the inspection is not final:
-- it is yielded, the stream reads more and resumes the script, the method runs again.
local APPLET_IN = "\0rampart:in"
local Channel = {}
Channel.__index = Channel
for _, m in ipairs({ "dup", "data", "line", "input", "output", "get_in_len", "get_out_len",
                     "is_full", "may_recv", "is_resp", "get", "getline", "set", "append",
                     "prepend", "insert", "remove", "send" }) do
  local op = "chn." .. m
  Channel[m] = function(self, ...)
    local a, b = cur(op, self._res, ...)
    while a == APPLET_IN do
      coroutine.yield(APPLET_IN)
      a, b = cur(op, self._res, ...)
    end
    return a, b
  end
end
-- forward(n) forwards what there is, then waits for the rest
function Channel:forward(...)
  local n, total = ..., 0
  local a, b = cur("chn.forward", self._res, ...)
  while a == APPLET_IN do
    total = total + b
    coroutine.yield(APPLET_IN)
    a, b = cur("chn.forward", self._res, n - total)
  end
  return total + a
end
TXN.req = setmetatable({ _res = false }, Channel)
TXN.res = setmetatable({ _res = true }, Channel)

-- txn:reply(): the reply txn:done() sends.
local Reply = {}
Reply.__index = Reply
function Reply:set_status(status, reason) self.status = status; self.reason = reason end
function Reply:add_header(name, value)
  local n = string.lower(name)
  self.headers[n] = self.headers[n] or {}
  table.insert(self.headers[n], value)
end
function Reply:del_header(name) self.headers[string.lower(name)] = nil end
function Reply:set_body(body) self.body = body end
function TXN:reply(t)
  t = t or {}
  local r = setmetatable({ status = t.status or 200, reason = t.reason, headers = {}, body = t.body or "" }, Reply)
  for n, v in pairs(t.headers or {}) do
    if type(v) == "table" then
      for _, x in ipairs(v) do r:add_header(n, x) end
    else
      r:add_header(n, v)
    end
  end
  return r
end

local txn = setmetatable({}, TXN)

-- === AppletHTTP ===

local OUT_MAX_HTTP = 16384

local AppletHTTP = {}
AppletHTTP.__index = AppletHTTP
AppletHTTP.f, AppletHTTP.sf, AppletHTTP.c, AppletHTTP.sc = F, SF, C, SC
function AppletHTTP:set_status(status, reason) self._status = status; self._reason = reason end
function AppletHTTP:add_header(name, value)
  self._hdrs[#self._hdrs + 1] = { tostring(name), tostring(value) }
end
function AppletHTTP:start_response()
  self._started = true
end
-- What `send` queues goes to the client once the script waits (or ends); past
-- OUT_MAX bytes it yields to let the stream write it.
function AppletHTTP:send(data)
  if not self._started then error("AppletHTTP:send() before start_response()", 2) end
  data = tostring(data)
  self._body[#self._body + 1] = data
  self._outlen = self._outlen + #data
  if self._outlen >= OUT_MAX_HTTP and coroutine.isyieldable() then coroutine.yield() end
end

-- The stream hands the body in hand between turns (`applet_feed`): a method that
-- finds too little yields APPLET_IN, and the stream reads more of the body first.
local function http_more(a)
  if a._eof then return false end
  local had = #a._input
  a._waiting = true
  coroutine.yield(APPLET_IN)
  return #a._input > had or not a._eof
end

function AppletHTTP:receive(size)
  if size ~= nil and type(size) ~= "number" then
    error("bad argument #1 to 'receive' (number expected, got " .. type(size) .. ")", 2)
  end
  size = size and math.tointeger(size) or -1
  if size < 0 then
    while http_more(self) do end
  else
    while #self._input - self._pos + 1 < size and http_more(self) do end
  end
  local input, pos = self._input, self._pos
  if pos > #input then return "" end
  local last = #input
  if size >= 0 then last = math.min(#input, pos + size - 1) end
  self._pos = last + 1
  return string.sub(input, pos, last)
end

function AppletHTTP:getline()
  while not string.find(self._input, "\n", self._pos, true) and http_more(self) do end
  local input, pos = self._input, self._pos
  if pos > #input then return "" end
  local e = string.find(input, "\n", pos, true) or #input
  self._pos = e + 1
  return string.sub(input, pos, e)
end
function AppletHTTP:get_var(name) return cur("get_var", name) end
function AppletHTTP:set_var(name, value, ifexist) return cur("set_var", name, value, ifexist) end
function AppletHTTP:unset_var(name) return cur("unset_var", name) end
function AppletHTTP:get_priv() return cur("get_priv") end
function AppletHTTP:set_priv(v) return cur("set_priv", v) end

local function new_applet(method, path, qs, version, headers, input, complete, length)
  return setmetatable({
    method = method, path = path, qs = qs, version = version, headers = headers,
    length = length, _input = input, _pos = 1, _eof = complete, _waiting = false,
    _status = 200, _hdrs = {}, _body = {}, _outlen = 0, _started = false,
  }, AppletHTTP)
end

-- The request body in hand after the stream read more of it (nil: no more will
-- come to this applet); a wait that brought nothing new means the end of it.
local function applet_feed(a, input, complete)
  if input == nil then
    a._eof = true
    return
  end
  if a._waiting and #input <= #a._input then a._eof = true end
  if #input > #a._input then a._input = input end
  a._eof = a._eof or complete
  a._waiting = false
end

-- What `send` queued since the last call.
local function applet_take(a)
  local s = table.concat(a._body)
  a._body, a._outlen = {}, 0
  return s
end

-- === AppletTCP ===

-- The stream fills the input between turns: a method that finds too little yields
-- APPLET_IN and is resumed with the client's next bytes (false: the client closed).
-- What `send` queues is written to the client after each turn.
local OUT_MAX = 16384

local AppletTCP = {}
AppletTCP.__index = AppletTCP
AppletTCP.f, AppletTCP.sf, AppletTCP.c, AppletTCP.sc = F, SF, C, SC

local function tcp_more(a)
  if a._eof then return false end
  local data = coroutine.yield(APPLET_IN)
  if type(data) ~= "string" then
    a._eof = true
    return false
  end
  a._in = a._in .. data
  return true
end

local function tcp_take(a, n)
  local s = string.sub(a._in, 1, n)
  a._in = string.sub(a._in, n + 1)
  return s
end

function AppletTCP:getline()
  while true do
    local e = string.find(self._in, "\n", 1, true)
    if e then return tcp_take(self, e) end
    if not tcp_more(self) then return tcp_take(self, #self._in) end
  end
end

function AppletTCP:receive(size)
  if size ~= nil and type(size) ~= "number" then
    error("bad argument #1 to 'receive' (number expected, got " .. type(size) .. ")", 2)
  end
  size = size and math.tointeger(size) or -1
  if size < 0 then
    while tcp_more(self) do end
    return tcp_take(self, #self._in)
  end
  -- what is there, or wait for some
  while #self._in < size and tcp_more(self) do end
  return tcp_take(self, size)
end

function AppletTCP:send(data)
  if data == nil then error("'send' needs 2 arguments", 2) end
  data = tostring(data)
  self._out[#self._out + 1] = data
  self._outlen = self._outlen + #data
  if self._outlen >= OUT_MAX and coroutine.isyieldable() then
    -- let the stream write it before queueing more
    coroutine.yield()
  end
  return #data
end

function AppletTCP:get_var(name) return cur("get_var", name) end
function AppletTCP:set_var(name, value, ifexist) return cur("set_var", name, value, ifexist) end
function AppletTCP:unset_var(name) return cur("unset_var", name) end
function AppletTCP:get_priv() return cur("get_priv") end
function AppletTCP:set_priv(v) return cur("set_priv", v) end

local function new_applet_tcp(held)
  return setmetatable({ _in = held, _eof = false, _out = {}, _outlen = 0 }, AppletTCP)
end

local function applet_tcp_out(a)
  if a._outlen == 0 then return nil end
  local s = table.concat(a._out)
  a._out, a._outlen = {}, 0
  return s
end

local function applet_response(a)
  return a._started, math.tointeger(a._status) or 200, a._reason, a._hdrs, applet_take(a)
end

local function reply_parts(r)
  if type(r) ~= "table" then return nil end
  local hdrs = {}
  for n, vs in pairs(r.headers or {}) do
    for _, v in ipairs(vs) do hdrs[#hdrs + 1] = { n, tostring(v) } end
  end
  return math.tointeger(r.status) or 200, r.reason, hdrs, tostring(r.body or "")
end

return {
  set_cur = set_cur,
  txn = txn,
  new_applet = new_applet,
  new_applet_tcp = new_applet_tcp,
  applet_tcp_out = applet_tcp_out,
  applet_in = APPLET_IN,
  applet_response = applet_response,
  applet_feed = applet_feed,
  applet_take = applet_take,
  reply_parts = reply_parts,
  done = DONE,
}
