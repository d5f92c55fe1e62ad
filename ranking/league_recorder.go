package ranking

import (
	"context"
	_ "embed"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The decide.lua protocol and the league recorder: after a round ends,
// every cohort nobody decided yet is decided, a few per call, so that no
// call blocks Redis for long; then every cohort's result is recorded, one
// per call. A write whose member's last cohort is undecided decides that
// cohort first through the same script (decideCohorts).

//go:embed scripts/decide.lua
var decideLua string

var decideScript = newScript(decideLua)

// decideMembers is how many members one decide.lua call reads at most
// (one cohort when a cohort is larger): deciding a member costs a few
// microseconds of Redis time, so a call stays near a millisecond.
const decideMembers = 240

// MaxDecideCallsPerPass bounds the decide.lua calls of one pass: a round
// of 1,000,000 members takes about 4,200 calls in cohorts of 30 (8 per
// call) and 1,000 in cohorts of 1,000, so at most two passes.
const MaxDecideCallsPerPass = 2500

// MaxLeagueRecordsPerPass bounds the cohort results one pass records.
const MaxLeagueRecordsPerPass = 2000

// leagueCohort names one cohort of a round: tier level (1 = lowest) and
// number, as apply.lua's -4 reply lists them.
type leagueCohort struct {
	round         string
	level, cohort int64
}

// decideRequest builds decide.lua's KEYS and ARGV for one round on shard:
// the listed cohorts (the shard's own numbers), or (none) the next ones
// from the round's cursor.
func (s *Store) decideRequest(b *Board, shard int, round Period, cohorts []leagueCohort) (keys []string, args []any) {
	l, k := b.League, s.shardKeys(b, shard)
	keys = []string{k.leagueRounds(), k.period(leagueViewName, round.ID), k.leaguePlaces(round.ID), k.leagueRound(round.ID)}
	args = []any{round.ID, itoa(round.End.UnixMilli()), itoa(int64(len(l.Tiers))), itoa(int64(l.CohortSize)),
		itoa(int64(l.Promote)), itoa(int64(l.Demote)), boolArg(b.Ties == TiesShared), itoa(decideMembers)}
	for _, c := range cohorts {
		args = append(args, itoa(c.level), itoa(c.cohort))
	}
	return keys, args
}

// decodeDecide decodes decide.lua's {decided, done, now_ms, through}.
func decodeDecide(raw []any) (decided int, done bool, nowMS int64, through int, err error) {
	if len(raw) != 4 {
		return 0, false, 0, 0, Errorf(EINTERNAL, "decide.lua: malformed reply %v", raw)
	}
	return int(asInt(raw[0])), asInt(raw[1]) == 1, asInt(raw[2]), int(asInt(raw[3])), nil
}

// decideCohorts decides the listed cohorts of closed rounds of board b on
// shard (apply.lua's -4 reply: a write's members' last cohorts, on their
// shard), decideMembers members per decide.lua call, so that a write
// never decides a cohort inside its own call.
func (s *Store) decideCohorts(ctx context.Context, b *Board, shard int, cohorts []leagueCohort) error {
	lv := b.League.leagueView()
	byRound := map[string][]leagueCohort{}
	var order []string
	for _, c := range cohorts {
		if _, ok := byRound[c.round]; !ok {
			order = append(order, c.round)
		}
		byRound[c.round] = append(byRound[c.round], c)
	}
	for _, id := range order {
		round, err := s.cfg.Calendar.ParsePeriod(lv, id)
		if err != nil {
			return Errorf(EINTERNAL, "league round %q of board %q: %v", id, b.ID, err)
		}
		left := byRound[id]
		for len(left) > 0 {
			keys, args := s.decideRequest(b, shard, round, left)
			raw, err := decideScript.Run(ctx, s.rdb, keys, args...).Slice()
			if err != nil {
				return wrapRedis(err)
			}
			_, _, _, through, err := decodeDecide(raw)
			if err != nil {
				return err
			}
			if through == 0 {
				break // Redis's clock says the round is still open: apply.lua will not ask again
			}
			left = left[min(through, len(left)):]
		}
	}
	return nil
}

// DecideLeagues is one pass of the league recorder: for every league board,
// the cohorts of its ended rounds that nobody decided yet are decided, then
// each decided round's cohort results are recorded (league_results.go) and
// its league.final written once. A sharded board's shards each decide and
// record their own cohorts (each shard's lr lists its rounds), and the
// round's league.final follows the last shard's (finalLeague). It returns
// how many cohorts it decided; every instance may run it at once.
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
		var ended []Period // a sharded board's rounds with every shard's part done
		seen := map[string]bool{}
		for shard := range b.Shards {
			ids, err := s.rdb.ZRangeByScore(ctx, s.shardKeys(b, shard).leagueRounds(), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: 100}).Result()
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
				n, done, err := s.decideRound(ctx, b, shard, round, &calls)
				total += n
				if err != nil {
					errs = append(errs, err)
				}
				if !done {
					continue
				}
				recorded, err := s.recordCohorts(ctx, b, shard, round, &records)
				if err != nil {
					errs = append(errs, err)
				}
				if recorded && b.Sharded() && !seen[id] {
					seen[id] = true
					ended = append(ended, round)
				}
			}
		}
		for _, round := range ended {
			if _, err := s.finalLeague(ctx, b, round); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return total, errors.Join(errs...)
}

// decideRound runs decide.lua's walk over round on shard until every
// cohort is decided, Redis's clock says the round is still open, or the
// pass's *calls reach MaxDecideCallsPerPass.
func (s *Store) decideRound(ctx context.Context, b *Board, shard int, round Period, calls *int) (decided int, done bool, err error) {
	for ; !done && *calls < MaxDecideCallsPerPass; *calls++ {
		keys, args := s.decideRequest(b, shard, round, nil)
		raw, err := decideScript.Run(ctx, s.rdb, keys, args...).Slice()
		if err != nil {
			return decided, false, wrapRedis(err)
		}
		n, d, nowMS, _, err := decodeDecide(raw)
		if err != nil {
			return decided, false, err
		}
		decided, done = decided+n, d
		if !done && nowMS < round.End.UnixMilli() {
			break // Redis's clock says the round is still open
		}
	}
	return decided, done, nil
}
