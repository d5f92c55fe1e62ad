-- read.lua: read one period of one view: a page of entries, or one member
-- with its neighbours. The period is chosen by Redis's clock among the
-- candidates, so "the current period" means Redis's, not the app server's.
--
-- (lib.lua is prepended: fmt, num, split, bytes_less, fmt_score, publish,
-- append_entries, redis_now.)
--
-- Go       read_proto.go: readRequest, prevRequest, decodeRead
-- KEYS     1 the names hash n, then per candidate: z:<view>:<period>, and
--          r:<view>:<period> when the view is a rolling window; then the
--          previous ranks' keys (below)
-- ARGV     view, ties ("first"|"shared"), window ("1": the view is a rolling
--          window, its candidates have r keys), check ("1": a window must be
--          built), ncandidates,
--          per candidate: period id, start_ms, end_ms (the first containing
--          Redis's now is read; an explicit period is one candidate covering
--          all time), then
--          prevkind: how entries get their previous rank: "" none,
--            "z" per candidate the previous period's expiry ms (0 never; an
--              expired one gives none) and zset (one KEY each),
--            "w" the same, per candidate also the previous window's r key
--              (an unbuilt previous window gives none),
--            "s" (all: the rank at the last local midnight) snap_top, ndays,
--              per day start_ms, end_ms (one KEY each: the day's snapshot
--              hash, taken by apply.lua before the day's first write; none
--              yet means nothing changed since midnight), then
--          "page", offset, limit ("rows": the same without previous ranks)
--          | "member", member, around
--          | "members", k, member_1 .. member_k
-- Returns  {now_ms, 0} when no candidate contains now (the caller retries
--          with candidates around now_ms),
--          {now_ms, -2, chosen} when the chosen window is not built (the
--          caller runs ensure.lua, or reads with check "0"), else
--          page:   {now_ms, chosen, total, first_rank, prevs, m1, code1, name1, m2, ...}
--          member: {now_ms, chosen, total, rank (0 = absent), code, name,
--                   first_rank, m1, code1, name1, ...} where the entries are
--                   the member's neighbours and the member, in rank order.
--          members: {now_ms, chosen, total, prevs, rank1, m1, code1, name1, ...}:
--                   the ranked ones among the members, in rank order, each
--                   with its rank on the whole period.
--          prevs: one previous rank per entry (empty when prevkind gives
--          none): the rank, 0 new (no score then), -1 unknown (below a
--          snapshot's top), -2 the same as now.

local ties = ARGV[2]
local window = ARGV[3] == '1'
local check = ARGV[4] == '1'
local n = tonumber(ARGV[5])
local per_cand = 1
if window then per_cand = 2 end

local now = redis_now()

local chosen = 0
for c = 1, n do
  local base = 5 + (c - 1) * 3
  if now >= tonumber(ARGV[base + 2]) and now < tonumber(ARGV[base + 3]) then
    chosen = c
    break
  end
end
if chosen == 0 then
  return {now, 0}
end

local zkey = KEYS[2 + (chosen - 1) * per_cand]
if check and redis.call('EXISTS', KEYS[3 + (chosen - 1) * per_cand]) == 0 then
  return {now, -2, chosen}
end

local nkey = KEYS[1]
local i = 6 + n * 3
local kn = 2 + n * per_cand -- the next KEY after the candidates'

-- prevs_of returns the previous rank of each of members, or nil.
local prevs_of = nil
local prevkind = ARGV[i]
i = i + 1
if prevkind == 'z' or prevkind == 'w' then
  local stride = 1
  if prevkind == 'w' then stride = 2 end
  local pkey = KEYS[kn + (chosen - 1) * stride]
  local exp = tonumber(ARGV[i + chosen - 1])
  i = i + n
  local live = exp == 0 or now < exp
  if live and prevkind == 'w' then
    live = redis.call('EXISTS', KEYS[kn + (chosen - 1) * stride + 1]) == 1
  end
  kn = kn + n * stride
  if live then
    prevs_of = function(members)
      local out = {}
      -- A previous period nobody wrote to (a board's first period, a
      -- quiet hour) makes every entry new: one EXISTS, not a lookup each.
      local empty = #members > 0 and redis.call('EXISTS', pkey) == 0
      for j, m in ipairs(members) do
        if empty then
          out[j] = 0
        elseif ties == 'shared' then
          local c = redis.call('ZSCORE', pkey, m)
          out[j] = c and redis.call('ZCOUNT', pkey, '-inf', '(' .. c) + 1 or 0
        else
          local r = redis.call('ZRANK', pkey, m)
          out[j] = r and r + 1 or 0
        end
      end
      return out
    end
  end
elseif prevkind == 's' then
  local top, nd = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  i = i + 2
  local skey = nil
  for d = 1, nd do
    if now >= tonumber(ARGV[i]) and now < tonumber(ARGV[i + 1]) then skey = KEYS[kn + d - 1] end
    i = i + 2
  end
  kn = kn + nd
  if skey then
    prevs_of = function(members)
      local out = {}
      if #members == 0 then return out end
      if redis.call('EXISTS', skey) == 0 then
        for j = 1, #members do out[j] = -2 end
        return out
      end
      local got = redis.call('HMGET', skey, '\0', unpack(members))
      local full = tonumber(got[1] or '0') > top
      for j = 1, #members do
        local r = got[j + 1]
        if r then out[j] = tonumber(r) elseif full then out[j] = -1 else out[j] = 0 end
      end
      return out
    end
  end
end
local function prevs_for(members)
  if prevs_of then return prevs_of(members) end
  return {}
end

local mode = ARGV[i]
local total = redis.call('ZCARD', zkey)

-- first_rank: the rank of the entry at 0-based position pos with code c.
local function first_rank(pos, code)
  if ties == 'shared' then
    return redis.call('ZCOUNT', zkey, '-inf', '(' .. code) + 1
  end
  return pos + 1
end

if mode == 'page' or mode == 'rows' then
  local offset = tonumber(ARGV[i + 1])
  local limit = tonumber(ARGV[i + 2])
  local flat = redis.call('ZRANGE', zkey, offset, offset + limit - 1, 'WITHSCORES')
  local fr = 0
  if #flat > 0 then fr = first_rank(offset, flat[2]) end
  local members = {}
  for k = 1, #flat, 2 do members[#members + 1] = flat[k] end
  local out = {now, chosen, total, fr, prevs_for(members)}
  append_entries(out, flat, nkey)
  return out
end

if mode == 'members' then
  -- A member list ("friends"): each listed member's code, then rank order
  -- (code, then member id by bytes, as the sorted set orders them).
  local k = tonumber(ARGV[i + 1])
  local found = {}
  for j = 1, k do
    local m = ARGV[i + 1 + j]
    local code = redis.call('ZSCORE', zkey, m)
    if code then found[#found + 1] = {m, code, num(code)} end
  end
  table.sort(found, function(a, b)
    if a[3] ~= b[3] then return a[3] < b[3] end
    return bytes_less(a[1], b[1])
  end)
  local members = {}
  for j, f in ipairs(found) do members[j] = f[1] end
  local out = {now, chosen, total, prevs_for(members)}
  for _, f in ipairs(found) do
    local rank
    if ties == 'shared' then
      rank = redis.call('ZCOUNT', zkey, '-inf', '(' .. f[2]) + 1
    else
      rank = redis.call('ZRANK', zkey, f[1]) + 1
    end
    out[#out + 1] = rank
    out[#out + 1] = f[1]
    out[#out + 1] = f[2]
    out[#out + 1] = redis.call('HGET', nkey, f[1])
  end
  return out
end

local member = ARGV[i + 1]
local around = tonumber(ARGV[i + 2])
local r = redis.call('ZRANK', zkey, member)
if not r then
  return {now, chosen, total, 0, false, false, 0}
end
local code = redis.call('ZSCORE', zkey, member)
local name = redis.call('HGET', nkey, member)
local lo = r - around
if lo < 0 then lo = 0 end
local flat = redis.call('ZRANGE', zkey, lo, r + around, 'WITHSCORES')
local out = {now, chosen, total, r + 1, code, name, first_rank(lo, flat[2])}
append_entries(out, flat, nkey)
return out
