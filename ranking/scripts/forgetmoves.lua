-- forgetmoves.lua: forget a removed member in the overtakes of every view
-- of its board made up to its removal, as the one who moved up and as the
-- one passed, so that no overtake shown names it again (one made after,
-- by the member back on the board, stays). On a sharded board it also
-- leaves the member out of a top last compared before the removal: a
-- comparison read before it then no longer matches, and shardmoves.lua
-- keeps none of its overtakes. Idempotent; removal runs it
-- (results_amend.go: amendRemoved, again from the outbox until it
-- succeeds).
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, redis_now.)
--
-- Go       moves.go: forgetMovesRequest
-- KEYS     per view: mv:<view> (overtakes), mt:<view> (the top last
--          compared, on a sharded board)
-- ARGV     member, removed_ms (Redis's clock at the removal), channel,
--          board id, then per view its name, in KEYS order
-- Returns  how many overtakes were forgotten; a change message names each
--          view and period that lost one

local member, removed, channel, board = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local forgot = 0
local changed, seen = {}, {}
for v = 1, #ARGV - 4 do
  local mv, mt = KEYS[2 * v - 1], KEYS[2 * v]
  local moves = redis.call('LRANGE', mv, 0, -1)
  local kept = {}
  for _, line in ipairs(moves) do
    local period, mover, passed, at = string.match(line, '^([^\t]*)\t([^\t]*)\t([^\t]*)\t[^\t]*\t(%d+)$')
    if (mover == member or passed == member) and tonumber(at) <= removed then
      local c = ARGV[4 + v] .. ':' .. period
      if not seen[c] then
        seen[c] = true
        changed[#changed + 1] = c
      end
    else
      kept[#kept + 1] = line
    end
  end
  if #kept < #moves then
    forgot = forgot + #moves - #kept
    redis.call('DEL', mv)
    if #kept > 0 then redis.call('RPUSH', mv, unpack(kept)) end
  end
  -- The top last compared: "<period>\t<at_ms>", then "<rank>\t<member>"
  -- lines.
  local top = redis.call('GET', mt)
  local compared = top and tonumber(string.match(top, '^[^\t\n]*\t(%d+)'))
  if compared and compared <= removed then
    local lines, out = {}, {}
    for line in string.gmatch(top, '[^\n]+') do lines[#lines + 1] = line end
    for k, line in ipairs(lines) do
      if k == 1 or string.match(line, '^[^\t]*\t(.*)$') ~= member then out[#out + 1] = line end
    end
    if #out < #lines then redis.call('SET', mt, table.concat(out, '\n')) end
  end
end
publish(channel, board, changed)
return forgot
