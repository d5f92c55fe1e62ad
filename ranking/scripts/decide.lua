-- decide.lua: decide the next few undecided cohorts of a closed league
-- round, walking its tiers and cohorts from a cursor kept in the round's
-- hash, so that no call walks more than `budget` cohorts (each
-- cohort_size members at most) however large the round.
--
-- (lib.lua is prepended: fmt, num, decide_cohort, cohort_index, redis_now.)
--
-- Go       league_recorder.go: decideRequest, decodeDecide
-- KEYS     1 the rounds to decide lr, 2 z:~lg:<round>, 3 lg:<round>:m,
--          4 lg:<round>:f
-- ARGV     round id, round end ms, ntiers, cohort_size, promote, demote,
--          shared (1 for ties: shared), budget (cohorts per call)
-- Returns  {decided, done (0|1), now_ms}: how many cohorts this call
--          decided, and whether every cohort of the round is decided. A
--          round still open decides nothing; a round whose keys expired
--          leaves lr.

local lr, z, m, f = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local round, round_end = ARGV[1], tonumber(ARGV[2])
local ntiers, size, promote, demote = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local shared, budget = ARGV[7] == '1', tonumber(ARGV[8])
local now = redis_now()
if now < round_end then return {0, 0, now} end
if redis.call('EXISTS', f) == 0 then
  -- Nobody played, or the round's keys expired: nothing to decide.
  redis.call('ZREM', lr, round)
  return {0, 1, now}
end
local cur = redis.call('HGET', f, 'r') or '1:1'
local level, c = string.match(cur, '^(%d+):(%d+)$')
level, c = tonumber(level), tonumber(c)
local decided, walked = 0, 0
while level <= ntiers and walked < budget do
  local seats = tonumber(redis.call('HGET', f, 'c:' .. level) or '0')
  if c > math.ceil(seats / size) then
    level, c = level + 1, 1
  else
    if decide_cohort(z, m, f, level, c, ntiers, promote, demote, shared) then decided = decided + 1 end
    walked = walked + 1
    c = c + 1
  end
end
redis.call('HSET', f, 'r', level .. ':' .. c)
if level > ntiers then
  -- The round stays in lr until its cohorts are recorded (leaguerecord.lua).
  return {decided, 1, now}
end
return {decided, 0, now}
