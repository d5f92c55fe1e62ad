-- relay.lua: relay one outbox event of a board, exactly once: append it to
-- the shared results stream (results only) and create its webhook
-- deliveries, in one step.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, append_entries,
-- redis_now.)
--
-- The outbox lives in the board's slot; the shared stream, the relayed set
-- and every webhook key live in the stream's slot (their hash tag is the
-- stream's whole name), so the copy and the outbox's XDEL cannot be one
-- script. This script remembers every relayed outbox entry (board and entry
-- id) for 7 days: an entry relayed again after a crash before its XDEL
-- changes nothing.
--
-- Go       webhooks_proto.go: relayRequest
-- KEYS     1 the shared stream <prefix>results, 2 {<prefix>results}:relayed,
--          3 {<prefix>results}:wh:pending, then {<prefix>results}:wh:d:<id>
--          of each delivery in ARGV order
-- ARGV     1 dedupe id "<board> <outbox entry id>", 2 append ("1" to append
--          to the stream, "0" not), 3 give-up window ms, 4 nf, then nf
--          stream field/value strings, then per delivery 5 strings: id,
--          type, url, board, body
-- Returns  1 when relayed now, 0 when it was already relayed

local stream, relayed, pending = KEYS[1], KEYS[2], KEYS[3]
if redis.call('ZSCORE', relayed, ARGV[1]) then
  return 0
end
local now = redis_now()
local giveup, nf = tonumber(ARGV[3]), tonumber(ARGV[4])
if ARGV[2] == '1' then
  local args = {'XADD', stream, 'MAXLEN', '~', '10000', '*'}
  for k = 5, 4 + nf do
    args[#args + 1] = ARGV[k]
  end
  redis.call(unpack(args))
end
local d = 3
for k = 5 + nf, #ARGV, 5 do
  d = d + 1
  local h = KEYS[d]
  if redis.call('EXISTS', h) == 0 then
    redis.call('HSET', h, 'id', ARGV[k], 'type', ARGV[k + 1], 'url', ARGV[k + 2],
      'board', ARGV[k + 3], 'body', ARGV[k + 4], 'status', 'pending',
      'attempts', '0', 'created_ms', fmt(now), 'deadline_ms', fmt(now + giveup),
      'next_ms', fmt(now))
    redis.call('ZADD', pending, fmt(now), ARGV[k])
  end
end
redis.call('ZADD', relayed, fmt(now), ARGV[1])
redis.call('ZREMRANGEBYSCORE', relayed, '-inf', '(' .. fmt(now - 7 * 86400000))
return 1
