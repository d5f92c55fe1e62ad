-- shardmoves.lua: keep the overtakes a sharded board's view made since the
-- top last compared, exactly once: a compare-and-set of that top.
--
-- Go       shard_moves.go: shardMovesRequest
-- KEYS     1 mt:<view> (the top last compared), 2 mv:<view> (overtakes)
-- ARGV     1 the top as the caller read it ("" when none was kept), 2 the
--          top now, 3 moves_top, then the overtakes found
--          (period\tmember\tpassed\trank\tat_ms), the one to show first
--          last
-- Returns  1 when the top now is kept and the overtakes with it; 0 when
--          the kept top is not the one read (another instance compared
--          first): nothing changes

local mt, mv = KEYS[1], KEYS[2]
local kept = redis.call('GET', mt) or ''
if kept ~= ARGV[1] then return 0 end
redis.call('SET', mt, ARGV[2])
if #ARGV > 3 then
  redis.call('LPUSH', mv, unpack(ARGV, 4, #ARGV))
  redis.call('LTRIM', mv, 0, tonumber(ARGV[3]) - 1)
end
return 1
