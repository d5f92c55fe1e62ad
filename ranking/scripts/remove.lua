-- remove.lua: remove a member from every view and every retained period of
-- one board (cheater removal), and forget its display name.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, redis_now.)
--
-- The registry k lists every live period key ("view:period") with its
-- expiry time. Its contents are not known before the call, so the caller
-- reads it first and declares every entry's keys; the script checks that
-- the registry holds nothing undeclared and otherwise changes nothing and
-- answers -1 (a write registered a period meanwhile: read and call again).
--
-- KEYS     (built by removeKeys in remove_proto.go) 1 the registry k, 2 the
--          names hash n, then per declared entry: z:<entry>, x:<entry>
-- ARGV     member, channel, board id, then the declared entries, in KEYS
--          order
-- Returns  the number of period keys the member was removed from, or -1
--          when the registry holds an undeclared entry.

local reg, names = KEYS[1], KEYS[2]
local member, channel, board = ARGV[1], ARGV[2], ARGV[3]
local declared = {}
for k = 4, #ARGV do
  declared[ARGV[k]] = 2 * (k - 4) + 3 -- index of its z key
end
redis.call('ZREMRANGEBYSCORE', reg, '-inf', '(' .. fmt(redis_now()))
local entries = redis.call('ZRANGE', reg, 0, -1)
for _, entry in ipairs(entries) do
  if not declared[entry] then
    return -1
  end
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
redis.call('HDEL', names, member)
publish(channel, board, changed)
return removed
