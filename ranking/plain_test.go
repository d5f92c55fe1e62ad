package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
)

// TestPlainPathMatchesGeneric holds apply.lua's plain path (apply_plain) to
// its generic plan: two stores on one miniredis, one of them made to plan
// every event in full, take the same random batches at the same clock on
// boards of every policy, tie rule and order, with more members than the
// overtakes' top (so its bound is read, kept and dropped), ids, retries,
// names, late and refused events, with and without ranks; on boards with
// segments, events carry stable values (mirrored), other values or none;
// on league boards, events in the open round seat new members as rounds
// open and close.
// Every reply and, every few batches, every key (sorted sets with their
// codes, hashes, lists, strings and expiries) must be the same. In runs,
// most events are at now and carry no id, so that batches hold runs of
// them, which the plain store applies view by view (apply_run) when none
// can be refused, and event by event when one could.
func TestPlainPathMatchesGeneric(t *testing.T) {
	t.Parallel()
	late := 30 * time.Hour
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		plainMatchesGeneric(t, plainModelConfig("Europe/Paris", late), late, false)
	})
	t.Run("runs", func(t *testing.T) {
		t.Parallel()
		plainMatchesGeneric(t, plainModelConfig("Europe/Paris", late), late, true)
	})
	t.Run("segments", func(t *testing.T) {
		t.Parallel()
		plainMatchesGeneric(t, modelConfig("Europe/Paris", late), late, false)
	})
	t.Run("leagues", func(t *testing.T) {
		t.Parallel()
		// l-narrow's rounds reach its bounds, where a round's score is
		// held while the views take the event.
		narrow := "  - {id: l-narrow, min_score: 0, max_score: 3, views: [day, all], lateness: 3h,\n" +
			"     league: {cycle: hour, tiers: [a, b], cohort_size: 5, promote: 2, demote: 2}}\n"
		plainMatchesGeneric(t, leagueModelConfig+narrow, 3*time.Hour, false)
	})
}

func plainMatchesGeneric(t *testing.T, cfgText string, late time.Duration, runs bool) {
	m := miniredis.RunT(t)
	loc, _ := time.LoadLocation("Europe/Paris")
	clock := time.Date(2026, 3, 28, 22, 0, 0, 0, loc) // across a DST change, a week and a month end
	m.SetTime(clock)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	cfg, err := ranking.ParseConfig([]byte(cfgText))
	if err != nil {
		t.Fatal(err)
	}
	plain := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: "a:"})
	generic := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: "b:"})
	ranking.UseGenericApply(generic)
	const counter = "runs-counted"
	if runs {
		ranking.CountApplyRuns(plain, counter)
	}

	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 9))
	members := []string{"Zed", "zed", "ünï", "a b", "0"}
	for i := range 300 {
		members = append(members, fmt.Sprintf("m%03d", i))
	}
	var ids []ranking.Event
	event := func(b *ranking.Board) ranking.Event {
		ev := ranking.Event{Member: members[rng.IntN(len(members))]}
		scale := int64(1)
		for range b.Decimals {
			scale *= 10
		}
		switch {
		case b.Update == ranking.Increment && b.Max > 1e9:
			ev.Value = int64(rng.IntN(4)) * 3_000_000_000
		case b.Update == ranking.Increment:
			ev.Value = int64(rng.IntN(9)-3) * scale / 2
		default:
			ev.Value = b.Min + (b.Max-b.Min)*int64(rng.IntN(5))/4
			if rng.IntN(50) == 0 {
				ev.Value = b.Max + 1
			}
		}
		now := 5
		if runs {
			now = 9
		}
		switch k := rng.IntN(10); {
		case k < now:
		case k < 9:
			ev.At = clock.Add(-time.Duration(rng.Int64N(int64(late - time.Minute)))).Truncate(time.Second)
		default:
			ev.At = clock.Add(-late - time.Hour) // refused
		}
		if rng.IntN(4) == 0 && (!runs || rng.IntN(3) == 0) {
			ev.Name = "Name " + ev.Member
		}
		if len(b.Segments) > 0 {
			// Most members nearly always carry the same values (their
			// events are mirrored), the others any or none.
			if ev.Member[0] == 'm' && ev.Member[3]%3 != 0 && rng.IntN(40) != 0 {
				ev.Segments = map[string]string{
					"country": []string{"FR", "DE", "us"}[int(ev.Member[3]-'0')%3],
					"team":    []string{"red", "blue"}[int(ev.Member[2]-'0')%2],
				}
			} else if k := rng.IntN(4); k > 0 {
				ev.Segments = map[string]string{}
				if k&1 != 0 {
					ev.Segments["country"] = []string{"FR", "DE", "us"}[rng.IntN(3)]
				}
				if k&2 != 0 {
					ev.Segments["team"] = []string{"red", "blue"}[rng.IntN(2)]
				}
			}
		}
		if rng.IntN(6) == 0 && (!runs || rng.IntN(5) == 0) {
			if len(ids) > 0 && rng.IntN(3) == 0 {
				prev := ids[rng.IntN(len(ids))]
				if rng.IntN(2) == 0 {
					return prev
				}
				ev.ID = prev.ID
			} else {
				ev.ID = fmt.Sprintf("e%d", rng.Int64())
				ids = append(ids, ev)
			}
		}
		return ev
	}

	// Under the race detector a quarter of the batches, each a four times
	// longer step of the clock: the same boundaries are crossed.
	lists := 0
	for batch := range 600 / raceScale {
		b := cfg.Boards[rng.IntN(len(cfg.Boards))]
		evs := make([]ranking.Event, 1+rng.IntN(60))
		for i := range evs {
			evs[i] = event(b)
		}
		opts := ranking.ApplyOptions{NoRanks: batch%3 != 0}
		got, err := plain.Apply(ctx, b.ID, evs, opts)
		if err != nil {
			t.Fatal(err)
		}
		want, err := generic.Apply(ctx, b.ID, evs, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range evs {
			g, w := got[i], want[i]
			if fmt.Sprint(g.Err) != fmt.Sprint(w.Err) || g.Duplicate != w.Duplicate || !g.At.Equal(w.At) || !slices.Equal(g.Views, w.Views) {
				t.Fatalf("batch %d board %s event %+v:\nplain   %+v\ngeneric %+v", batch, b.ID, evs[i], g, w)
			}
		}
		if batch%50 == 49 {
			lists += sameKeys(t, rdb, "a:", "b:")
		}
		clock = clock.Add(time.Duration(rng.IntN(25*raceScale)) * time.Minute)
		m.SetTime(clock)
	}
	lists += sameKeys(t, rdb, "a:", "b:")
	if lists == 0 {
		t.Fatal("no overtakes list was compared")
	}
	if runs {
		got := rdb.HGetAll(ctx, counter).Val()
		if got["run"] == "" || got["refused"] == "" {
			t.Fatalf("runs applied view by view %q, turned back %q: want some of both", got["run"], got["refused"])
		}
		t.Logf("runs applied view by view %s, turned back %s", got["run"], got["refused"])
	}
}

// sameKeys fails unless the keys under prefix a and under prefix b are the
// same keys with the same types, contents and expiries; it returns how
// many lists it compared.
func sameKeys(t *testing.T, rdb *redis.Client, a, b string) (lists int) {
	t.Helper()
	ctx := context.Background()
	ka, err := rdb.Keys(ctx, a+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	kb, err := rdb.Keys(ctx, b+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for i := range kb {
		kb[i] = a + strings.TrimPrefix(kb[i], b)
	}
	slices.Sort(ka)
	slices.Sort(kb)
	if !slices.Equal(ka, kb) {
		t.Fatalf("keys differ:\nplain   %q\ngeneric %q", ka, kb)
	}
	dump := func(k string) string {
		typ := rdb.Type(ctx, k).Val()
		var v any
		switch typ {
		case "zset":
			v = rdb.ZRangeWithScores(ctx, k, 0, -1).Val()
		case "hash":
			v = rdb.HGetAll(ctx, k).Val()
		case "list":
			v = rdb.LRange(ctx, k, 0, -1).Val()
		case "string":
			v = rdb.Get(ctx, k).Val()
		default:
			t.Fatalf("key %s has type %s", k, typ)
		}
		return fmt.Sprintf("%s %v ttl %v", typ, v, rdb.PTTL(ctx, k).Val())
	}
	for _, k := range ka {
		if rdb.Type(ctx, k).Val() == "list" {
			lists++
		}
		if x, y := dump(k), dump(b+strings.TrimPrefix(k, a)); x != y {
			t.Fatalf("key %s differs:\nplain   %s\ngeneric %s", k, x, y)
		}
	}
	return lists
}
