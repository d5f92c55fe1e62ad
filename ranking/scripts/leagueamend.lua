-- leagueamend.lua: replace a recorded cohort result after a member it lists
-- was removed, exactly once.
--
-- (lib.lua is prepended: amend_guard.)
--
-- The caller read the stored cohort result and built the amended one: the
-- member's entry dropped, the ranks after it one less (a tie partner keeps
-- its shared rank), every other entry and outcome as decided, amended_at
-- and a new digest. This script checks that the stored result is still the
-- one the caller read (its SHA-1) and that Redis's clock is close to
-- amended_at; then it stores the amended result with the stored one's
-- expiry, appends a result.amended event to the board's outbox and takes
-- the result out of the removed member's listing.
--
-- Go       league_amend.go: leagueAmendRequest
-- KEYS     1 the result lg:<round>:rs:<level>:<cohort>, 2 the outbox out,
--          3 lc:<removed member>
-- ARGV     1 SHA-1 (hex) of the stored result read, 2 amended result JSON,
--          3 its digest, 4 round, 5 tier id, 6 cohort, 7 amended_ms,
--          8 the listing (<round>\n<level>\n<cohort>)
-- Returns  "amended", "gone" (no result is stored: expired), "moved" (the
--          stored result is not the one read), "stale" (Redis's now is
--          more than 5 s past amended_ms, or before it)

local rs, out, lc = KEYS[1], KEYS[2], KEYS[3]
local amended = tonumber(ARGV[7])

local stop = amend_guard(rs, lc, ARGV[8], ARGV[1], amended)
if stop then return stop end

redis.call('SET', rs, ARGV[2], 'KEEPTTL')
redis.call('XADD', out, 'MAXLEN', '~', '10000', '*',
  'type', 'result.amended', 'round', ARGV[4], 'tier', ARGV[5], 'cohort', ARGV[6],
  'digest', ARGV[3], 'result', ARGV[2])
redis.call('ZREM', lc, ARGV[8])
return 'amended'
