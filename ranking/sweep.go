package ranking

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Forgetting members (contract 14): the names hash n, the search index ni
// and the member records sm grow with every member ever seen, so a
// background walk (sweep.lua) removes what belongs to members with no score
// left in any retained period of the board's views. A board with an all
// view keeps every member until it is removed (all never expires), so its
// walk is skipped: it would find nobody to forget. A sharded board has one
// walk per shard: everything about a member, its periods included, is on
// its shard.

const (
	// SweepCallsPerPass bounds the sweep.lua calls of one pass per board;
	// a walk that is not over continues at the next pass.
	SweepCallsPerPass = 10
	// sweepBudget bounds one call's lookups: members met × period keys.
	sweepBudget = 8192
	// sweepMinCount and sweepMaxCount bound the SCAN hint of one call.
	sweepMinCount, sweepMaxCount = 8, 128
	// sweepSlack is how far Redis's now may move from the pass's estimate
	// before a call's lists no longer hold (the script then refuses).
	sweepSlack = time.Minute
	// sweepMaxWatched bounds the watched entries of one view (hours with
	// a lateness of 400 days would list 9,600).
	sweepMaxWatched = 10000
)

// SweepReport is what one Sweep pass did.
type SweepReport struct {
	Forgotten int // members forgotten (one met in n and then in ni counts twice)
	Cycles    int // walks over n, ni, sm and nb that ended in the pass (one per shard)
}

// RunSweeper runs Sweep every interval until ctx ends (first at once),
// reporting failures to onError (which may be nil). Every instance may
// run it: each step checks and deletes in one atomic script.
func (s *Store) RunSweeper(ctx context.Context, every time.Duration, onError func(error)) {
	runEvery(ctx, every, func(ctx context.Context) error {
		_, err := s.Sweep(ctx)
		return err
	}, onError)
}

// runEvery runs pass every interval until ctx ends (first at once),
// reporting its failures to onError (which may be nil) while ctx lasts.
func runEvery(ctx context.Context, every time.Duration, pass func(context.Context) error, onError func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := pass(ctx); err != nil && onError != nil && ctx.Err() == nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep is one pass over every board without an all view: at most
// SweepCallsPerPass steps of its walk, stopping early when a walk ends.
// Errors of one board do not stop the others; the first is returned.
func (s *Store) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	var first error
	for _, b := range s.cfg.Boards {
		if hasAllView(b) {
			continue
		}
		for i := range b.Shards {
			forgotten, cycled, err := s.sweepShard(ctx, b, s.shardKeys(b, i))
			rep.Forgotten += forgotten
			if cycled {
				rep.Cycles++
			}
			if err != nil && first == nil {
				first = err
			}
		}
	}
	return rep, first
}

func hasAllView(b *Board) bool {
	for _, v := range b.Views {
		if v.Kind == All {
			return true
		}
	}
	return false
}

// sweepShard runs the steps of one pass over the shard of board b whose
// keys k builds (the board's own on a board of one shard). A refused step
// (a period appeared, or the clock moved on) plans again, twice at most;
// after that the walk waits for the next pass.
func (s *Store) sweepShard(ctx context.Context, b *Board, k boardKeys) (forgotten int, cycled bool, err error) {
	plan, err := s.sweepPlanOf(ctx, b, k)
	if err != nil {
		return 0, false, err
	}
	count := min(sweepMaxCount, max(sweepMinCount, sweepBudget/max(1, len(plan.declared))))
	replans := 0
	for calls := 0; calls < SweepCallsPerPass; calls++ {
		keys, args := s.sweepRequest(k, plan, count)
		raw, err := sweepScript.Run(ctx, s.rdb, keys, args...).Slice()
		if err != nil {
			return forgotten, false, wrapRedis(err)
		}
		r, err := decodeSweep(raw)
		if err != nil {
			return forgotten, false, err
		}
		if r.stale {
			if replans++; replans > 2 {
				return forgotten, false, nil
			}
			if err := s.SyncClock(ctx); err != nil {
				return forgotten, false, err
			}
			if plan, err = s.sweepPlanOf(ctx, b, k); err != nil {
				return forgotten, false, err
			}
			continue
		}
		forgotten += r.forgotten
		if r.cycled {
			return forgotten, true, nil
		}
	}
	return forgotten, false, nil
}

// sweepPlan is what a step checks members against, valid while Redis's
// now is within [fromMS, untilMS].
type sweepPlan struct {
	declared []string // live registry entries of the board's own views
	watched  []string // entries that may appear meanwhile and are not declared
	fromMS   int64
	untilMS  int64
}

// sweepPlanOf reads the registry's live entries of the board's own views
// (segment boards' entries are left out: a member with a score in a
// segment board's period has one in the board's same period, which expires
// with it) and lists as watched every period a write may still create: the
// periods of each view not final at the span's start, up to the one after
// the span's end. Window builds may create older windows too, but a member
// of a window has a score in one of its days' totals, kept as long as the
// window.
func (s *Store) sweepPlanOf(ctx context.Context, b *Board, k boardKeys) (sweepPlan, error) {
	now, err := s.Now(ctx)
	if err != nil {
		return sweepPlan{}, err
	}
	from, until := now.Add(-sweepSlack), now.Add(sweepSlack)
	plan := sweepPlan{fromMS: from.UnixMilli(), untilMS: until.UnixMilli()}
	entries, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{
		Key: k.registry(), Start: "(" + itoa(plan.fromMS), Stop: "+inf", ByScore: true,
	}).Result()
	if err != nil {
		return sweepPlan{}, wrapRedis(err)
	}
	declared := map[string]bool{}
	for _, e := range entries {
		if view, _, _ := strings.Cut(e, ":"); strings.Contains(view, "@") {
			continue
		}
		declared[e] = true
		plan.declared = append(plan.declared, e)
	}
	cal := s.cfg.Calendar
	views := b.Views
	for _, v := range b.Views {
		if v.Kind == Window {
			views = append(views[:len(views):len(views)], dayTotals)
			break
		}
	}
	for _, v := range views {
		p := cal.Next(v, cal.PeriodAt(v, until))
		for range sweepMaxWatched {
			if e := v.Name + ":" + p.ID; !declared[e] {
				plan.watched = append(plan.watched, e)
			}
			p = cal.Prev(v, p)
			if !p.End.Add(b.Lateness).After(from) {
				break
			}
		}
	}
	return plan, nil
}
