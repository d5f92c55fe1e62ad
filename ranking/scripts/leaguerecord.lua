-- leaguerecord.lua: record the result of one decided cohort of a closed
-- league round, exactly once, and the round's league.final once every
-- cohort of the round is recorded.
--
-- (lib.lua is prepended: fmt, num, cohort_rows, cohort_index, redis_now.)
--
-- The caller read the cohort (cohort.lua) and built its result JSON and
-- digest. This script checks that the cohort is decided, that its members
-- and codes are still those read (a removal may have run in between) and
-- that Redis's clock has not moved on much since the read (recorded_at is
-- the read's now); then it stores the result, lists it in each member's
-- lc:<member> (so a removal finds it to amend), turns each member's league
-- record lm:<member> that still names this cohort into the tier it earned
-- (cohort 0: the round's keys, outcomes included, expire long before a
-- member away for many rounds comes back), counts it, moves the
-- round's record cursor rc past it, and when the count reaches the round's
-- cohorts appends league.final to the board's outbox and drops the round
-- from lr.
--
-- Go       league_results.go: leagueRecordRequest, finalLeague
-- KEYS     1 z:~lg:<round>, 2 lg:<round>:m, 3 lg:<round>:f, 4 the result
--          lg:<round>:rs:<level>:<cohort>, 5 the outbox out, 6 lr, then
--          lc:<member> of each member read, in the pairs' order, then
--          lm:<member> of each, in the same order
-- ARGV     1 level, 2 cohort, 3 read_now_ms, 4 result JSON, 5 expire_at_ms,
--          6 round id, 7 the round's start, 8 its end (as served), 9 board
--          id, 10 cohort_size, 11 ntiers, 12 n, 13 sharded (1|0), then
--          ntiers tier ids, then n (member, code) pairs as read
-- Returns  "recorded", "exists" (already recorded), "undecided",
--          "changed" (the cohort differs from the read), "stale" (Redis's
--          now is more than 5 s past the read's, or before it)
--
-- The final step of a sharded board's round, once every shard's part is
-- final (league_results.go: finalLeague):
-- KEYS     1 the board's own lg:<round>:f, 2 the board's outbox out
-- ARGV     1 "final", 2 round id, 3 league.final's result JSON (the
--          shards' counts summed), 4 expire_at_ms
-- Returns  "recorded", or "exists" when league.final is out already

if ARGV[1] == 'final' then
  if redis.call('HSETNX', KEYS[1], 'final', '1') == 0 then return 'exists' end
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', '10000', '*', 'type', 'league.final', 'round', ARGV[2], 'result', ARGV[3])
  return 'recorded'
end

local z, m, f, rs, out, lr = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local level, c = tonumber(ARGV[1]), tonumber(ARGV[2])
local read_now = tonumber(ARGV[3])
local size, ntiers, n = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local sharded = ARGV[13] == '1'
local base = 13 + ntiers

-- advance moves the record cursor past this cohort, never back.
local function advance()
  local cur = redis.call('HGET', f, 'rc') or '1:1'
  local l0, c0 = string.match(cur, '^(%d+):(%d+)$')
  l0, c0 = tonumber(l0), tonumber(c0)
  if level > l0 or (level == l0 and c + 1 > c0) then
    redis.call('HSET', f, 'rc', level .. ':' .. (c + 1))
  end
end

if redis.call('EXISTS', rs) == 1 then
  advance()
  return 'exists'
end
if redis.call('HEXISTS', f, 'd:' .. level .. ':' .. c) == 0 then return 'undecided' end
local now = redis_now()
if now < read_now or now - read_now > 5000 then return 'stale' end
local rows = cohort_rows(z, m, cohort_index(level, c))
if #rows ~= n then return 'changed' end
for k, r in ipairs(rows) do
  if r.m ~= ARGV[base + 2 * k - 1] or fmt(r.c) ~= ARGV[base + 2 * k] then return 'changed' end
end

redis.call('SET', rs, ARGV[4], 'PXAT', ARGV[5])
-- Each member's listing lives as long as the result; listings of results
-- already expired go, so a member's list holds its retained rounds only.
local listing = ARGV[6] .. '\n' .. level .. '\n' .. c
local expire = tonumber(ARGV[5])
for k = 1, n do
  local lc = KEYS[6 + k]
  redis.call('ZREMRANGEBYSCORE', lc, '-inf', '(' .. fmt(now))
  redis.call('ZADD', lc, ARGV[5], listing)
  local ttl = redis.call('PTTL', lc)
  if ttl < 0 or now + ttl < expire then
    redis.call('PEXPIREAT', lc, ARGV[5])
  end
end
-- A record still naming this cohort becomes the tier earned, decided
-- once: level moved by the member's outcome, within the tiers.
local named = ARGV[6] .. '\t' .. level .. '\t' .. c
for k = 1, n do
  local lm = KEYS[6 + n + k]
  if redis.call('GET', lm) == named then
    local o = tonumber(redis.call('HGET', f, 'o:' .. ARGV[base + 2 * k - 1]) or '0')
    local earned = math.max(1, math.min(level + o, ntiers))
    redis.call('SET', lm, ARGV[6] .. '\t' .. earned .. '\t0', 'KEEPTTL')
  end
end
advance()
local recorded = redis.call('HINCRBY', f, 'rec', 1)
local cohorts = 0
local tiers = {}
for l = 1, ntiers do
  local seats = tonumber(redis.call('HGET', f, 'c:' .. l) or '0')
  local nc = math.ceil(seats / size)
  cohorts = cohorts + nc
  local got = redis.call('HMGET', f, 'nm:' .. l, 'np:' .. l, 'nd:' .. l)
  tiers[l] = '{"tier":"' .. ARGV[13 + l] .. '","cohorts":' .. nc .. ',"members":' .. (got[1] or '0') ..
    ',"promoted":' .. (got[2] or '0') .. ',"demoted":' .. (got[3] or '0') .. '}'
end
if recorded >= cohorts and redis.call('HSETNX', f, 'final', '1') == 1 and not sharded then
  -- Ids of boards, rounds and tiers, and RFC 3339 times, need no escaping.
  local final = '{"board":"' .. ARGV[9] .. '","round":"' .. ARGV[6] .. '","start":"' .. ARGV[7] .. '","end":"' .. ARGV[8] ..
    '","tiers":[' .. table.concat(tiers, ',') .. ']}'
  redis.call('XADD', out, 'MAXLEN', '~', '10000', '*', 'type', 'league.final', 'round', ARGV[6], 'result', final)
  redis.call('ZREM', lr, ARGV[6])
end
return 'recorded'
