-- hookretry.lua: send a failed webhook delivery again (admin).
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, append_entries,
-- redis_now.)
--
-- The delivery becomes pending and due now, with a new give-up time: if the
-- receiver still fails, it is retried with backoff as a new one would be.
--
-- Go       webhooks_proto.go: retryRequest
-- KEYS     1 wh:failed, 2 wh:pending, 3 wh:d:<id> (all under
--          {<prefix>results})
-- ARGV     1 id, 2 give-up window ms
-- Returns  "pending" (done), "missing" (no such delivery), or the status
--          it has when it is not failed ("pending", "delivered") prefixed
--          with "not:"

local failed, pending, h = KEYS[1], KEYS[2], KEYS[3]
local id = ARGV[1]
if redis.call('EXISTS', h) == 0 then
  return 'missing'
end
if not redis.call('ZSCORE', failed, id) then
  return 'not:' .. (redis.call('HGET', h, 'status') or 'pending')
end
local now = redis_now()
redis.call('ZREM', failed, id)
redis.call('PERSIST', h)
redis.call('HSET', h, 'status', 'pending', 'deadline_ms', fmt(now + tonumber(ARGV[2])),
  'next_ms', fmt(now))
redis.call('HDEL', h, 'done_ms')
redis.call('ZADD', pending, fmt(now), id)
return 'pending'
