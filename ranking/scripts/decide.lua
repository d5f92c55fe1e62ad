-- decide.lua: decide undecided cohorts of a closed league round, a
-- bounded number of members per call, so that no call blocks Redis for
-- long however large the round or its cohorts. Without listed cohorts it
-- walks the round's tiers and cohorts from a cursor kept in the round's
-- hash (the recorder); with them it decides those (the last cohorts of a
-- batch's members, which apply.lua's place needs decided).
--
-- (lib.lua is prepended: fmt, num, decide_cohort, cohort_index, redis_now.)
--
-- Go       league_recorder.go: decideRequest, decodeDecide
-- KEYS     1 the rounds to decide lr, 2 z:~lg:<round>, 3 lg:<round>:m,
--          4 lg:<round>:f
-- ARGV     round id, round end ms, ntiers, cohort_size, promote, demote,
--          shared (1 for ties: shared), budget (members per call: cohorts
--          are taken while they fit, at least one, and a cohort decided
--          before counts as one member), then zero or more (level, cohort)
--          pairs to decide instead of walking
-- Returns  {decided, done (0|1), now_ms, through}: how many cohorts this
--          call decided; whether every cohort of the round (walking) or
--          every listed cohort is decided; and how many of the listed
--          cohorts this call went through (the caller sends the rest
--          again). A round still open decides nothing; a round whose keys
--          expired leaves lr.

local lr, z, m, f = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local round, round_end = ARGV[1], tonumber(ARGV[2])
local ntiers, size, promote, demote = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local shared, budget = ARGV[7] == '1', tonumber(ARGV[8])
local nlisted = (#ARGV - 8) / 2
local now = redis_now()
if now < round_end then return {0, 0, now, 0} end
if redis.call('EXISTS', f) == 0 then
  -- Nobody played, or the round's keys expired: nothing to decide.
  redis.call('ZREM', lr, round)
  return {0, 1, now, nlisted}
end
local decided, walked = 0, 0
-- fits says whether one more cohort (cohort_size members at most) stays
-- within the call's budget.
local function fits() return walked == 0 or walked + size <= budget end
local function decide(level, c)
  local n = decide_cohort(z, m, f, level, c, ntiers, promote, demote, shared)
  if n then
    decided = decided + 1
    walked = walked + math.max(n, 1)
  else
    walked = walked + 1
  end
end

if nlisted > 0 then
  local k = 0
  while k < nlisted and fits() do
    decide(tonumber(ARGV[9 + 2 * k]), tonumber(ARGV[10 + 2 * k]))
    k = k + 1
  end
  return {decided, k == nlisted and 1 or 0, now, k}
end

local cur = redis.call('HGET', f, 'r') or '1:1'
local level, c = string.match(cur, '^(%d+):(%d+)$')
level, c = tonumber(level), tonumber(c)
while level <= ntiers and fits() do
  local seats = tonumber(redis.call('HGET', f, 'c:' .. level) or '0')
  if c > math.ceil(seats / size) then
    level, c = level + 1, 1
  else
    decide(level, c)
    c = c + 1
  end
end
redis.call('HSET', f, 'r', level .. ':' .. c)
if level > ntiers then
  -- The round stays in lr until its cohorts are recorded (leaguerecord.lua).
  return {decided, 1, now, 0}
end
return {decided, 0, now, 0}
