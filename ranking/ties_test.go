package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

// TestTiesInByteOrder: members with equal codes are ordered by id in byte
// order in every read (page, member list, CSV rows, a card's neighbours, a
// recorded result), whatever the server's locale: the real Redis servers
// of the tests run under en_US.UTF-8, where Lua's < puts "alice" before
// "Zed". Expected orders come from the reference model.
func TestTiesInByteOrder(t *testing.T) {
	ranking.GuardKeys(t)
	idSets := []struct {
		name string
		ids  []string
	}{
		{"alice Zed bob", []string{"alice", "Zed", "bob"}},
		{"mixed", []string{"alice", "Zed", "bob", "Émile", "émile", "Ärger", "zoë", "_x", "Z9", "a-b", "ab", "a",
			"B", "ß", "日本", "élan", "Elan", "0a", "~", "Ωmega", "ómar", "Omar", "Ab", "aB"}},
	}
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			rdb := be.Client(t)
			text := "boards:\n"
			for _, ties := range []string{"shared", "first"} {
				for k := range idSets {
					text += fmt.Sprintf("  - {id: %s%d, ties: %s, views: [hour, all], keep: 3, lateness: 0s, results_top: 30, results_keep: 2}\n", ties, k, ties)
				}
			}
			cfg := MustConfig(t, text)
			s := newStore(t, rdb, cfg, nil)
			r := rand.New(rand.NewPCG(23, 8))
			for _, ties := range []string{"shared", "first"} {
				for k, set := range idSets {
					t.Run(ties+"/"+set.name, func(t *testing.T) {
						b, _ := cfg.Board(fmt.Sprintf("%s%d", ties, k))
						checkTiesInByteOrder(t, ctx, s, rdb, cfg, b, set.ids, r)
					})
				}
			}
		})
	}
}

// checkTiesInByteOrder writes ids with one score in one batch (one
// instant: ties first ties them too), then reads them every way.
func checkTiesInByteOrder(t *testing.T, ctx context.Context, s *ranking.Store, rdb redis.UniversalClient,
	cfg *ranking.Config, b *ranking.Board, ids []string, r *rand.Rand) {
	t.Helper()
	var evs []ranking.Event
	for _, id := range ids {
		evs = append(evs, ranking.Event{Member: id, Value: 5})
	}
	res, err := s.Apply(ctx, b.ID, evs, ranking.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := res[0].At
	for i, rr := range res {
		if rr.Err != nil || !rr.At.Equal(now) {
			t.Fatalf("event %d: %v at %v, want the batch's one instant %v", i, rr.Err, rr.At, now)
		}
	}
	mb := newModelBoard(cfg, b)
	for _, ev := range evs {
		if _, code := mb.apply(ev, now.UnixMilli(), now.UnixMilli()); code != "" {
			t.Fatalf("model refuses %v: %s", ev, code)
		}
	}
	var want []string
	for _, mv := range mb.views {
		if mv.view.Name == "all" {
			for _, e := range mb.sorted(mv, "all") {
				want = append(want, e.member)
			}
		}
	}
	if !slices.IsSorted(want) || len(want) != len(ids) {
		t.Fatalf("the model's order %q is not byte order", want)
	}

	page, err := s.Page(ctx, b.ID, "all", ranking.PageQuery{Limit: ranking.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if got := members(page.Entries); !slices.Equal(got, want) {
		t.Fatalf("page %q, want %q", got, want)
	}

	shuffled := slices.Clone(ids)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	list, err := s.Members(ctx, b.ID, "all", shuffled, ranking.MembersQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(withoutPrev(list.Entries), withoutPrev(page.Entries)) {
		t.Fatalf("member list %q, want %q (%v)", members(list.Entries), want, list.Entries)
	}

	rows, err := s.Page(ctx, b.ID, "all", ranking.PageQuery{Limit: ranking.MaxLimit, NoPrevRanks: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(withoutPrev(rows.Entries), withoutPrev(page.Entries)) {
		t.Fatalf("CSV rows %q, want %q", members(rows.Entries), want)
	}

	mid := want[len(want)/2]
	card, err := s.Member(ctx, b.ID, "all", mid, ranking.MemberQuery{Around: len(want)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(card.Around, withoutPrev(page.Entries)) {
		t.Fatalf("card of %s: neighbours %q, want %q", mid, members(card.Around), want)
	}

	// A recorded result: on a real clock no hour with scores is final, so
	// the previous hour is given this hour's scores and registered by hand.
	v, _ := b.View("hour")
	cur := cfg.Calendar.PeriodAt(v, now)
	prev := cfg.Calendar.Prev(v, cur).ID
	pre := s.Prefix() + "{" + b.ID + "}:"
	flat, err := rdb.ZRangeWithScores(ctx, pre+"z:hour:"+cur.ID, 0, -1).Result()
	if err != nil || len(flat) != len(ids) {
		t.Fatalf("current hour %v, %v", flat, err)
	}
	if err := rdb.ZAdd(ctx, pre+"z:hour:"+prev, flat...).Err(); err != nil {
		t.Fatal(err)
	}
	exp := rdb.ZScore(ctx, pre+"k", "hour:"+cur.ID).Val()
	if err := rdb.ZAdd(ctx, pre+"k", redis.Z{Score: exp, Member: "hour:" + prev}).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.RecordResult(ctx, b.ID, "hour", prev); err != nil || !ok {
		t.Fatalf("record %s: %v, %v", prev, ok, err)
	}
	rec, _ := mustResult(t, s, b.ID, "hour", prev)
	var got []string
	for _, e := range rec.Entries {
		got = append(got, e.Member)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("recorded result %q, want %q", got, want)
	}
}

// members lists the entries' member ids.
func members(es []ranking.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Member
	}
	return out
}
