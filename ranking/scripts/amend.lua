-- amend.lua: replace a recorded result after a member it lists was
-- removed, exactly once.
--
-- (lib.lua is prepended: fmt, num, split, fmt_score, publish, append_entries,
-- redis_now, amend_guard, index_result, same_top.)
--
-- The caller read the stored result and built the amended one: recomputed
-- from the period (read.lua) while the period is retained, else with the
-- member's entry dropped and later ranks moved up. This script checks that
-- the stored result is still the one the caller read (its SHA-1), that
-- Redis's clock is close to amended_at, and for a recomputation that the
-- period is still retained and its total and top entries are as read (for
-- a drop, that the period's retention has ended); then it stores the
-- amended result, appends a result.amended event to the board's outbox,
-- takes the result out of the removed member's reverse index and lists it
-- in the reverse index of every member it newly lists. On a sharded board
-- a recomputation checks the board's removal count rg instead of the
-- period (as record.lua does).
--
-- Go       results_proto.go: amendRequest
-- KEYS     1 the result rs:<view>:<period>, 2 the outbox out,
--          3 rm:<removed member>, 4 the period's z:<view>:<period> (a
--          sharded board: its removal count rg), then
--          rm:<member> of each member the amended result newly lists
-- ARGV     1 SHA-1 (hex) of the stored result read, 2 amended result JSON,
--          3 its digest, 4 view, 5 period, 6 start_ms, 7 horizon_ms (the
--          rm keys live at least until then), 8 mode "recompute" or "drop",
--          9 the period's expire_ms, 10 amended_ms, 11 total, 12 n (entries
--          read), 13 "" (check the period) or the removal count read
--          before the read, then n (member, code) pairs as read
-- Returns  "amended", "gone" (no result is stored: trimmed), "moved" (the
--          stored result is not the one read), "changed" (the period's
--          total or top entries differ from the read, or its retention
--          ended or had not ended, as the mode assumed), "stale" (Redis's
--          now is more than 5 s past amended_ms, or before it)

local rs, out, rm, zkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local listing = ARGV[4] .. '\n' .. ARGV[5]
local expire, amended = tonumber(ARGV[9]), tonumber(ARGV[10])
local total, n = tonumber(ARGV[11]), tonumber(ARGV[12])

local stop, now = amend_guard(rs, rm, listing, ARGV[1], amended)
if stop then return stop end
if ARGV[8] == 'recompute' then
  if now >= expire then
    return 'changed'
  end
  if ARGV[13] == '' then
    if not same_top(zkey, total, n, 13) then return 'changed' end
  elseif (redis.call('GET', zkey) or '0') ~= ARGV[13] then
    return 'changed'
  end
elseif now < expire then
  return 'changed'
end

redis.call('SET', rs, ARGV[2])
redis.call('XADD', out, 'MAXLEN', '~', '10000', '*',
  'type', 'result.amended', 'view', ARGV[4], 'period', ARGV[5],
  'digest', ARGV[3], 'result', ARGV[2])
redis.call('ZREM', rm, listing)
for k = 5, #KEYS do
  index_result(KEYS[k], ARGV[6], listing, ARGV[7], now)
end
return 'amended'
