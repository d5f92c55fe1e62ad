package ranking

import (
	"context"
	_ "embed"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The decide.lua protocol and the league recorder: after a round ends,
// every cohort nobody decided yet (see place in apply.lua) is decided, a
// few per call, so that no call blocks Redis for a whole round; then every
// cohort's result is recorded, one per call.

//go:embed scripts/decide.lua
var decideLua string

var decideScript = newScript(decideLua)

// decideMembers is about how many members one decide.lua call reads: its
// budget is this many members' worth of cohorts.
const decideMembers = 2000

// MaxDecideCallsPerPass bounds the decide.lua calls of one pass.
const MaxDecideCallsPerPass = 500

// MaxLeagueRecordsPerPass bounds the cohort results one pass records.
const MaxLeagueRecordsPerPass = 2000

// decideRequest builds decide.lua's KEYS and ARGV for one round.
func (s *Store) decideRequest(b *Board, round Period) (keys []string, args []any) {
	l, k := b.League, s.keysOf(b)
	keys = []string{k.leagueRounds(), k.period(leagueViewName, round.ID), k.leaguePlaces(round.ID), k.leagueRound(round.ID)}
	budget := max(1, decideMembers/l.CohortSize)
	args = []any{round.ID, itoa(round.End.UnixMilli()), itoa(int64(len(l.Tiers))), itoa(int64(l.CohortSize)),
		itoa(int64(l.Promote)), itoa(int64(l.Demote)), boolArg(b.Ties == TiesShared), itoa(int64(budget))}
	return keys, args
}

// decodeDecide decodes decide.lua's {decided, done, now_ms}.
func decodeDecide(raw []any) (decided int, done bool, err error) {
	if len(raw) != 3 {
		return 0, false, Errorf(EINTERNAL, "decide.lua: malformed reply %v", raw)
	}
	return int(asInt(raw[0])), asInt(raw[1]) == 1, nil
}

// DecideLeagues is one pass of the league recorder: for every league board,
// the cohorts of its ended rounds that nobody decided yet are decided, then
// each decided round's cohort results are recorded (league_results.go) and
// its league.final written once. It returns how many cohorts it decided;
// every instance may run it at once.
func (s *Store) DecideLeagues(ctx context.Context) (int, error) {
	now, err := s.Now(ctx)
	if err != nil {
		return 0, err
	}
	total, calls, records := 0, 0, MaxLeagueRecordsPerPass
	var errs []error
	for _, b := range s.cfg.Boards {
		if b.League == nil {
			continue
		}
		lv := b.League.leagueView()
		ids, err := s.rdb.ZRangeByScore(ctx, s.keysOf(b).leagueRounds(), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: 100}).Result()
		if err != nil {
			errs = append(errs, wrapRedis(err))
			continue
		}
		for _, id := range ids {
			round, err := s.cfg.Calendar.ParsePeriod(lv, id)
			if err != nil {
				errs = append(errs, Errorf(EINTERNAL, "league round %q of board %q: %v", id, b.ID, err))
				continue
			}
			done := false
			for ; !done && calls < MaxDecideCallsPerPass; calls++ {
				keys, args := s.decideRequest(b, round)
				raw, err := decideScript.Run(ctx, s.rdb, keys, args...).Slice()
				if err != nil {
					errs = append(errs, wrapRedis(err))
					break
				}
				var n int
				n, done, err = decodeDecide(raw)
				if err != nil {
					errs = append(errs, err)
					break
				}
				total += n
				if !done && asInt(raw[2]) < round.End.UnixMilli() {
					break // Redis's clock says the round is still open
				}
			}
			if done {
				if _, err := s.recordCohorts(ctx, b, round, &records); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return total, errors.Join(errs...)
}
