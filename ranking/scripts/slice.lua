-- slice.lua: one shard's part of a read of a sharded board. Go merges the
-- shards' parts (shard_read.go); each op here is cheap (O(log n) per
-- entry), so a merged read costs each shard a few small calls.
--
-- (lib.lua is prepended: bytes_less, redis_now, append_entries.)
--
-- Go       shard_proto.go: newSliceOps, decodeShardEntries
-- KEYS     1 the shard's names hash n, then the sorted sets the ops name
-- ARGV     nops, then per op its kind and arguments (zi is a 1-based
--          index into KEYS):
--            "card", zi                      -> ZCARD
--            "exists", zi                    -> 1 if the key exists, else 0
--            "get", zi                       -> GET (a string key), or false
--            "range", zi, start, stop        -> {m1, code1, m2, code2, ...}
--                                               (ZRANGE start stop WITHSCORES;
--                                               start <= stop, both >= 0)
--            "rows", zi, start, stop, pzi    -> {m1, code1, name1, prev1, m2, ...}:
--                                               entries [start, stop] of zi with
--                                               their names and their codes in
--                                               KEYS[pzi] (pzi "0": none; a
--                                               missing name or code is false)
--            "before", zi, shared, k, code_1, member_1, .., code_k, member_k
--                                            -> {c_1 .. c_k}: how many entries
--                                               rank before each pivot: with
--                                               shared "1" those with a lower
--                                               code, else those with a lower
--                                               code or the same code and a
--                                               smaller member id (bytes)
--            "nearn", zi, code, member, k    -> {before, m1, code1, name1, ...}:
--                                               before as above (ties first),
--                                               then the up to k entries before
--                                               that position and k+1 from it,
--                                               with their names (or false)
--            "score", zi, k, member_1 .. member_k
--                                            -> {code_1 or false, ...}
--            "names", k, member_1 .. member_k
--                                            -> {name_1 or false, ...}
--            "now"                           -> Redis's now in ms (the clock of
--                                               the node holding KEYS[1])
--            "hget", zi, field               -> HGET of a hash key, or false
--            "mine", zi, member, shared, k   -> {false, total} when member has no
--                                               code in zi, else {code, total,
--                                               before, m1, code1, name1, ...}:
--                                               the member's shard's part of its
--                                               standing, read with its code:
--                                               before as "before" counts it
--                                               (ties first: its position), and
--                                               with k >= 0 the up to k entries
--                                               before its position and k+1
--                                               from it, with their names
-- Returns  one reply per op, in order.

local out = {}
local i = 2
local nops = tonumber(ARGV[1])

-- before_first counts the entries before (code, member) in key z.
local function before_first(z, code, member)
  local a = redis.call('ZCOUNT', z, '-inf', '(' .. code)
  local g = redis.call('ZCOUNT', z, code, code)
  if g == 0 then return a end
  local lo, hi = a, a + g
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local x = redis.call('ZRANGE', z, mid, mid)[1]
    if bytes_less(x, member) then lo = mid + 1 else hi = mid end
  end
  return lo
end

-- near appends to r the up to k entries of z before position pos and the
-- k+1 from it, each (member, code, name), and returns r.
local function near(z, pos, k, r)
  local lo = pos - k
  if lo < 0 then lo = 0 end
  append_entries(r, redis.call('ZRANGE', z, lo, pos + k, 'WITHSCORES'), KEYS[1])
  return r
end

for _ = 1, nops do
  local kind = ARGV[i]
  if kind == 'card' then
    out[#out + 1] = redis.call('ZCARD', KEYS[tonumber(ARGV[i + 1])])
    i = i + 2
  elseif kind == 'exists' then
    out[#out + 1] = redis.call('EXISTS', KEYS[tonumber(ARGV[i + 1])])
    i = i + 2
  elseif kind == 'get' then
    out[#out + 1] = redis.call('GET', KEYS[tonumber(ARGV[i + 1])])
    i = i + 2
  elseif kind == 'range' then
    out[#out + 1] = redis.call('ZRANGE', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3], 'WITHSCORES')
    i = i + 4
  elseif kind == 'rows' then
    local flat = redis.call('ZRANGE', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3], 'WITHSCORES')
    local pz = tonumber(ARGV[i + 4])
    local r = {}
    if #flat > 0 then
      local members = {}
      for k = 1, #flat, 2 do members[#members + 1] = flat[k] end
      local names = redis.call('HMGET', KEYS[1], unpack(members))
      local prevs = {}
      if pz > 0 then prevs = redis.call('ZMSCORE', KEYS[pz], unpack(members)) end
      for k = 1, #members do
        r[#r + 1] = members[k]
        r[#r + 1] = flat[2 * k]
        r[#r + 1] = names[k]
        r[#r + 1] = prevs[k] or false
      end
    end
    out[#out + 1] = r
    i = i + 5
  elseif kind == 'before' then
    local z, shared, k = KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2] == '1', tonumber(ARGV[i + 3])
    local counts = {}
    for j = 1, k do
      local code, member = ARGV[i + 2 + 2 * j], ARGV[i + 3 + 2 * j]
      if shared then
        counts[j] = redis.call('ZCOUNT', z, '-inf', '(' .. code)
      else
        counts[j] = before_first(z, code, member)
      end
    end
    out[#out + 1] = counts
    i = i + 4 + 2 * k
  elseif kind == 'nearn' then
    local z, code, member, k = KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3], tonumber(ARGV[i + 4])
    local b = before_first(z, code, member)
    out[#out + 1] = near(z, b, k, {b})
    i = i + 5
  elseif kind == 'score' then
    local z, k = KEYS[tonumber(ARGV[i + 1])], tonumber(ARGV[i + 2])
    local codes = {}
    for j = 1, k do codes[j] = redis.call('ZSCORE', z, ARGV[i + 2 + j]) or false end
    out[#out + 1] = codes
    i = i + 3 + k
  elseif kind == 'names' then
    local k = tonumber(ARGV[i + 1])
    if k == 0 then
      out[#out + 1] = {}
    else
      out[#out + 1] = redis.call('HMGET', KEYS[1], unpack(ARGV, i + 2, i + 1 + k))
    end
    i = i + 2 + k
  elseif kind == 'now' then
    out[#out + 1] = redis_now()
    i = i + 1
  elseif kind == 'hget' then
    out[#out + 1] = redis.call('HGET', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2])
    i = i + 3
  elseif kind == 'mine' then
    local z, member, shared, k = KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3] == '1', tonumber(ARGV[i + 4])
    local code = redis.call('ZSCORE', z, member)
    if not code then
      out[#out + 1] = {false, redis.call('ZCARD', z)}
    else
      local pos = redis.call('ZRANK', z, member)
      local b = pos
      if shared and k < 0 then b = redis.call('ZCOUNT', z, '-inf', '(' .. code) end
      local r = {code, redis.call('ZCARD', z), b}
      if k >= 0 then near(z, pos, k, r) end
      out[#out + 1] = r
    end
    i = i + 5
  else
    return redis.error_reply('slice.lua: unknown op ' .. tostring(kind))
  end
end
return out
