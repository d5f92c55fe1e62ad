-- apply.lua: apply a batch of score events to every view of one board.
-- Each event changes all of its views or none; events apply in order.
--
-- KEYS[1]  the board's key prefix, e.g. "standings:{points}:". Every key the
--          script touches is built from it and shares its hash tag, so the
--          script runs on one cluster node.
-- ARGV     (flat; built by encodeApply in write.go)
--   policy ("increment"|"best"|"latest"), ties ("first"|"shared"),
--   order ("desc"|"asc"), min, max (scaled integers), lateness_ms,
--   dedupe_ms, channel, board id, exact_times (1 when "latest" needs the
--   event time kept beside the code), nviews,
--   per view: name, unit_ms, span, nperiods,
--     per period: id, start_ms, end_ms, base_unit, expire_at_ms (0 = never),
--   nevents, per event: member, value, at_ms ("" = Redis now), name ("" =
--     none), id ("" = none)
-- Returns  {1, now_ms, r1, r2, ...} with one r per event:
--            {1, duplicate(0|1), event_ms (0 for a duplicate), period_1, score_1, rank_1, ...,
--             period_V, score_V, rank_V}
--            {0, code, message, event_ms}
--          {-1, now_ms} when an event without at_ms falls in no listed period
--          (the caller's clock estimate was off): nothing was written; the
--          caller retries with periods around now_ms.

local prefix = KEYS[1]
local i = 1
local function nextarg()
  local v = ARGV[i]
  i = i + 1
  return v
end

local policy = nextarg()
local ties = nextarg()
local order = nextarg()
local vmin = tonumber(nextarg())
local vmax = tonumber(nextarg())
local lateness = tonumber(nextarg())
local dedupe = tonumber(nextarg())
local channel = nextarg()
local board = nextarg()
local exact = nextarg() == '1'
local nviews = tonumber(nextarg())

local function fmt(n) return string.format('%.0f', n) end

-- num parses a score reply exactly. Some servers answer integral scores in
-- exponent form ("1e+9"), which not every Lua tonumber accepts; the digits
-- are shifted as text so no inexact multiplication is involved.
local function num(s)
  local n = tonumber(s)
  if n then return n end
  local sign, int, frac, exp = string.match(s, '^(-?)(%d*)%.?(%d*)[eE]%+?(-?%d+)$')
  exp = tonumber(exp) - #frac
  if exp >= 0 then
    return tonumber(sign .. int .. frac .. string.rep('0', exp))
  end
  return tonumber(sign .. int .. frac) / 10 ^ (-exp)
end

local views = {}
for v = 1, nviews do
  local view = {name = nextarg(), unit = tonumber(nextarg()), span = tonumber(nextarg()), periods = {}}
  local np = tonumber(nextarg())
  for p = 1, np do
    local per = {id = nextarg(), s = tonumber(nextarg()), e = tonumber(nextarg()),
                 base = tonumber(nextarg()), exp = tonumber(nextarg())}
    per.suffix = view.name .. ':' .. per.id
    per.zkey = prefix .. 'z:' .. per.suffix
    per.xkey = prefix .. 'x:' .. per.suffix
    view.periods[p] = per
  end
  views[v] = view
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- Pass 1: resolve every event's time and periods; write nothing.
local nevents = tonumber(nextarg())
local events = {}
for e = 1, nevents do
  local ev = {member = nextarg(), value = tonumber(nextarg()), at = nextarg(), name = nextarg(), id = nextarg()}
  if ev.at == '' then
    ev.t = now
  else
    ev.t = tonumber(ev.at)
    if ev.t < now - lateness or ev.t > now + 5000 then
      ev.err = 'at ' .. ev.at .. 'ms is outside the accepted range [now - lateness, now + 5s] (now is ' .. fmt(now) .. 'ms)'
    end
  end
  if not ev.err then
    ev.per = {}
    for v = 1, nviews do
      local found = nil
      for _, per in ipairs(views[v].periods) do
        if ev.t >= per.s and ev.t < per.e then
          found = per
          break
        end
      end
      if not found then
        if ev.at == '' then
          return {-1, now}
        end
        ev.err = 'no period of view ' .. views[v].name .. ' covers the event time'
        break
      end
      ev.per[v] = found
    end
  end
  events[e] = ev
end

local function split(code, span)
  local q = math.floor(code / span)
  local r = code - q * span
  if r < 0 then q = q - 1; r = r + span elseif r >= span then q = q + 1; r = r - span end
  return q, r
end

local function value_of(rv)
  if order == 'desc' then return vmax - rv end
  return vmin + rv
end

local function rank_value(v)
  if order == 'desc' then return vmax - v end
  return v - vmin
end

local function better(a, b)
  if order == 'desc' then return a > b end
  return a < b
end

local function rank_of(zkey, member, code)
  if ties == 'shared' then
    return redis.call('ZCOUNT', zkey, '-inf', '(' .. fmt(code)) + 1
  end
  return redis.call('ZRANK', zkey, member) + 1
end

local call = redis.call
local touched = {}
local touched_list = {}
local plan_code, plan_value, plan_change = {}, {}, {}
local names_key = prefix .. 'n'

local results = {1, now}
for e = 1, nevents do
  local ev = events[e]
  local res
  local idkey, record
  if not ev.err and ev.id ~= '' then
    idkey = prefix .. 'e:' .. ev.id
    record = redis.call('GET', idkey)
  end
  if ev.err then
    res = {0, 'invalid_argument', ev.err, ev.t}
  elseif record then
    -- A repeated idempotency id: same content answers the current state in
    -- the original periods; different content is a conflict.
    local fp = ev.member .. '\n' .. fmt(ev.value) .. '\n' .. ev.at
    local sep = string.find(record, '\0', 1, true)
    if string.sub(record, 1, sep - 1) ~= fp then
      res = {0, 'conflict', 'event id ' .. ev.id .. ' was already used for a different event', ev.t}
    else
      local orig = {}
      for name, pid in string.gmatch(string.sub(record, sep + 1), '([^\t\n]+)\t([^\n]+)') do
        orig[name] = pid
      end
      res = {1, 1, 0}
      for v = 1, nviews do
        local view = views[v]
        local pid = orig[view.name] or ''
        local zkey = prefix .. 'z:' .. view.name .. ':' .. pid
        local code = redis.call('ZSCORE', zkey, ev.member)
        if code then
          code = num(code)
          local q = split(code, view.span)
          table.insert(res, pid)
          table.insert(res, value_of(q))
          table.insert(res, rank_of(zkey, ev.member, code))
        else
          table.insert(res, pid)
          table.insert(res, 0)
          table.insert(res, 0)
        end
      end
    end
  else
    -- Compute every view's new code first; write only if all are in range.
    -- The plan lives in arrays reused across events: this loop is the hot
    -- path, and every table it does not allocate is time Redis is not blocked.
    local member, value, et = ev.member, ev.value, ev.t
    for v = 1, nviews do
      local view = views[v]
      local per = ev.per[v]
      local unit = math.floor(et / view.unit) - per.base
      local old = call('ZSCORE', per.zkey, member)
      local nv, nt, change
      if old then
        local q, r = split(num(old), view.span)
        local ov = value_of(q)
        nv, nt, change = ov, r, false
        if policy == 'increment' then
          if value ~= 0 then
            nv, change = ov + value, true
            if unit > r then nt = unit end
          end
        elseif policy == 'best' then
          if better(value, ov) or (value == ov and unit < r and ties ~= 'shared') then
            nv, nt, change = value, unit, true
          end
        else -- latest: the newest event by event time wins; equal times, the later write
          local ot
          if exact then
            ot = tonumber(call('HGET', per.xkey, member) or '0')
          else
            ot = (per.base + r) * view.unit
          end
          if et >= ot then
            nv, nt, change = value, unit, true
          end
        end
      else
        nv, nt, change = value, unit, true
      end
      if nv < vmin or nv > vmax then
        res = {0, 'invalid_argument', 'the score in view ' .. view.name .. ' would be ' .. fmt(nv) ..
          ', outside [' .. fmt(vmin) .. ', ' .. fmt(vmax) .. '] (scaled)', et}
        break
      end
      if view.span == 1 then nt = 0 end
      plan_code[v] = rank_value(nv) * view.span + nt
      plan_value[v] = nv
      plan_change[v] = change
    end
    if not res then
      res = {1, 0, et}
      local n = 3
      for v = 1, nviews do
        local per = ev.per[v]
        local code = plan_code[v]
        if plan_change[v] then
          call('ZADD', per.zkey, fmt(code), member)
          if exact then
            call('HSET', per.xkey, member, fmt(et))
          end
          if not touched[per] then
            touched[per] = true
            touched_list[#touched_list + 1] = per
          end
        end
        res[n + 1] = per.id
        res[n + 2] = plan_value[v]
        res[n + 3] = rank_of(per.zkey, member, code)
        n = n + 3
      end
      if ev.name ~= '' then
        call('HSET', names_key, member, ev.name)
      end
      if ev.id ~= '' then
        local rec = {}
        for v = 1, nviews do
          rec[v] = views[v].name .. '\t' .. ev.per[v].id
        end
        local fp = member .. '\n' .. fmt(value) .. '\n' .. ev.at
        call('SET', idkey, fp .. '\0' .. table.concat(rec, '\n'), 'PX', dedupe)
      end
    end
  end
  results[#results + 1] = res
end

-- Once per batch: expiry and the registry of live period keys (for member
-- removal), then one change message naming every changed view period.
if #touched_list > 0 then
  local reg = prefix .. 'k'
  local changed = {}
  for _, per in ipairs(touched_list) do
    if per.exp > 0 then
      redis.call('PEXPIREAT', per.zkey, fmt(per.exp))
      if exact then redis.call('PEXPIREAT', per.xkey, fmt(per.exp)) end
      redis.call('ZADD', reg, fmt(per.exp), per.suffix)
    else
      redis.call('ZADD', reg, 'inf', per.suffix)
    end
    table.insert(changed, per.suffix)
  end
  redis.call('PUBLISH', channel, board .. '\n' .. table.concat(changed, '\n'))
end

return results
