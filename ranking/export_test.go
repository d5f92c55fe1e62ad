package ranking

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/text/transform"
)

// Exports of unexported functions for the external tests.
var (
	MaxPeriodLength = (*Calendar).maxPeriodLength
	SearchFold      = foldSearch
	// SearchFoldChain is foldSearch's chain alone, fresh on every call.
	SearchFoldChain = func(s string) string { return foldWith(foldChains.New().(transform.Transformer), s) }
	ParseScaled     = parseScaled
	FormatScaled    = formatScaled
)

// MaxScaled is the bound every scaled value stays below (2^53).
const MaxScaled = maxScaled

// GuardKeys makes every script refuse, for the rest of the test, to touch
// a key its caller did not declare in KEYS: each redis.call is routed
// through a check of its key argument.
func GuardKeys(tb interface{ Cleanup(func()) }) {
	scripts := []struct {
		s    **redis.Script
		body string
	}{
		{&applyScript, applyLua}, {&readScript, readLua}, {&ensureScript, ensureLua}, {&removeScript, removeLua},
		{&cardHeadScript, cardHeadLua}, {&limitScript, limitLua}, {&deadScript, deadLua},
		{&recordScript, recordLua}, {&relayScript, relayLua}, {&amendScript, amendLua},
		{&searchScript, searchLua}, {&sweepScript, sweepLua}, {&compactScript, compactLua},
		{&hookClaimScript, hookClaimLua}, {&hookDoneScript, hookDoneLua}, {&hookRetryScript, hookRetryLua},
		{&cohortScript, cohortLua}, {&decideScript, decideLua}, {&leagueRecordScript, leagueRecordLua},
		{&leagueAmendScript, leagueAmendLua},
	}
	for _, sc := range scripts {
		old := *sc.s
		*sc.s = redis.NewScript(keyGuardLua + strings.ReplaceAll(libLua+sc.body, "redis.call", "guarded_call"))
		tb.Cleanup(func() { *sc.s = old })
	}
}

const keyGuardLua = `
local declared_keys = {}
for _, k in ipairs(KEYS) do declared_keys[k] = true end
local keyless = {TIME = true, PUBLISH = true}
local function guarded_call(cmd, ...)
  local key = select(1, ...)
  if not keyless[string.upper(cmd)] and not declared_keys[key] then
    error('undeclared key ' .. tostring(key) .. ' in ' .. cmd)
  end
  return redis.call(cmd, ...)
end
`

// SetAfterRelay sets a hook run between relay.lua and the outbox XDEL; an
// error it returns stops the relay there, as a crash would.
func (s *Store) SetAfterRelay(f func() error) { s.afterRelay = f }

// RemoveMemberOnly runs the removal script alone, without the amendment
// RemoveMember makes after it, as a process that dies between the two. It
// reports whether the member was on any period or in any result.
func (s *Store) RemoveMemberOnly(ctx context.Context, boardID, member string) (bool, error) {
	b, err := s.board(boardID)
	if err != nil {
		return false, err
	}
	entries, err := s.rdb.ZRange(ctx, s.memberKeys(b, member).registry(), 0, -1).Result()
	if err != nil {
		return false, err
	}
	listed := ""
	if b.Sharded() {
		listed = itoa(s.rdb.ZCard(ctx, s.keysOf(b).memberResults(member)).Val())
	}
	now, err := s.Now(ctx)
	if err != nil {
		return false, err
	}
	keys, args := s.removeRequest(b, member, entries, listed, now)
	raw, err := removeScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return false, err
	}
	rep, err := decodeRemove(raw)
	return rep.removed > 0 || rep.listed > 0, err
}

// AmendRemoved runs the amendment of a removal made at removedMS.
func (s *Store) AmendRemoved(ctx context.Context, boardID, member string, removedMS int64) (int, error) {
	b, err := s.board(boardID)
	if err != nil {
		return 0, err
	}
	return s.amendRemoved(ctx, b, member, removedMS)
}

// SetBeforeRecord sets a hook run between a result's read and record.lua.
func (s *Store) SetBeforeRecord(f func()) { s.beforeRecord = f }

// WithBeforeAck sets the hook that runs after a stream batch is applied and
// before it is acknowledged; false drops the batch unacknowledged, as a crash.
func WithBeforeAck(o StreamOptions, f func(board string, n int) bool) StreamOptions {
	o.beforeAck = f
	return o
}

// ClaimDelivery claims up to n due webhook deliveries for token, for
// tests of the lease; it returns their ids.
func (s *Store) ClaimDelivery(ctx context.Context, n int, lease time.Duration, token string) ([]string, error) {
	cs, err := s.claimDeliveries(ctx, n, lease, token)
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.id
	}
	return ids, err
}

// ReportDelivery records an attempt's outcome as token's holder would;
// it returns hookdone.lua's answer.
func (s *Store) ReportDelivery(ctx context.Context, id, token string, status int) (string, error) {
	keys, args := s.doneRequest(id, token, status >= 200 && status < 300, status, "", time.Millisecond)
	return hookDoneScript.Run(ctx, s.rdb, keys, args...).Text()
}

// RetryDelay is the backoff after failed attempt n.
var RetryDelay = retryDelay

// SetBeforeActionBoard sets a hook run before each board's write of an
// action; an error it returns is that board's outcome.
func (s *Store) SetBeforeActionBoard(f func(board string) error) { s.beforeActionBoard = f }

// RDB is the store's client, for tests that watch the store's own commands.
func (s *Store) RDB() redis.UniversalClient { return s.rdb }

// RecordLeagueCohorts records at most budget cohort results of a decided
// league round, as a recorder pass that stops there (a crash) would.
func (s *Store) RecordLeagueCohorts(ctx context.Context, boardID, round string, budget int) (bool, error) {
	b, p, err := s.leagueRound(ctx, boardID, round)
	if err != nil {
		return false, err
	}
	return s.recordCohorts(ctx, b, 0, p, &budget) // shard 0: a board of one shard
}

// SetShardReadLimits lowers a store's merged-read thresholds (the
// deepest page end read by merging each shard's top, and the window read
// outright once counting has narrowed a cut) so that small boards take
// every path.
func SetShardReadLimits(s *Store, shallow, window int64) {
	s.shardLimits = shardLimits{shallow: shallow, window: window}
}

// AmendLeagueCohorts amends the recorded cohort results listing member as
// a removal at removedMS would (league_amend.go).
func (s *Store) AmendLeagueCohorts(ctx context.Context, boardID, member string, removedMS int64) (int, error) {
	b, err := s.board(boardID)
	if err != nil {
		return 0, err
	}
	return s.amendCohorts(ctx, b, member, removedMS)
}

// CompactIndexStep runs one compact.lua call on shard i of board (0 on a
// board of one shard) with the given count, threshold, block size and
// most blocks written, so that tests cut blocks small.
func CompactIndexStep(ctx context.Context, s *Store, board string, i, count, threshold, blockBytes, blocks int) (moved, left int, err error) {
	b, err := s.board(board)
	if err != nil {
		return 0, 0, err
	}
	return s.compactStep(ctx, s.shardKeys(b, i), count, threshold, blockBytes, blocks, 0)
}

// IndexCompactCount is the most entries one compaction call moves.
const IndexCompactCount = indexCompactCount

// IndexCompactPerBlock is the entries per block ni holds before a pass
// moves any.
const IndexCompactPerBlock = indexCompactPerBlock

// CountApplyRuns makes s's apply.lua count in hash counter the runs of
// events it applies view by view (field run, see apply_run) and those it
// turns back to event by event (field refused). The hash is written from
// the script without being declared, which a single Redis allows.
func CountApplyRuns(s *Store, counter string) {
	const at = "  if not run_safe(tl, c, e0, e1) then return false end\n"
	if !strings.Contains(applyLua, at) {
		panic("apply.lua no longer checks a run with " + at)
	}
	count := "  if not run_safe(tl, c, e0, e1) then redis.call('HINCRBY', '" + counter + "', 'refused', 1) return false end\n" +
		"  redis.call('HINCRBY', '" + counter + "', 'run', 1)\n"
	s.applyOverride = newScript(strings.Replace(applyLua, at, count, 1))
}

// UseGenericApply makes s apply every event through apply.lua's generic
// plan (plan, write_plan, answer), never its plain path (apply_plain), so
// that a test can hold the two to the same writes and answers.
func UseGenericApply(s *Store) {
	const on = "local plain_ok = not has_windows"
	if !strings.Contains(applyLua, on) {
		panic("apply.lua no longer chooses its plain path with " + on)
	}
	s.applyOverride = newScript(strings.Replace(applyLua, on, "local plain_ok = false and not has_windows", 1))
}

// ValidSegmentValue exposes validSegmentValue.
var ValidSegmentValue = validSegmentValue
