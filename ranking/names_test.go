package ranking_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
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

// TestSearchFoldShortcuts: ASCII text, folded without the chain, and
// any text, folded by pooled chains from several goroutines at once,
// fold as a fresh chain folds them.
func TestSearchFoldShortcuts(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	var texts []string
	for c := range 128 {
		texts = append(texts, string(rune(c)), "Ab"+string(rune(c))+"Z")
	}
	for range 2000 {
		b := make([]byte, rnd.IntN(24))
		for i := range b {
			b[i] = byte(rnd.IntN(128))
		}
		texts = append(texts, string(b))
	}
	for range 2000 {
		var sb strings.Builder
		for range 1 + rnd.IntN(4) {
			sb.WriteString(nameParts[rnd.IntN(len(nameParts))])
			sb.WriteByte(byte('A' + rnd.IntN(26)))
		}
		texts = append(texts, sb.String(), "\xff"+sb.String())
	}
	want := make([]string, len(texts))
	for i, s := range texts {
		want[i] = ranking.SearchFoldChain(s)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(texts); i += 2 {
				if got := ranking.SearchFold(texts[i]); got != want[i] {
					t.Errorf("fold %q = %q, a fresh chain gives %q", texts[i], got, want[i])
				}
			}
		})
	}
	wg.Wait()
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
			// Compaction has moved the first half of the entries into
			// blocks: searches merge both.
			for {
				moved, left, err := ranking.CompactIndexStep(ctx, s, "g", 0, 500, 0, 1024, 64)
				if err != nil {
					t.Fatal(err)
				}
				if moved == 0 || left < be.n*9/10 {
					break
				}
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
	// As data from before the index: no entries (neither in ni nor in
	// the blocks).
	if err := rdb.Del(ctx, s.Prefix()+"{g}:ni", s.Prefix()+"{g}:nb", s.Prefix()+"{g}:nx").Err(); err != nil {
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

// compactAll runs compaction steps of board g until ni is empty, cutting
// blocks above blockBytes.
func compactAll(t *testing.T, s *ranking.Store, blockBytes int) {
	t.Helper()
	for {
		moved, left, err := ranking.CompactIndexStep(context.Background(), s, "g", 0, 500, 0, blockBytes, 64)
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 || moved == 0 {
			return
		}
	}
}

// TestSearchIDsAfterRemovals: removals thin the index's blocks, which
// then join their neighbours; every id left is still found, in order.
func TestSearchIDsAfterRemovals(t *testing.T) {
	ranking.GuardKeys(t)
	ctx := context.Background()
	s := newStore(t, redistest.Client(t), MustConfig(t, "boards: [{id: g, views: [all]}]\n"), nil)
	var batch []ranking.Event
	for i := range 1000 {
		batch = append(batch, ranking.Event{Member: fmt.Sprintf("p%04d", i), Value: 1})
	}
	if _, err := s.Apply(ctx, "g", batch, ranking.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	compactAll(t, s, 1024)
	var left []string
	for i := range 1000 {
		m := fmt.Sprintf("p%04d", i)
		if i%37 == 0 {
			left = append(left, m)
			continue
		}
		if _, err := s.RemoveMember(ctx, "g", m); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.SearchMembers(ctx, "g", "p")
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for _, g := range got {
		members = append(members, g.Member)
	}
	if want := left[:ranking.MaxSearchResults]; !slices.Equal(members, want) {
		t.Errorf("after removals:\n got %v\nwant %v", members, want)
	}
}

// TestSearchIndexModel: random arrivals, returns, renames and removals of
// members whose ids and names share long prefixes, with compaction steps
// of random size at random points into small blocks, split and join the
// blocks many times; after each round ni and the blocks hold exactly the
// live entries, every block only entries between its bound and the next,
// and every prefix search answers what a sort of the live entries does.
func TestSearchIndexModel(t *testing.T) {
	for _, tc := range []struct{ name, config string }{
		{"all view", "boards: [{id: g, views: [all]}]\n"},
		{"no all view", "boards: [{id: g, views: [day]}]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ranking.GuardKeys(t)
			ctx := context.Background()
			rdb := redistest.Client(t)
			s := newStore(t, rdb, MustConfig(t, tc.config), nil)
			rnd := rand.New(rand.NewPCG(28, 2))
			stems := []string{"aa", "ab", "a日", "øb", "b-", "Éa"}
			letters := []string{"a", "b", "ø", "日", "-", "0", "1"}
			text := func(stem string) string {
				var b strings.Builder
				b.WriteString(stem)
				for range 4 + rnd.IntN(40) {
					b.WriteString(letters[rnd.IntN(len(letters))])
				}
				return b.String()
			}
			// Names start like ids ("AB…" folds to "ab…") so that both
			// kinds of entry interleave in the blocks.
			newName := func() string { return strings.ToUpper(text(stems[rnd.IntN(len(stems))])) + " n" }
			live := map[string]string{} // member -> its display name ("" for none)
			var gone []string
			compact := func() {
				if rnd.IntN(3) > 0 {
					return
				}
				for range 1 + rnd.IntN(2) {
					if _, _, err := ranking.CompactIndexStep(ctx, s, "g", 0, 1+rnd.IntN(80), rnd.IntN(60), 48+rnd.IntN(200), 1+rnd.IntN(6)); err != nil {
						t.Fatal(err)
					}
				}
			}
			for round := range 8 {
				var batch []ranking.Event
				for range 400 {
					m := text(stems[rnd.IntN(len(stems))])
					if len(gone) > 0 && rnd.IntN(5) == 0 {
						m = gone[rnd.IntN(len(gone))] // back after its removal
					} else if len(live) > 0 && rnd.IntN(4) == 0 {
						for l := range live { // a write of a member already there
							m = l
							break
						}
					}
					ev := ranking.Event{Member: m, Value: 1}
					if rnd.IntN(2) == 0 {
						ev.Name = newName()
						if old := live[m]; old != "" && rnd.IntN(3) == 0 {
							ev.Name = old // the same name again
						}
					}
					if _, ok := live[m]; !ok || ev.Name != "" {
						live[m] = ev.Name
					}
					batch = append(batch, ev)
					if len(batch) == 100 {
						if _, err := s.Apply(ctx, "g", batch, ranking.ApplyOptions{}); err != nil {
							t.Fatal(err)
						}
						batch = batch[:0]
						compact()
					}
				}
				ids := slices.Sorted(maps.Keys(live))
				rnd.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
				for k, m := range ids[:len(ids)*(3+round%3)/10] {
					if ok, err := s.RemoveMember(ctx, "g", m); err != nil || !ok {
						t.Fatal(m, ok, err)
					}
					delete(live, m)
					gone = append(gone, m)
					if k%20 == 0 {
						compact()
					}
				}
				entries := searchEntries(live)
				checkIndex(t, rdb, s.Prefix()+"{g}:", entries)
				queries := map[string]bool{"a": true, "ø": true, "É": true, "aa": true, "z": true}
				for m, name := range live {
					if len(queries) >= 80 {
						break
					}
					for _, w := range []string{m, name} {
						if w == "" {
							continue
						}
						r := []rune(w)
						queries[string(r[:min(len(r), 1+rnd.IntN(8))])] = true
					}
				}
				for q := range queries {
					got := mustSearch(t, s, q)
					var members []string
					for _, g := range got {
						members = append(members, g.Member)
					}
					if want := searchModel(entries, q); !slices.Equal(members, want) {
						t.Fatalf("round %d, q %q:\n got %q\nwant %q", round, q, members, want)
					}
				}
			}
		})
	}
}

// searchEntries is the sorted search entries of the live members (member
// -> display name): one for the id, one for a name.
func searchEntries(live map[string]string) []string {
	var out []string
	for m, name := range live {
		out = append(out, ranking.SearchFold(m)+"\x00"+m)
		if name != "" {
			out = append(out, ranking.SearchFold(name)+"\x00"+m)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// searchModel is the first MaxSearchResults members by their first entry
// (of the sorted entries) starting with q folded.
func searchModel(entries []string, q string) []string {
	fq := ranking.SearchFold(q)
	var out []string
	seen := map[string]bool{}
	for _, e := range entries {
		_, m, _ := strings.Cut(e, "\x00")
		if strings.HasPrefix(e, fq) && !seen[m] && len(out) < ranking.MaxSearchResults {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// checkIndex: ni and the blocks together hold exactly want (sorted), the
// blocks each entry once; every block is "\n"-delimited and non-empty, its
// entries lie between its bound and the next, and nx lists exactly the
// bounds but "".
func checkIndex(t *testing.T, rdb redis.UniversalClient, base string, want []string) {
	t.Helper()
	ctx := context.Background()
	blocks, err := rdb.HGetAll(ctx, base+"nb").Result()
	if err != nil {
		t.Fatal(err)
	}
	bounds, err := rdb.ZRange(ctx, base+"nx", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for b := range blocks {
		if b != "" {
			fields = append(fields, b)
		}
	}
	slices.Sort(fields)
	if !slices.Equal(fields, bounds) {
		t.Fatalf("nx %q, nb's bounds %q", bounds, fields)
	}
	all := append([]string{""}, bounds...)
	var entries []string
	for i, b := range all {
		bl, ok := blocks[b]
		if !ok {
			continue
		}
		if len(bl) < 2 || bl[0] != '\n' || bl[len(bl)-1] != '\n' {
			t.Fatalf("block %q: %q", b, bl)
		}
		for _, e := range strings.Split(bl[1:len(bl)-1], "\n") {
			if e < b || (i+1 < len(all) && e >= all[i+1]) {
				t.Fatalf("entry %q in block %q, next bound %q", e, b, all[min(i+1, len(all)-1)])
			}
			entries = append(entries, e)
		}
	}
	slices.Sort(entries)
	if n := len(entries); n != len(slices.Compact(slices.Clone(entries))) {
		t.Fatalf("an entry twice in the blocks")
	}
	ni, err := rdb.ZRange(ctx, base+"ni", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	entries = append(entries, ni...)
	slices.Sort(entries)
	entries = slices.Compact(entries)
	if !slices.Equal(entries, want) {
		t.Fatalf("%d entries in ni and the blocks, want %d", len(entries), len(want))
	}
}

// TestSearchRenameFromID: a display name whose folded form is the
// member's folded id shares the id's search entry; renaming the member
// away from it keeps the member findable by its id, whether the entry is
// still in ni or already packed into the blocks.
func TestSearchRenameFromID(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range []struct {
		Name   string
		Client func(t *testing.T) redis.UniversalClient
	}{
		{"miniredis", func(t *testing.T) redis.UniversalClient { _, rdb := MustMiniredis(t, time.Now()); return rdb }},
		{"redis", func(t *testing.T) redis.UniversalClient { return redistest.Client(t) }},
	} {
		for _, packed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/packed=%v", be.Name, packed), func(t *testing.T) {
				ctx := context.Background()
				s := newStore(t, be.Client(t), MustConfig(t, "boards: [{id: g, views: [all]}]\n"), nil)
				apply := func(evs ...ranking.Event) {
					t.Helper()
					res, err := s.Apply(ctx, "g", evs, ranking.ApplyOptions{})
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range res {
						if r.Err != nil {
							t.Fatal(r.Err)
						}
					}
				}
				search := func(q string) string {
					t.Helper()
					got, err := s.SearchMembers(ctx, "g", q)
					if err != nil {
						t.Fatal(err)
					}
					return fmt.Sprint(got)
				}
				apply(ranking.Event{Member: "alice", Value: 1, Name: "Alice"}, ranking.Event{Member: "bob", Value: 1})
				if packed {
					compactAll(t, s, 1024)
				}
				if got, want := search("ali"), fmt.Sprint([]ranking.MemberName{{Member: "alice", Name: "Alice"}}); got != want {
					t.Fatalf("before the rename: search ali = %s, want %s", got, want)
				}
				apply(ranking.Event{Member: "alice", Value: 1, Name: "Zed"})
				if got, want := search("ali"), fmt.Sprint([]ranking.MemberName{{Member: "alice", Name: "Zed"}}); got != want {
					t.Errorf("after the rename: search ali = %s, want %s (found by id)", got, want)
				}
				if got, want := search("zed"), fmt.Sprint([]ranking.MemberName{{Member: "alice", Name: "Zed"}}); got != want {
					t.Errorf("after the rename: search zed = %s, want %s", got, want)
				}
				// And back: the name again equal to the id, then away again.
				apply(ranking.Event{Member: "alice", Value: 1, Name: "ALICE"})
				apply(ranking.Event{Member: "alice", Value: 1, Name: "Yves"})
				if got, want := search("ali"), fmt.Sprint([]ranking.MemberName{{Member: "alice", Name: "Yves"}}); got != want {
					t.Errorf("after renaming back and away: search ali = %s, want %s", got, want)
				}
				if got := search("zed"); got != "[]" {
					t.Errorf("the old name Zed is still found: %s", got)
				}
			})
		}
	}
}
