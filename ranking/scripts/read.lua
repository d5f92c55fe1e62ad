-- read.lua: read one period of one view: a page of entries, or one member
-- with its neighbours. The period is chosen by Redis's clock among the
-- candidates, so "the current period" means Redis's, not the app server's.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, append_entries,
-- redis_now.)
--
-- KEYS     (built by readKeys in read_proto.go) 1 the names hash n, then
--          per candidate: z:<view>:<period>, and r:<view>:<period> when the
--          view is a rolling window
-- ARGV     view, ties ("first"|"shared"), window ("1": the view is a rolling
--          window, its candidates have r keys), check ("1": a window must be
--          built), ncandidates,
--          per candidate: period id, start_ms, end_ms (the first containing
--          Redis's now is read; an explicit period is one candidate covering
--          all time), then
--          "page", offset, limit
--          | "member", member, around
--          | "members", k, member_1 .. member_k
-- Returns  {now_ms, 0} when no candidate contains now (the caller retries
--          with candidates around now_ms),
--          {now_ms, -2, chosen} when the chosen window is not built (the
--          caller runs ensure.lua, or reads with check "0"), else
--          page:   {now_ms, chosen, total, first_rank, m1, code1, name1, m2, ...}
--          member: {now_ms, chosen, total, rank (0 = absent), code, name,
--                   first_rank, m1, code1, name1, ...} where the entries are
--                   the member's neighbours and the member, in rank order.
--          members: {now_ms, chosen, total, rank1, m1, code1, name1, ...}:
--                   the ranked ones among the members, in rank order, each
--                   with its rank on the whole period.

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
local mode = ARGV[i]
local total = redis.call('ZCARD', zkey)

-- first_rank: the rank of the entry at 0-based position pos with code c.
local function first_rank(pos, code)
  if ties == 'shared' then
    return redis.call('ZCOUNT', zkey, '-inf', '(' .. code) + 1
  end
  return pos + 1
end

if mode == 'page' then
  local offset = tonumber(ARGV[i + 1])
  local limit = tonumber(ARGV[i + 2])
  local flat = redis.call('ZRANGE', zkey, offset, offset + limit - 1, 'WITHSCORES')
  local fr = 0
  if #flat > 0 then fr = first_rank(offset, flat[2]) end
  local out = {now, chosen, total, fr}
  append_entries(out, flat, nkey)
  return out
end

if mode == 'members' then
  -- A member list ("friends"): each listed member's code, then rank order
  -- (code, then member, as the sorted set orders them).
  local k = tonumber(ARGV[i + 1])
  local found = {}
  for j = 1, k do
    local m = ARGV[i + 1 + j]
    local code = redis.call('ZSCORE', zkey, m)
    if code then found[#found + 1] = {m, code, tonumber(code)} end
  end
  table.sort(found, function(a, b)
    if a[3] ~= b[3] then return a[3] < b[3] end
    return a[1] < b[1]
  end)
  local out = {now, chosen, total}
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
