package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

func TestSearchFold(t *testing.T) {
	for in, want := range map[string]string{
		"Élodie": "elodie", "ÉLODIE": "elodie", "Łukasz": "łukasz", "Дмитрий": "дмитрии", // й is и with a breve, dropped like é's accent (as ё → е)
		"ДМИТРИЙ": "дмитрии", "王小明": "王小明", "Σωκράτης": "σωκρατησ", "Straße": "strasse",
		"ｆｕｌｌ": "full", "Zoë O'Neil": "zoe o'neil",
	} {
		if got := ranking.SearchFold(in); got != want {
			t.Errorf("fold %q = %q, want %q", in, got, want)
		}
	}
}

// nameParts build names in several scripts.
var nameParts = []string{"Élodie", "Eloïse", "Łukasz", "Luka", "Дмитрий", "Дарья", "王小明", "王芳", "李娜", "Σωκράτης", "Sophie", "Søren", "José", "Jose", "Zoë", "Ábel", "Ōta", "Mbappé", "Chloé", "Nguyễn"}

// TestSearchMembers: 100,000 members (2,000 on miniredis) with names in
// several scripts; every prefix finds what a brute-force scan of the
// folded names and ids finds (up to 20, in folded order, each member
// once); renames and removals leave the index.
func TestSearchMembers(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range []struct {
		Name   string
		n      int
		Client func(t *testing.T) redis.UniversalClient
	}{
		{"miniredis", 2000, func(t *testing.T) redis.UniversalClient { _, rdb := MustMiniredis(t, time.Now()); return rdb }},
		// Enough members that a common prefix has more entries than the
		// script reads (4 pages), as on a large board.
		{"redis", 20000, func(t *testing.T) redis.UniversalClient { return redistest.Client(t) }},
	} {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			s := newStore(t, be.Client(t), MustConfig(t, "boards: [{id: g, views: [all]}]\n"), nil)
			r := rand.New(rand.NewPCG(3, 4))
			names := map[string]string{}
			var batch []ranking.Event
			flush := func() {
				if _, err := s.Apply(ctx, "g", batch, ranking.ApplyOptions{}); err != nil {
					t.Fatal(err)
				}
				batch = batch[:0]
			}
			for i := range be.n {
				m := fmt.Sprintf("u%06d", i)
				ev := ranking.Event{Member: m, Value: 1}
				if i%5 != 0 { // some members have no name
					ev.Name = nameParts[r.IntN(len(nameParts))] + " " + nameParts[r.IntN(len(nameParts))]
					names[m] = ev.Name
				}
				batch = append(batch, ev)
				if len(batch) == 1000 {
					flush()
				}
			}
			if len(batch) > 0 {
				flush()
			}
			folded := map[string]string{} // member -> its folded name
			for m, n := range names {
				folded[m] = ranking.SearchFold(n)
			}
			brute := func(q string) []ranking.MemberName {
				f := ranking.SearchFold(q)
				type hit struct{ key, member string }
				var hits []hit
				for i := range be.n {
					m := fmt.Sprintf("u%06d", i)
					if strings.HasPrefix(m, f) { // ids here are already folded
						hits = append(hits, hit{m + "\x00" + m, m})
					}
					if n, ok := folded[m]; ok && strings.HasPrefix(n, f) {
						hits = append(hits, hit{n + "\x00" + m, m})
					}
				}
				slices.SortFunc(hits, func(a, b hit) int { return strings.Compare(a.key, b.key) })
				var out []ranking.MemberName
				seen := map[string]bool{}
				for _, h := range hits {
					if !seen[h.member] && len(out) < ranking.MaxSearchResults {
						seen[h.member] = true
						out = append(out, ranking.MemberName{Member: h.member, Name: names[h.member]})
					}
				}
				return out
			}
			for _, q := range []string{"elo", "ÉLO", "Eloï", "łu", "ЛУ", "дм", "ДАРЬЯ", "王", "王小", "σωκ", "so", "sø", "jose", "JOSÉ", "zoe", "u00001", "U0000", "mbappe ch", "nguyên", "x", "Élodie Luka"} {
				got, err := s.SearchMembers(ctx, "g", q)
				if err != nil {
					t.Fatal(err)
				}
				if want := brute(q); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("q %q:\n got %v\nwant %v", q, got, want)
				}
			}
			// A rename leaves the old name's entry; a removal leaves all.
			if _, err := s.Write(ctx, "g", ranking.Event{Member: "u000001", Value: 1, Name: "Quentin Zed"}); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.SearchMembers(ctx, "g", "quentin"); len(got) != 1 || got[0] != (ranking.MemberName{Member: "u000001", Name: "Quentin Zed"}) {
				t.Errorf("renamed: %v", got)
			}
			old := ranking.SearchFold(names["u000001"])
			for _, m := range mustSearch(t, s, old) {
				if m.Member == "u000001" {
					t.Errorf("the old name %q still finds u000001", old)
				}
			}
			if ok, err := s.RemoveMember(ctx, "g", "u000001"); err != nil || !ok {
				t.Fatal(ok, err)
			}
			if got := mustSearch(t, s, "quentin"); len(got) != 0 {
				t.Errorf("removed member found by name: %v", got)
			}
			if got := mustSearch(t, s, "u000001"); len(got) != 0 {
				t.Errorf("removed member found by id: %v", got)
			}
			for _, bad := range []string{"", strings.Repeat("a", 65), "a\x01", "\u0301"} {
				if _, err := s.SearchMembers(ctx, "g", bad); ranking.ErrorCode(err) != ranking.EINVALID {
					t.Errorf("q %q: %v", bad, err)
				}
			}
		})
	}
}

func mustSearch(t *testing.T, s *ranking.Store, q string) []ranking.MemberName {
	t.Helper()
	got, err := s.SearchMembers(context.Background(), "g", q)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestIndexMemberIDs: members written before the index existed become
// findable by id once IndexMemberIDs ran; a removed member that comes back
// is findable again.
func TestIndexMemberIDs(t *testing.T) {
	ctx := context.Background()
	_, rdb := MustMiniredis(t, time.Now())
	s := newStore(t, rdb, MustConfig(t, "boards: [{id: g, views: [day, all]}]\n"), nil)
	for _, m := range []string{"alpha", "alps", "beta"} {
		if _, err := s.Write(ctx, "g", ranking.Event{Member: m, Value: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustSearch(t, s, "alp"); len(got) != 2 {
		t.Fatalf("indexed on write: %v", got)
	}
	// As data from before the index: no entries.
	if err := rdb.Del(ctx, s.Prefix()+"{g}:ni").Err(); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, s, "alp"); len(got) != 0 {
		t.Fatalf("after dropping the index: %v", got)
	}
	if err := s.IndexMemberIDs(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, s, "alp"); fmt.Sprint(got) != "[{alpha } {alps }]" {
		t.Fatalf("after IndexMemberIDs: %v", got)
	}
	if ok, err := s.RemoveMember(ctx, "g", "beta"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if got := mustSearch(t, s, "beta"); len(got) != 0 {
		t.Fatalf("removed: %v", got)
	}
	if _, err := s.Write(ctx, "g", ranking.Event{Member: "beta", Value: 2}); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, s, "beta"); len(got) != 1 {
		t.Fatalf("back after removal: %v", got)
	}
}
