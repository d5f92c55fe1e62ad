-- ensure.lua: build one rolling window if it is not built yet (idempotent;
-- several app instances may race to run it, the first one wins).
--
-- It carries yesterday's window over when that one is built:
--   window(e) = window(e-1) - day(e-N) + day(e)
-- re-encoding each member's latest change time to the new window's base and
-- dropping members whose every event fell on the day that left. Otherwise it
-- rebuilds the window from the N day totals it covers.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, redis_now.)
--
-- Go       ensure_proto.go: ensureRequest
-- KEYS     1 z:<view>:<target>, 2 r:<view>:<target>, 3 z:<view>:<previous>,
--          4 r:<view>:<previous>, 5 the registry k, then z:~d:<day> for the
--          N+1 days e-N .. e, oldest first
-- ARGV     view, days N, unit_ms, span, order, lo, hi (the window codes'
--          value range, ±N·S), channel, board,
--          target id, target base (window units), target start_ms,
--          target expire_at_ms,
--          previous window id, previous window base,
--          day unit_ms, day span, day lo, day hi (±S),
--          then N+1 days, oldest first: id, base (day units) for days
--          e-N .. e (the first is the day that leaves on carry-over)
-- Returns  the number of members in the window, or -1 if it was built already.

local call = redis.call
local view, n, unit, span = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local order, vmin, vmax = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
local channel, board = ARGV[8], ARGV[9]
local tid, tbase, tstart, texp = ARGV[10], tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local pid, pbase = ARGV[14], tonumber(ARGV[15])
local dunit, dspan = tonumber(ARGV[16]), tonumber(ARGV[17])
local dlo, dhi = tonumber(ARGV[18]), tonumber(ARGV[19])
local days = {}
for k = 0, n do
  days[k] = {id = ARGV[20 + 2 * k], base = tonumber(ARGV[21 + 2 * k]), zkey = KEYS[6 + k]}
end
local ratio = unit / dunit -- window units are whole multiples of day units

-- Window codes count from the best end of [vmin, vmax] = ±N·S, day-total
-- codes from the best end of [dlo, dhi] = ±S: every sum reads back exactly.
local function value_of(rv, lo, hi)
  if order == 'desc' then return (hi or vmax) - rv end
  return (lo or vmin) + rv
end
local function rank_value(v)
  if order == 'desc' then return vmax - v end
  return v - vmin
end

local tkey, rkey, pkey, prkey, reg = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
if call('EXISTS', rkey) == 1 then
  return -1
end

-- each day's totals: member -> value, latest change (window units)
local function day_entries(day, fn)
  local flat = call('ZRANGE', day.zkey, 0, -1, 'WITHSCORES')
  for k = 1, #flat, 2 do
    local q, r = split(num(flat[k + 1]), dspan)
    fn(flat[k], value_of(q, dlo, dhi), math.floor((day.base + r) / ratio))
  end
end

local acc, order_list = {}, {}
local function add(m, v, tt)
  local a = acc[m]
  if a then
    a[1] = a[1] + v
    if tt > a[2] then a[2] = tt end
  else
    acc[m] = {v, tt}
    order_list[#order_list + 1] = m
  end
end

if call('EXISTS', prkey) == 1 then
  local flat = call('ZRANGE', pkey, 0, -1, 'WITHSCORES')
  for k = 1, #flat, 2 do
    local q, r = split(num(flat[k + 1]), span)
    add(flat[k], value_of(q), pbase + r)
  end
  local left = {}
  day_entries(days[0], function(m, v, tt)
    if acc[m] then acc[m][1] = acc[m][1] - v end
    left[m] = true
  end)
  day_entries(days[n], add)
  -- A member whose latest change is before the window had every event on
  -- the day that left. The unit holding the window's start may straddle the
  -- day boundary: there the first remaining day's totals decide. Without a
  -- time part (ties: shared) the remaining days' totals decide.
  local first = days[1].zkey
  local function in_remaining_days(m)
    for k = n, 1, -1 do
      if call('ZSCORE', days[k].zkey, m) then return true end
    end
    return false
  end
  for _, m in ipairs(order_list) do
    local a = acc[m]
    if span == 1 then
      if left[m] and not in_remaining_days(m) then acc[m] = nil end
    elseif a[2] < tbase or (a[2] == tbase and left[m] and not call('ZSCORE', first, m)) then
      acc[m] = nil
    end
  end
else
  for k = 1, n do
    day_entries(days[k], add)
  end
end

call('DEL', tkey)
local batch, count = {}, 0
for _, m in ipairs(order_list) do
  local a = acc[m]
  if a then
    local rel = a[2] - tbase
    if rel < 0 or span == 1 then rel = 0 end
    batch[#batch + 1] = fmt(rank_value(a[1]) * span + rel)
    batch[#batch + 1] = m
    count = count + 1
    if #batch >= 1000 then
      call('ZADD', tkey, unpack(batch))
      batch = {}
    end
  end
end
if #batch > 0 then
  call('ZADD', tkey, unpack(batch))
end
call('SET', rkey, '1', 'PXAT', fmt(texp))
if count > 0 then
  call('PEXPIREAT', tkey, fmt(texp))
end
-- The registry names the window so removal finds it; expired entries go.
call('ZREMRANGEBYSCORE', reg, '-inf', '(' .. fmt(redis_now()))
call('ZADD', reg, fmt(texp), view .. ':' .. tid)
publish(channel, board, {view .. ':' .. tid})
return count
