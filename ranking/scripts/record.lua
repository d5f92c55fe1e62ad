-- record.lua: record the result of one final period, exactly once.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, append_entries,
-- redis_now, index_result, same_top.)
--
-- The caller read the period's total and top entries (read.lua) and built
-- the result JSON and its digest from them. This script checks that nothing
-- changed since (a removal may have run in between), that Redis's clock has
-- not moved on much since the read (recorded_at is the read's now), and
-- that the period is final; then it stores the result unless one is already
-- stored, indexes it, lists it in the reverse index rm:<member> of every
-- member it lists (so a removal finds the results to amend), appends a
-- result.recorded event to the board's outbox, and trims the index to
-- results_keep.
--
-- A sharded board's period lies on its shards, out of this script's
-- reach: the caller read it in several calls, after reading the board's
-- removal count rg, and "changed" then means rg moved (a removal counts
-- itself there after leaving its shard and before amending, so a result
-- stored with an unchanged rg was read after every removal its amendment
-- would not see). A final period changes only by removal.
--
-- Go       results_proto.go: recordRequest
-- KEYS     1 the period's z:<view>:<period> (a sharded board: its
--          removal count rg), 2 the results index res:<view>,
--          3 the result rs:<view>:<period>, 4 the outbox out, then
--          rs:<view>:<id> of each id the caller expects trimming may drop,
--          then rm:<member> of each of the n members read, in order
-- ARGV     1 total, 2 n (entries read), 3 read_now_ms, 4 final_ms (end +
--          lateness), 5 result JSON, 6 digest, 7 start_ms (index score),
--          8 results_keep, 9 view, 10 period, 11 ndrop, 12 horizon_ms (the
--          rm keys live at least until then), 13 "" (check the period) or
--          the removal count read before the read ("0" when none), then
--          ndrop ids (KEYS 5.. in order), then n (member, code) pairs as
--          read (left unchecked on a sharded board)
-- Returns  "recorded", "exists" (a result is already stored), "changed"
--          (the period's total or top entries differ from the read, or
--          the removal count moved),
--          "stale" (Redis's now is more than 5 s past the read's now, or
--          before it), "early" (the period is not final yet)

local zkey, idx, rs, out = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local total, n = tonumber(ARGV[1]), tonumber(ARGV[2])
local read_now, final_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
local keep, ndrop = tonumber(ARGV[8]), tonumber(ARGV[11])
local base = 13 + ndrop

if redis.call('EXISTS', rs) == 1 then
  return 'exists'
end
local now = redis_now()
if now < final_ms then
  return 'early'
end
if now < read_now or now - read_now > 5000 then
  return 'stale'
end
if ARGV[13] == '' then
  if not same_top(zkey, total, n, base) then
    return 'changed'
  end
elseif (redis.call('GET', zkey) or '0') ~= ARGV[13] then
  return 'changed'
end

redis.call('SET', rs, ARGV[5])
redis.call('ZADD', idx, ARGV[7], ARGV[10])
redis.call('XADD', out, 'MAXLEN', '~', '10000', '*',
  'type', 'result.recorded', 'view', ARGV[9], 'period', ARGV[10],
  'digest', ARGV[6], 'result', ARGV[5])
local listing = ARGV[9] .. '\n' .. ARGV[10]
for k = 1, n do
  index_result(KEYS[4 + ndrop + k], ARGV[7], listing, ARGV[12], now)
end

-- Trim the index to keep: drop the oldest declared ids that fall outside
-- it. An undeclared excess (the index grew since the caller looked) stays
-- until the next recording trims it.
local excess = redis.call('ZCARD', idx) - keep
for k = 1, ndrop do
  if excess <= 0 then break end
  local id = ARGV[13 + k]
  local r = redis.call('ZRANK', idx, id)
  if r and r < excess then
    redis.call('ZREM', idx, id)
    redis.call('DEL', KEYS[4 + k])
    excess = excess - 1
  end
end
return 'recorded'
