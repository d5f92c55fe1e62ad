-- relay.lua: copy one outbox event of a board to the shared results
-- stream, exactly once.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, append_entries,
-- redis_now.)
--
-- The outbox lives in the board's slot, the shared stream in another, so
-- the copy and the outbox's XDEL cannot be one script. This script
-- remembers every relayed outbox entry (board and entry id) in a sorted
-- set in the shared stream's slot (its hash tag is the stream's whole
-- name) for 7 days: an entry relayed again after a crash before its XDEL is
-- not appended twice.
--
-- KEYS     (built by relayRequest in results_proto.go) 1 the shared stream
--          <prefix>results, 2 {<prefix>results}:relayed
-- ARGV     1 dedupe id "<board> <outbox entry id>", then field, value pairs
--          to append
-- Returns  1 when appended, 0 when it was already relayed

local stream, relayed = KEYS[1], KEYS[2]
if redis.call('ZSCORE', relayed, ARGV[1]) then
  return 0
end
local now = redis_now()
local args = {'XADD', stream, 'MAXLEN', '~', '10000', '*'}
for k = 2, #ARGV do
  args[#args + 1] = ARGV[k]
end
redis.call(unpack(args))
redis.call('ZADD', relayed, fmt(now), ARGV[1])
redis.call('ZREMRANGEBYSCORE', relayed, '-inf', '(' .. fmt(now - 7 * 86400000))
return 1
