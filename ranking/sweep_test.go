package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// sweepCfg: hours and days kept one period after their end, lateness long
// enough to write into the hours of two days ago; board "a" has an all view.
const sweepCfg = `boards:
  - {id: h, views: [hour, day], keep: 1, lateness: 48h, segments: [team]}
  - {id: a, views: [all, hour], keep: 1, lateness: 48h}
`

// mustSweepCycles runs Sweep passes until the walks of the swept boards
// ended twice in total per board, so one whole walk ran after the call.
func mustSweepCycles(t *testing.T, s *ranking.Store, boards int) int {
	t.Helper()
	cycles, forgotten := 0, 0
	for pass := 0; cycles < 2*boards; pass++ {
		if pass == 100 {
			t.Fatalf("sweep walks did not end in 100 passes")
		}
		rep, err := s.Sweep(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		cycles += rep.Cycles
		forgotten += rep.Forgotten
	}
	return forgotten
}

// memberTraces is what the board keeps of a member outside its periods:
// its name fields, its search entries, its segment record fields.
func memberTraces(t *testing.T, rdb redis.UniversalClient, prefix, member string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	got, err := rdb.HMGet(ctx, prefix+"n", member, member+"\x00k").Result()
	if err != nil {
		t.Fatal(err)
	}
	for k, f := range []string{"n", "n:k"} {
		if got[k] != nil {
			out = append(out, f)
		}
	}
	if got, err = rdb.HMGet(ctx, prefix+"sm", member, member+"\x00p").Result(); err != nil {
		t.Fatal(err)
	}
	for k, f := range []string{"sm", "sm:p"} {
		if got[k] != nil {
			out = append(out, f)
		}
	}
	entries, err := rdb.ZRange(ctx, prefix+"ni", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The blocks (nb) are the same index, packed.
	blocks, err := rdb.HVals(ctx, prefix+"nb").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, bl := range blocks {
		for _, e := range strings.Split(bl, "\n") {
			if e != "" {
				entries = append(entries, e)
			}
		}
	}
	// An id entry written again is in ni and the blocks until compaction.
	slices.Sort(entries)
	entries = slices.Compact(entries)
	for _, e := range entries {
		if _, m, _ := strings.Cut(e, "\x00"); m == member {
			out = append(out, "ni:"+e)
		}
	}
	return out
}

// TestSweepForgetsMembersWithoutScores: a member whose last period expired
// loses its name, search entries and segment record; one still scoring
// keeps them; the all view's board is not walked; a forgotten member who
// scores again is findable by id, and by name from its next named write.
// On miniredis the clock moves past the expiry; on real servers the
// expired periods are played by hand (keys deleted, registry entries dead).
func TestSweepForgetsMembersWithoutScores(t *testing.T) {
	ranking.GuardKeys(t)
	var m *miniredis.Miniredis
	for _, be := range redistest.Backends(func(t *testing.T) redis.UniversalClient {
		var rdb *redis.Client
		m, rdb = MustMiniredis(t, time.Date(2026, 3, 10, 12, 30, 0, 0, time.UTC))
		return rdb
	}) {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rdb := be.Client(t)
			t0 := time.Now()
			if be.Name == "miniredis" {
				t0 = time.Date(2026, 3, 10, 12, 30, 0, 0, time.UTC)
			}
			clock := t0
			s := newStore(t, rdb, MustConfig(t, sweepCfg), func() time.Time { return clock })
			prefix := func(b string) string { return s.Prefix() + "{" + b + "}:" }
			apply := func(board string, evs ...ranking.Event) []ranking.WriteResult {
				t.Helper()
				res, err := s.Apply(ctx, board, evs, ranking.ApplyOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res {
					if r.Err != nil {
						t.Fatalf("%s: %v", r.Member, r.Err)
					}
				}
				return res
			}
			team := map[string]string{"team": "x"}
			old := apply("h",
				ranking.Event{Member: "alice", Name: "Alice Old", Value: 1, At: t0.Add(-47 * time.Hour), Segments: team},
				ranking.Event{Member: "carol", Value: 1, At: t0.Add(-47 * time.Hour), Segments: team})
			apply("h", ranking.Event{Member: "bob", Name: "Bob Now", Value: 1, Segments: team})
			apply("a", ranking.Event{Member: "dave", Name: "Dave All", Value: 1, At: t0.Add(-47 * time.Hour)})
			// The search entries are in the blocks, as compaction leaves them.
			if _, _, err := ranking.CompactIndexStep(ctx, s, "h", 0, 100, 0, 1024, 64); err != nil {
				t.Fatal(err)
			}

			// Nothing has expired: nobody is forgotten.
			if n := mustSweepCycles(t, s, 1); n != 0 {
				t.Fatalf("forgot %d members while all still score", n)
			}
			if len(memberTraces(t, rdb, prefix("h"), "alice")) != 6 {
				t.Fatalf("alice's traces before expiry: %q", memberTraces(t, rdb, prefix("h"), "alice"))
			}

			// Alice's and Carol's hour and day (and their team's) expire
			// (final at midnight, kept an hour more for their results).
			if m != nil && be.Name == "miniredis" {
				clock = time.Date(2026, 3, 11, 1, 30, 0, 0, time.UTC)
				m.SetTime(clock)
			} else {
				for _, v := range old[0].Views {
					for _, e := range []string{v.View + ":" + v.Period, v.View + "@team=x:" + v.Period} {
						if err := rdb.Del(ctx, prefix("h")+"z:"+e).Err(); err != nil {
							t.Fatal(err)
						}
						if err := rdb.ZAdd(ctx, prefix("h")+"k", redis.Z{Score: 1, Member: e}).Err(); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if n := mustSweepCycles(t, s, 1); n < 2 {
				t.Fatalf("forgot %d times, want at least alice and carol", n)
			}
			for _, gone := range []string{"alice", "carol"} {
				if tr := memberTraces(t, rdb, prefix("h"), gone); len(tr) != 0 {
					t.Errorf("%s still has %q", gone, tr)
				}
			}
			if tr := memberTraces(t, rdb, prefix("h"), "bob"); len(tr) != 6 {
				t.Errorf("bob, still scoring, has %q", tr)
			}
			if got := mustSearchIn(t, s, "h", "ali"); len(got) != 0 {
				t.Errorf("search finds the forgotten alice: %+v", got)
			}
			if got := mustSearchIn(t, s, "h", "bob n"); len(got) != 1 || got[0].Name != "Bob Now" {
				t.Errorf("search for bob: %+v", got)
			}
			// The all view's board keeps everyone and is not walked.
			if tr := memberTraces(t, rdb, prefix("a"), "dave"); len(tr) != 4 {
				t.Errorf("dave on the board with all has %q", tr)
			}
			if n, err := rdb.Exists(ctx, prefix("a")+"sw").Result(); err != nil || n != 0 {
				t.Errorf("the board with all was walked (%d, %v)", n, err)
			}

			// Alice comes back: by id at once, by name from a named write.
			apply("h", ranking.Event{Member: "alice", Value: 1})
			if got := mustSearchIn(t, s, "h", "alice"); len(got) != 1 || got[0].Name != "" {
				t.Errorf("alice back without a name: %+v", got)
			}
			apply("h", ranking.Event{Member: "alice", Name: "Alice New", Value: 1, Segments: team})
			if got := mustSearchIn(t, s, "h", "alice n"); len(got) != 1 || got[0].Name != "Alice New" {
				t.Errorf("alice back with a name: %+v", got)
			}
			if n := mustSweepCycles(t, s, 1); n != 0 {
				t.Fatalf("forgot %d scoring members", n)
			}
			if tr := memberTraces(t, rdb, prefix("h"), "alice"); len(tr) != 6 {
				t.Errorf("alice, scoring again, has %q", tr)
			}
		})
	}
}

func mustSearchIn(t *testing.T, s *ranking.Store, board, q string) []ranking.MemberName {
	t.Helper()
	got, err := s.SearchMembers(context.Background(), board, q)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSweepRacesWrites: two sweepers run while a writer writes named,
// segment-tagged events into 40 past hours and periods expire under it (by
// hand: key deleted and registry entry made dead in one transaction).
// Afterwards every member with a score in a live period has its latest
// name, its search entries and its record; after a quiet walk, the others
// have nothing left.
func TestSweepRacesWrites(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rdb := be.Client(t)
			s := newStore(t, rdb, MustConfig(t, "boards: [{id: r, views: [hour], keep: 0, lateness: 48h, segments: [team]}]\n"), nil)
			prefix := s.Prefix() + "{r}:"
			now, err := rdb.Time(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(23, 5))
			hours := make([]time.Time, 40)
			for k := range hours {
				hours[k] = now.Add(-time.Duration(k+1) * time.Hour)
			}
			type write struct {
				evs []ranking.Event
			}
			var writes []write
			for range 120 {
				var w write
				for range 1 + r.IntN(4) {
					m := fmt.Sprintf("m%02d", r.IntN(40))
					w.evs = append(w.evs, ranking.Event{Member: m, Value: 1, At: hours[r.IntN(len(hours))],
						Name: fmt.Sprintf("Name %s %d", m, r.IntN(1000)), Segments: map[string]string{"team": []string{"a", "b"}[r.IntN(2)]}})
				}
				writes = append(writes, w)
			}
			kills := make([]int, 40)
			for k := range kills {
				kills[k] = r.IntN(len(hours))
			}
			cal := s.Config().Calendar
			rb, _ := s.Config().Board("r")
			hourView, _ := rb.View("hour")

			last := map[string]string{}
			stop := make(chan struct{})
			var sweepers, workers sync.WaitGroup
			errs := make(chan error, 16)
			for range 2 {
				sweepers.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := s.Sweep(ctx); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			workers.Go(func() {
				for _, w := range writes {
					res, err := s.Apply(ctx, "r", w.evs, ranking.ApplyOptions{})
					if err != nil {
						errs <- err
						return
					}
					for k, ev := range w.evs {
						if res[k].Err != nil {
							errs <- res[k].Err
							return
						}
						last[ev.Member] = ev.Name
					}
				}
			})
			// Compaction moves the search entries into small blocks meanwhile.
			sweepers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, _, err := ranking.CompactIndexStep(ctx, s, "r", 0, 8, 0, 64, 64); err != nil {
						errs <- err
						return
					}
				}
			})
			workers.Go(func() {
				for _, k := range kills {
					p := cal.PeriodAt(hourView, hours[k])
					_, err := rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
						for _, e := range []string{"hour:" + p.ID, "hour@team=a:" + p.ID, "hour@team=b:" + p.ID} {
							tx.Del(ctx, prefix+"z:"+e)
							tx.ZAdd(ctx, prefix+"k", redis.Z{Score: 1, Member: e})
						}
						return nil
					})
					if err != nil {
						errs <- err
						return
					}
				}
			})
			workers.Wait()
			close(stop)
			sweepers.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}

			live := func() map[string]bool {
				out := map[string]bool{}
				entries, err := rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: prefix + "k", Start: "(" + fmt.Sprint(now.UnixMilli()), Stop: "+inf", ByScore: true}).Result()
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					ms, err := rdb.ZRange(ctx, prefix+"z:"+e, 0, -1).Result()
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range ms {
						out[m] = true
					}
				}
				return out
			}
			check := func(quiet bool) {
				t.Helper()
				alive := live()
				for m, name := range last {
					tr := memberTraces(t, rdb, prefix, m)
					if alive[m] {
						got, err := rdb.HGet(ctx, prefix+"n", m).Result()
						if err != nil || got != name || len(tr) != 6 {
							t.Errorf("%s has a live score but name %q (%v), want %q; traces %q", m, got, err, name, tr)
						}
					} else if quiet && len(tr) != 0 {
						t.Errorf("%s has no live score but %q", m, tr)
					}
				}
			}
			check(false)
			mustSweepCycles(t, s, 1)
			check(true)
		})
	}
}
