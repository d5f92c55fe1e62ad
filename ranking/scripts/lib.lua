-- lib.lua: helpers prepended to every script (see scripts.go).
-- Codes are integers below 2^53; these keep them exact between Lua and Redis.

-- fmt renders a code or time without exponent or rounding.
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

-- split divides a code into its rank value and time part, correcting the
-- floating division by one where it rounded across a boundary.
local function split(code, span)
  local q = math.floor(code / span)
  local r = code - q * span
  if r < 0 then q = q - 1; r = r + span elseif r >= span then q = q + 1; r = r - span end
  return q, r
end


-- bytes_less orders two member ids by their bytes, as a sorted set orders
-- members of equal score. Lua's < on strings compares with strcoll, which
-- follows the server's LC_COLLATE ("alice" < "Zed" under en_US.UTF-8), so
-- no script compares member ids with it.
local function bytes_less(a, b)
  if a == b then return false end
  local n = #a
  if #b < n then n = #b end
  for k = 1, n do
    local x, y = string.byte(a, k), string.byte(b, k)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- fmt_score renders a scaled score as the decimal users wrote (the Go twin
-- is formatScaled): 125 with 1 decimal is "12.5".
local function fmt_score(n, decimals)
  local sign = ''
  if n < 0 then sign, n = '-', -n end
  local digits = fmt(n)
  if decimals == 0 then return sign .. digits end
  digits = string.rep('0', decimals + 1 - #digits) .. digits
  local int, frac = string.sub(digits, 1, #digits - decimals), string.sub(digits, #digits - decimals + 1)
  frac = string.gsub(frac, '0+$', '')
  if frac == '' then return sign .. int end
  return sign .. int .. '.' .. frac
end

-- publish sends the change message of a script call: the board id, then
-- one "view:period" line per changed period, where a segment board's view
-- is "view@name=value". Consumers (the live hub, through ParseChange)
-- parse exactly this shape; nothing else writes to the channel.
local function publish(channel, board, changed)
  if #changed == 0 then return end
  redis.call('PUBLISH', channel, board .. '\n' .. table.concat(changed, '\n'))
end

-- append_entries appends to out the (member, code, name) triples of a
-- ZRANGE ... WITHSCORES reply, the names read from the names hash nkey in
-- one HMGET.
local function append_entries(out, flat, nkey)
  if #flat == 0 then return end
  local members = {}
  for k = 1, #flat, 2 do members[#members + 1] = flat[k] end
  local names = redis.call('HMGET', nkey, unpack(members))
  for k = 1, #members do
    out[#out + 1] = members[k]
    out[#out + 1] = flat[2 * k]
    out[#out + 1] = names[k]
  end
end

-- redis_now is Redis's clock in ms: it, not the app server's, decides
-- every period.
local function redis_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- keep_snapshot keeps the best top entries of the all view zkey as a local
-- day's snapshot, unless the day has one: whatever changes the all view
-- first in a day (apply.lua's first write, remove.lua's removal) calls it
-- before the change, so it holds the ranks at midnight. Shape "h": the
-- hash skey of member -> rank (ties "shared": equal codes share a rank),
-- its field "\0" how many were ranked (a member missing from a full
-- snapshot was ranked below it, not absent). Shape "z", on a shard of a
-- sharded board: the shard's codes in the sorted set skey, which merge
-- across shards (shard_read.go), and how many it ranked in the string
-- nkey. Both expire at exp_ms.
local function keep_snapshot(zkey, shape, top, ties, skey, nkey, exp_ms)
  local exp = fmt(exp_ms)
  if shape == 'z' then
    if redis.call('EXISTS', nkey) == 1 then return end
    local flat = redis.call('ZRANGE', zkey, 0, top - 1, 'WITHSCORES')
    local z = {}
    for k = 1, #flat, 2 do
      z[#z + 1] = flat[k + 1]
      z[#z + 1] = flat[k]
    end
    if #z > 0 then
      redis.call('ZADD', skey, unpack(z))
      redis.call('PEXPIREAT', skey, exp)
    end
    redis.call('SET', nkey, redis.call('ZCARD', zkey), 'PXAT', exp)
    return
  end
  if redis.call('EXISTS', skey) == 1 then return end
  local flat = redis.call('ZRANGE', zkey, 0, top - 1, 'WITHSCORES')
  local h = {'\0', redis.call('ZCARD', zkey)}
  local rank, last = 0, nil
  for k = 1, #flat, 2 do
    if ties ~= 'shared' or flat[k + 1] ~= last then rank = (k + 1) / 2 end
    last = flat[k + 1]
    h[#h + 1] = flat[k]
    h[#h + 1] = rank
  end
  redis.call('HSET', skey, unpack(h))
  redis.call('PEXPIREAT', skey, exp)
end

-- amend_guard checks a stored result before an amendment replaces it:
-- "gone" (and the listing forgotten from listing_key) when none is stored,
-- "moved" when it is not the one read (sha, its SHA-1 in hex), "stale"
-- when Redis's now is before amended_ms or more than 5 s past it; else
-- nil and Redis's now.
local function amend_guard(rs, listing_key, listing, sha, amended_ms)
  local stored = redis.call('GET', rs)
  if not stored then
    redis.call('ZREM', listing_key, listing)
    return 'gone'
  end
  if redis.sha1hex(stored) ~= sha then return 'moved' end
  local now = redis_now()
  if now < amended_ms or now - amended_ms > 5000 then return 'stale' end
  return nil, now
end

-- index_result lists a recorded result ("<view>\n<period>", scored by the
-- period's start) in a member's reverse index rm:<member> and makes the
-- key live at least until horizon_ms: the key is shared by the member's
-- results of every view, so its expiry only ever moves later.
local function index_result(rm, start_ms, listing, horizon_ms, now)
  redis.call('ZADD', rm, start_ms, listing)
  local ttl = redis.call('PTTL', rm)
  local horizon = tonumber(horizon_ms)
  if ttl < 0 or now + ttl < horizon then
    redis.call('PEXPIREAT', rm, fmt(horizon))
  end
end

-- same_top says whether the sorted set zkey still holds total members and
-- its first n entries are the (member, code) pairs ARGV[from + 1 ..
-- from + 2n] a caller read: a result built from that read still stands.
local function same_top(zkey, total, n, from)
  if redis.call('ZCARD', zkey) ~= total then return false end
  if n == 0 then return true end
  local flat = redis.call('ZRANGE', zkey, 0, n - 1, 'WITHSCORES')
  if #flat ~= 2 * n then return false end
  for k = 1, 2 * n do
    if flat[k] ~= ARGV[from + k] then return false end
  end
  return true
end

-- cohort_index is a league cohort's number in a round's placements
-- lg:<round>:m: tier level (1 = lowest) × 2^32 + cohort, exact in a double.
local function cohort_index(level, c) return level * 4294967296 + c end

-- cohort_rows lists the members of cohort idx (see cohort_index) of a
-- round still in its standings zkey, in rank order: codes ascending, equal
-- codes by member bytes, as a view orders them. {m = member, c = code}
-- each; one cohort is cohort_size members at most.
local function cohort_rows(zkey, mkey, idx)
  local at = fmt(idx)
  local members = redis.call('ZRANGEBYSCORE', mkey, at, at)
  local rows = {}
  if #members > 0 then
    local codes = redis.call('ZMSCORE', zkey, unpack(members))
    for k = 1, #members do
      if codes[k] then rows[#rows + 1] = {m = members[k], c = num(codes[k])} end
    end
  end
  table.sort(rows, function(a, b)
    if a.c ~= b.c then return a.c < b.c end
    return bytes_less(a.m, b.m)
  end)
  return rows
end

-- decide_cohort decides once the outcomes of cohort c of tier level of a
-- closed round, from its standings zkey (the round's codes) and placements
-- mkey, into the round's hash fkey: d:<level>:<c> marks it decided,
-- o:<member> is 1 (promoted), 0 (stayed) or -1 (demoted) for each member
-- still in it (a member removed before is left out), and the tier's
-- counts nm:, np:, nd:<level> (members, promoted, demoted) grow. Ranks as
-- cohort_rows, or shared ranks; zones as League.Zones. It answers how
-- many members it decided now (false: decided before, or no hash), so
-- callers can bound a call's work in members.
local function decide_cohort(zkey, mkey, fkey, level, c, ntiers, promote, demote, shared)
  local field = 'd:' .. level .. ':' .. c
  -- No hash: the round's keys expired (nothing left to decide from).
  if redis.call('EXISTS', fkey) == 0 or redis.call('HEXISTS', fkey, field) == 1 then return false end
  local rows = cohort_rows(zkey, mkey, cohort_index(level, c))
  local n = #rows
  local p, d = 0, 0
  if level < ntiers then p = math.min(promote, math.floor(n / 2)) end
  if level > 1 then d = math.min(demote, math.floor(n / 2)) end
  local out = {field, '1'}
  local rank = 0
  for k, r in ipairs(rows) do
    if not shared or k == 1 or r.c ~= rows[k - 1].c then rank = k end
    local o = 0
    if rank <= p then o = 1 elseif rank > n - d then o = -1 end
    out[#out + 1] = 'o:' .. r.m
    out[#out + 1] = o
  end
  redis.call('HSET', fkey, unpack(out))
  -- Per tier counts for the round's league.final (see leaguerecord.lua).
  local promoted, demoted = 0, 0
  for k = 4, #out, 2 do
    if out[k] == 1 then promoted = promoted + 1 elseif out[k] == -1 then demoted = demoted + 1 end
  end
  redis.call('HINCRBY', fkey, 'nm:' .. level, n)
  redis.call('HINCRBY', fkey, 'np:' .. level, promoted)
  redis.call('HINCRBY', fkey, 'nd:' .. level, demoted)
  return n
end

-- The search index's blocks: entries "<folded text>\0<member>" (a
-- member's id and its display name) packed with their neighbours, because
-- one skiplist entry per member costs several times the entry's own bytes.
-- apply.lua writes new entries to the sorted set ni, the buffer that
-- compact.lua moves into the blocks in bounded steps; search reads both.
-- The hash nb maps a block's lower bound to the block (the first block's
-- bound is "", every other's is listed in the sorted set nx, score 0); a
-- block holds the entries from its bound up to the next bound, unsorted,
-- each written "\n<entry>\n" with the newlines shared (ids and names hold
-- no control characters), so that one plain find in C tells whether an
-- entry is there. A block over idx_max bytes is sorted and cut; one under
-- a quarter of that (but the first) joins the block before it, so a
-- prefix's first matches lie in a few.
local idx_max = 2048

-- idx_bound is the bound of the block that holds entry or prefix e.
local function idx_bound(nx, e)
  local got = redis.call('ZREVRANGEBYLEX', nx, '[' .. e, '-', 'LIMIT', 0, 1)
  return got[1] or ''
end

-- idx_keys gives each of lines (at least one) two numbers holding its 6
-- bytes after the prefix all share and the 6 after those (a missing byte
-- below every byte): they order lines as their bytes do, but for ties,
-- and Lua compares numbers in C, whereas its < on strings follows the
-- locale and bytes_less is a loop of Lua.
local function idx_keys(lines)
  local first = lines[1]
  local c, pre = #first, first
  for k = 2, #lines do
    local l = lines[k]
    while c > 0 and string.sub(l, 1, c) ~= pre do
      c = c - 1
      pre = string.sub(first, 1, c)
    end
  end
  local k1, k2 = {}, {}
  for k = 1, #lines do
    local a1, a2, a3, a4, a5, a6, b1, b2, b3, b4, b5, b6 = string.byte(lines[k], c + 1, c + 12)
    k1[k] = ((((((a1 or -1) + 1) * 257 + (a2 or -1) + 1) * 257 + (a3 or -1) + 1) * 257
      + (a4 or -1) + 1) * 257 + (a5 or -1) + 1) * 257 + (a6 or -1) + 1
    k2[k] = ((((((b1 or -1) + 1) * 257 + (b2 or -1) + 1) * 257 + (b3 or -1) + 1) * 257
      + (b4 or -1) + 1) * 257 + (b5 or -1) + 1) * 257 + (b6 or -1) + 1
  end
  return k1, k2
end

-- idx_sort puts entries in byte order, by their keys and bytes_less for
-- the ties.
local function idx_sort(lines)
  if #lines < 2 then return end
  local a1, a2 = idx_keys(lines)
  local k1, k2 = {}, {}
  for k, l in ipairs(lines) do k1[l], k2[l] = a1[k], a2[k] end
  table.sort(lines, function(a, b)
    local x, y = k1[a], k1[b]
    if x ~= y then return x < y end
    x, y = k2[a], k2[b]
    if x ~= y then return x < y end
    return bytes_less(a, b)
  end)
end

-- idx_put writes block bound as s; one over max bytes (idx_max when nil)
-- of more than one entry is sorted and cut into blocks of about max / 2
-- bytes, so that the next entries fit without a cut, each but the first
-- bounded by its least entry.
local function idx_put(nx, nb, bound, s, max)
  max = max or idx_max
  if #s <= max then
    redis.call('HSET', nb, bound, s)
    return
  end
  local lines = {}
  for l in string.gmatch(s, '[^\n]+') do lines[#lines + 1] = l end
  if #lines < 2 then
    redis.call('HSET', nb, bound, s)
    return
  end
  idx_sort(lines)
  local target = #s / math.max(2, math.floor(2 * #s / max))
  local blocks, bounds = {}, {}
  local piece, size, b = {}, 1, bound
  for k, l in ipairs(lines) do
    piece[#piece + 1] = l
    size = size + #l + 1
    if size >= target and k < #lines then
      blocks[#blocks + 1] = b
      blocks[#blocks + 1] = '\n' .. table.concat(piece, '\n') .. '\n'
      b = lines[k + 1]
      bounds[#bounds + 1] = 0
      bounds[#bounds + 1] = b
      piece, size = {}, 1
    end
  end
  blocks[#blocks + 1] = b
  blocks[#blocks + 1] = '\n' .. table.concat(piece, '\n') .. '\n'
  redis.call('HSET', nb, unpack(blocks))
  if #bounds > 0 then redis.call('ZADD', nx, unpack(bounds)) end
end

-- idx_merge puts entries (in byte order, as ZRANGE gives them) in the
-- blocks, once each: one read and one write per block they fall in. It
-- stops after blocks blocks (its work is per block: entries that fall in
-- blocks of their own cost one each) and returns how many of the first
-- entries it put.
local function idx_merge(nx, nb, entries, max, blocks)
  local i, n, touched = 1, #entries, 0
  while i <= n and touched < blocks do
    touched = touched + 1
    local bound = idx_bound(nx, entries[i])
    local next_bound = redis.call('ZRANGEBYLEX', nx, '(' .. entries[i], '+', 'LIMIT', 0, 1)[1]
    local s = redis.call('HGET', nb, bound) or '\n'
    local parts = {s}
    while i <= n and (not next_bound or bytes_less(entries[i], next_bound)) do
      local e = entries[i]
      if not string.find(s, '\n' .. e .. '\n', 1, true) then parts[#parts + 1] = e .. '\n' end
      i = i + 1
    end
    if #parts > 1 then idx_put(nx, nb, bound, table.concat(parts), max) end
  end
  return i - 1
end

-- idx_del takes entry e out of the blocks; a block left under a quarter
-- of idx_max bytes joins the one before it. It returns whether e was
-- there.
local function idx_del(nx, nb, e)
  local bound = idx_bound(nx, e)
  local s = redis.call('HGET', nb, bound)
  if not s then return false end
  local at = string.find(s, '\n' .. e .. '\n', 1, true)
  if not at then return false end
  s = string.sub(s, 1, at) .. string.sub(s, at + #e + 2)
  if bound == '' or #s >= idx_max / 4 then
    if #s > 1 then
      redis.call('HSET', nb, bound, s)
    else
      redis.call('HDEL', nb, bound)
    end
    return true
  end
  redis.call('HDEL', nb, bound)
  redis.call('ZREM', nx, bound)
  local prev = redis.call('ZREVRANGEBYLEX', nx, '(' .. bound, '-', 'LIMIT', 0, 1)[1] or ''
  local before = redis.call('HGET', nb, prev) or '\n'
  if #s > 1 then before = before .. string.sub(s, 2) end
  if #before > 1 then idx_put(nx, nb, prev, before) end
  return true
end

-- idx_find returns the first want entries of the blocks starting with
-- prefix, in byte order: it reads the block holding prefix and the ones
-- after it whose bound starts with prefix (each holds only matches, at
-- least one), until it has want: at most want + 1 blocks.
local function idx_find(nx, nb, prefix, want)
  local out = {}
  local pat = '\n' .. prefix
  local bound = idx_bound(nx, prefix)
  for _ = 1, want + 1 do
    local s = redis.call('HGET', nb, bound)
    if s then
      local at = string.find(s, pat, 1, true)
      while at do
        local stop = string.find(s, '\n', at + 1, true)
        out[#out + 1] = string.sub(s, at + 1, stop - 1)
        at = string.find(s, pat, stop, true)
      end
    end
    if #out >= want then break end
    local lo = '(' .. bound
    if bound == '' then lo = '-' end
    bound = redis.call('ZRANGEBYLEX', nx, lo, '+', 'LIMIT', 0, 1)[1]
    if not bound or string.sub(bound, 1, #prefix) ~= prefix then break end
  end
  idx_sort(out)
  for k = #out, want + 1, -1 do out[k] = nil end
  return out
end
