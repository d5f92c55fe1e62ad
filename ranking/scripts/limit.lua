-- limit.lua: the write rate limit of one API key, as a GCRA (generic cell
-- rate algorithm): the key holds the theoretical arrival time (TAT) of the
-- next event, in microseconds on Redis's clock, so one number per API key
-- is the whole state and every instance shares it.
--
-- Go       limit.go: TakeRate
-- KEYS[1]  the limit key of one API key, e.g. "standings:rate:{<sha256 hex>}"
-- ARGV     rate (events per second), burst (events), cost (events asked for)
-- Returns  {allowed (1 or 0), retry_after_us}: when refused, how long until
--          the whole cost would be allowed; nothing is recorded then.

local key = KEYS[1]
local rate, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = 1000000 / rate -- microseconds per event
local tat = tonumber(redis.call('GET', key) or '') or now
if tat < now then tat = now end
-- A TAT can run at most burst intervals ahead; further means Redis's clock
-- went back (failover to a replica with a slower clock): wait no longer
-- than an empty bucket would.
if tat > now + burst * interval then tat = now + burst * interval end
local new_tat = tat + cost * interval
-- A full bucket lets burst events through at once: the TAT may run up to
-- burst intervals ahead of now.
local allow_at = new_tat - burst * interval
if allow_at > now then
  return {0, math.ceil(allow_at - now)}
end
redis.call('SET', key, fmt(new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
return {1, 0}
