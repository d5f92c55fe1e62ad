-- remove.lua: remove a member from every view and every retained period of
-- one board (cheater removal), and forget its display name.
--
-- KEYS[1]  the board's key prefix, e.g. "standings:{points}:"
-- ARGV     member, channel, board id
-- Returns  the number of period keys the member was removed from.
-- The registry (prefix.."k") lists every period key ever written with its
-- expiry time; entries past their expiry are pruned first.

local prefix = KEYS[1]
local member, channel, board = ARGV[1], ARGV[2], ARGV[3]
local reg = prefix .. 'k'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', reg, '-inf', '(' .. string.format('%.0f', now))
local removed = 0
local changed = {}
for _, suffix in ipairs(redis.call('ZRANGE', reg, 0, -1)) do
  if redis.call('ZREM', prefix .. 'z:' .. suffix, member) == 1 then
    removed = removed + 1
    table.insert(changed, suffix)
  end
  redis.call('HDEL', prefix .. 'x:' .. suffix, member)
end
redis.call('HDEL', prefix .. 'n', member)
if removed > 0 then
  redis.call('PUBLISH', channel, board .. '\n' .. table.concat(changed, '\n'))
end
return removed
