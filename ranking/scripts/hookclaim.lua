-- hookclaim.lua: take due webhook deliveries for one sender, each for a
-- lease, so that a delivery is in flight on one instance at a time.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, append_entries,
-- redis_now.)
--
-- A pending delivery's score is when it is due. Claiming sets the score to
-- now + lease and records the sender's token: nobody else takes it until
-- the lease ends, and only the token's holder can report its outcome. A
-- sender that dies leaves the lease to run out; the next claim after that
-- sends it again. The attempt is counted here, when it goes in flight, so
-- one cut short by a crash counts too (hookdone.lua does not count again).
--
-- Go       webhooks_proto.go: claimRequest
-- KEYS     1 {<prefix>results}:wh:pending, then {<prefix>results}:wh:d:<id>
--          of each candidate in ARGV order
-- ARGV     1 lease ms, 2 token, then the candidate ids
-- Returns  {now_ms, {{id, url, type, body, attempts}, ...}}: the claimed
--          ones (candidates not due, or gone, are skipped), attempts
--          counting this one

local pending = KEYS[1]
local now = redis_now()
local lease = tonumber(ARGV[1])
local out = {}
for k = 3, #ARGV do
  local id, h = ARGV[k], KEYS[k - 1]
  local due = redis.call('ZSCORE', pending, id)
  if due and num(due) <= now then
    if redis.call('EXISTS', h) == 1 then
      redis.call('ZADD', pending, fmt(now + lease), id)
      redis.call('HSET', h, 'lease', ARGV[2], 'next_ms', fmt(now + lease))
      local attempts = redis.call('HINCRBY', h, 'attempts', 1)
      local f = redis.call('HMGET', h, 'url', 'type', 'body')
      out[#out + 1] = {id, f[1], f[2], f[3], fmt(attempts)}
    else
      redis.call('ZREM', pending, id)
    end
  end
end
return {fmt(now), out}
