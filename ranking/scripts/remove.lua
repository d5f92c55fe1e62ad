-- remove.lua: remove a member from every view and every retained period of
-- one board (cheater removal), forget its display name, and leave a
-- member.removed event in the board's outbox so every recorded result that
-- lists it is amended (results_amend.go), even if the caller dies now.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, redis_now.)
--
-- The registry k lists every live period key ("view:period") with its
-- expiry time. Its contents are not known before the call, so the caller
-- reads it first and declares every entry's keys; the script checks that
-- the registry holds nothing undeclared and otherwise changes nothing and
-- answers -1 (a write registered a period meanwhile: read and call again).
--
-- A member listed in a recorded result (its reverse index rm:<member> is
-- not empty) counts as present even when every period that held it has
-- expired: its results are still amended. On a sharded board this script
-- runs on the member's shard, which holds everything about the member but
-- its results index (on the board's own tag): the caller counts that
-- index first and passes the count.
--
-- A removal that is the first change of the board's all view on a local
-- day keeps the day's snapshot first (keep_snapshot), as apply.lua's
-- first write of a day does, so the all view's previous ranks stay the
-- ranks at midnight, the removed member counted (on every shard count:
-- a shard not written since midnight is its own snapshot).
--
-- Go       remove_proto.go: removeRequest, decodeRemove
-- KEYS     (all on the member's shard) 1 the registry k, 2 the names hash
--          n, 3 the outbox out, 4 the member's results index rm:<member>
--          (on a shard: unused), 5 the search index ni, 6 the final
--          periods' version fv (INCR when it exists and the member left
--          some period: rank cards' kept chart points of the old version
--          are no longer used), 7 the search index's block bounds nx,
--          8 its blocks nb, then per snapshot day snap:all:<day> (shape
--          "h") or snapz:all:<day> and snapn:all:<day> ("z"), then per
--          declared entry: z:<entry>, x:<entry>; on a league board then
--          lm:<member> and, per declared entry ~lg:<round> in order,
--          lg:<round>:m and lg:<round>:f
-- ARGV     member, channel, board id, the member id folded for search,
--          the results listing the member ("": count KEYS 4 here),
--          snap_top (0: the board has no all view, and the next four are
--          left out), ties, shape ("h" or "z"), ndays, per snapshot day
--          start_ms, end_ms (the day holding Redis's now is the one
--          kept), then the declared entries, in KEYS order
-- Returns  {removed, listed, now_ms}: the number of period keys the member
--          was removed from (-1 when the registry holds an undeclared
--          entry, -2 when the member must leave the all view and no
--          listed day holds Redis's now: nothing was changed either way),
--          how many recorded results list it, and Redis's now

local reg, names, out, rm, ni, fv = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local member, channel, board, member_fold = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = redis_now()
-- The snapshot of the day holding now, when the board has an all view.
local snap_top, shape, ties = tonumber(ARGV[6]), nil, nil
local skey, nkey, sexp = nil, nil, 0
local a, ki = 7, 9
if snap_top > 0 then
  ties, shape = ARGV[7], ARGV[8]
  a = 10
  for _ = 1, tonumber(ARGV[9]) do
    local s0, e0 = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
    local k, kn = KEYS[ki], nil
    ki = ki + 1
    if shape == 'z' then
      kn = KEYS[ki]
      ki = ki + 1
    end
    if now >= s0 and now < e0 then skey, nkey, sexp = k, kn, e0 end
    a = a + 2
  end
end
local first = a -- the first declared entry's ARGV index
local declared = {}
for k = first, #ARGV do
  declared[ARGV[k]] = 2 * (k - first) + ki -- index of its z key
end
redis.call('ZREMRANGEBYSCORE', reg, '-inf', '(' .. fmt(now))
local entries = redis.call('ZRANGE', reg, 0, -1)
for _, entry in ipairs(entries) do
  if not declared[entry] then
    return {-1, 0, now}
  end
end
local all = declared['all:all']
if snap_top > 0 and all and redis.call('ZSCORE', KEYS[all], member) then
  -- No listed day holds Redis's now: the caller's clock estimate was off.
  if not skey then return {-2, 0, now} end
  keep_snapshot(KEYS[all], shape, snap_top, ties, skey, nkey, sexp + 86400000)
end
local removed = 0
local changed = {}
for _, entry in ipairs(entries) do
  local zi = declared[entry]
  if redis.call('ZREM', KEYS[zi], member) == 1 then
    removed = removed + 1
    if string.sub(entry, 1, 1) ~= '~' then
      changed[#changed + 1] = entry
    end
  end
  redis.call('HDEL', KEYS[zi + 1], member)
end
-- League: the member's record goes, and its seat in each round: left out
-- of every cohort not decided yet, and of the counts.
local lk = ki + 2 * (#ARGV - first + 1)
if KEYS[lk] then
  redis.call('DEL', KEYS[lk])
  local j = lk + 1
  for k = first, #ARGV do
    if string.sub(ARGV[k], 1, 4) == '~lg:' then
      local mk, fk = KEYS[j], KEYS[j + 1]
      j = j + 2
      local seat = redis.call('ZSCORE', mk, member)
      if seat then
        local idx = num(seat)
        local level = math.floor(idx / 4294967296)
        redis.call('ZREM', mk, member)
        redis.call('HINCRBY', fk, 'n:' .. level .. ':' .. fmt(idx - level * 4294967296), -1)
        redis.call('HDEL', fk, 'o:' .. member)
      end
    end
  end
end
if removed > 0 and redis.call('EXISTS', fv) == 1 then redis.call('INCR', fv) end
-- The search entries: the name's is in ni or the blocks, the id's may be
-- in both (a write puts it in ni again when the member enters a period).
local name_fold = redis.call('HGET', names, member .. '\0k')
if name_fold and redis.call('ZREM', ni, name_fold .. '\0' .. member) == 0 then
  idx_del(KEYS[7], KEYS[8], name_fold .. '\0' .. member)
end
redis.call('ZREM', ni, member_fold .. '\0' .. member)
idx_del(KEYS[7], KEYS[8], member_fold .. '\0' .. member)
redis.call('HDEL', names, member, member .. '\0k')
local listed = tonumber(ARGV[5])
if ARGV[5] == '' then listed = redis.call('ZCARD', rm) end
if removed > 0 or listed > 0 then
  redis.call('XADD', out, 'MAXLEN', '~', '10000', '*',
    'type', 'member.removed', 'member', member, 'at', fmt(now))
end
publish(channel, board, changed)
return {removed, listed, now}
