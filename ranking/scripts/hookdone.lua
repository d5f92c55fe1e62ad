-- hookdone.lua: record the outcome of one webhook delivery attempt.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, append_entries,
-- redis_now.)
--
-- Only the holder of the delivery's lease reports: a sender whose lease ran
-- out (another instance may be sending it now) changes nothing. A 2xx marks
-- it delivered (its body is dropped; it is kept for listing until it
-- expires). A failure before the give-up time schedules the next attempt
-- after the caller's backoff; a failure at or after it marks it failed.
-- The attempt was counted when hookclaim.lua put it in flight.
--
-- Go       webhooks_proto.go: doneRequest
-- KEYS     1 wh:pending, 2 wh:delivered, 3 wh:failed, 4 wh:d:<id> (all under
--          {<prefix>results})
-- ARGV     1 token, 2 ok ("1" a 2xx, "0" not), 3 last status (HTTP status,
--          "" when there was no answer), 4 last error text, 5 backoff ms,
--          6 ms to keep a delivered one, 7 ms to keep a failed one, 8 id
-- Returns  "delivered", "retry", "failed", or "lost" (not this sender's)

local pending, delivered, failed, h = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[8]
if redis.call('HGET', h, 'lease') ~= ARGV[1] then
  return 'lost'
end
local now = redis_now()
redis.call('HSET', h, 'last_status', ARGV[3], 'last_error', ARGV[4], 'last_ms', fmt(now))
redis.call('HDEL', h, 'lease')
if ARGV[2] == '1' then
  local keep = tonumber(ARGV[6])
  redis.call('ZREM', pending, id)
  redis.call('HSET', h, 'status', 'delivered', 'done_ms', fmt(now))
  redis.call('HDEL', h, 'body', 'next_ms')
  redis.call('PEXPIRE', h, keep)
  redis.call('ZADD', delivered, fmt(now), id)
  redis.call('ZREMRANGEBYSCORE', delivered, '-inf', '(' .. fmt(now - keep))
  return 'delivered'
end
if now >= tonumber(redis.call('HGET', h, 'deadline_ms')) then
  local keep = tonumber(ARGV[7])
  redis.call('ZREM', pending, id)
  redis.call('HSET', h, 'status', 'failed', 'done_ms', fmt(now))
  redis.call('HDEL', h, 'next_ms')
  redis.call('PEXPIRE', h, keep)
  redis.call('ZADD', failed, fmt(now), id)
  redis.call('ZREMRANGEBYSCORE', failed, '-inf', '(' .. fmt(now - keep))
  return 'failed'
end
local nxt = now + tonumber(ARGV[5])
redis.call('ZADD', pending, fmt(nxt), id)
redis.call('HSET', h, 'next_ms', fmt(nxt))
return 'retry'
