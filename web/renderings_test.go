package web_test

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// TestRenderingsAgree: on random boards (order, update policy, decimals,
// ties, zones, one shard or three; a rolling window on increment boards)
// loaded with random scores, ties included, every way of reading the
// current period tells the same standings as a brute-force model (on a
// board with segments, as the segment's JSON pages, in rank order): the
// JSON pages at random offsets and limits, the CSV export (more rows than
// one of its chunks), member lists, rank cards (rank, score, total,
// neighbours) and the board page's rows on its first, second and last page.
// Redis's clock stands still, so equal scores tie for the whole run and
// rank by member id. Each run names its seed; RENDER_SEED=N replays it.
func TestRenderingsAgree(t *testing.T) {
	for run := range 6 {
		seed := rand.Uint64()
		if s := os.Getenv("RENDER_SEED"); s != "" {
			seed, _ = strconv.ParseUint(s, 10, 64)
		}
		rng := rand.New(rand.NewPCG(seed, 0))
		b := randomBoard(rng, run)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Log(b.yaml)
			f := MustFixtureOf(t, b.yaml, web.Options{WriteRate: -1})
			c, err := ranking.ParseConfig([]byte(b.yaml))
			if err != nil {
				t.Fatal(err)
			}
			cfg, _ := c.Board("b")
			want := b.load(t, f, rng, cfg)
			for _, view := range b.views {
				for _, seg := range append([]string{""}, b.segments...) {
					got := readPages(t, f, rng, cfg, view, seg)
					if seg == "" {
						if len(got) != len(want) {
							t.Fatalf("%s: %d entries, want %d", view, len(got), len(want))
						}
						for i := range want {
							if got[i] != want[i] {
								t.Fatalf("%s: entry %d is %+v, want %+v", view, i, got[i], want[i])
							}
						}
					} else {
						// A segment board's pages, checked for their ranks,
						// stand for its other renderings.
						checkRanks(t, b, view+" "+seg, got)
					}
					checkCSV(t, f, cfg, view, seg, got)
					checkLists(t, f, rng, cfg, view, seg, got)
					checkCards(t, f, rng, cfg, view, seg, got)
					checkPageRows(t, f, view, seg, got)
				}
			}
		})
	}
}

// renderBoard is a random board and the model of its standings.
type renderBoard struct {
	yaml                   string
	asc, shared, increment bool
	update                 string
	decimals               int
	views                  []string
	segments               []string // the segment=NAME:VALUE reads
	zones                  []renderZone
}

type renderZone struct {
	title string
	top   int
}

func randomBoard(rng *rand.Rand, run int) renderBoard {
	b := renderBoard{asc: rng.IntN(2) == 0, shared: rng.IntN(2) == 0, decimals: rng.IntN(4)}
	b.update = []string{"increment", "best", "latest"}[rng.IntN(3)]
	b.increment = b.update == "increment"
	order, ties := "desc", "first"
	if b.asc {
		order = "asc"
	}
	if b.shared {
		ties = "shared"
	}
	zones := ""
	if rng.IntN(2) == 0 {
		top := 0
		var zs []string
		for i := range 1 + rng.IntN(3) {
			top += 1 + rng.IntN(300)
			title := fmt.Sprintf("Zone %d", i)
			zs = append(zs, fmt.Sprintf("{title: %s, top: %d}", title, top))
			b.zones = append(b.zones, renderZone{title, top})
		}
		zones = "\n    zones: [" + strings.Join(zs, ", ") + "]"
	}
	shards := 1 + 2*(run%2) // one shard, then three
	segments := ""
	if rng.IntN(2) == 0 {
		segments = "\n    segments: [team]"
		b.segments = []string{"team:red", "team:blue"}
	}
	b.views = []string{"week", "all"}
	if b.increment {
		b.views = append(b.views, "7d") // rolling windows take increments only
	}
	b.yaml = fmt.Sprintf(`
boards:
  - id: b
    order: %s
    update: %s
    ties: %s
    decimals: %d
    min_score: -100000
    max_score: 100000
    shards: %d
    views: [%s]%s%s
`, order, b.update, ties, b.decimals, shards, strings.Join(b.views, ", "), zones, segments)
	return b
}

// renderEntry is one entry as every rendering must tell it: the score as
// the board writes it.
type renderEntry struct {
	Rank         int64
	Member, Name string
	Score        string
	Zone         string
}

// load writes random events (1,500 members, a few events each, few
// distinct values so that many tie) and returns the standings they make.
func (b renderBoard) load(t *testing.T, f *fixture, rng *rand.Rand, cfg *ranking.Board) []renderEntry {
	t.Helper()
	const members = 1500
	scores := map[string]int64{}
	names := map[string]string{}
	var events []ranking.Event
	for i := range members {
		m := fmt.Sprintf("m%04d", rng.IntN(members*4/3))
		if i%7 == 0 {
			m = fmt.Sprintf("x%03d", rng.IntN(300)) // ids of another shape
		}
		v := int64(1 + rng.IntN(40))
		if rng.IntN(3) == 0 {
			v = -v
		}
		v *= int64(1 + rng.IntN(3)) // a few distinct values: many ties
		ev := ranking.Event{Member: m, Value: v}
		if len(b.segments) > 0 && rng.IntN(5) > 0 {
			ev.Segments = map[string]string{"team": []string{"red", "blue", "green"}[rng.IntN(3)]}
		}
		if rng.IntN(4) == 0 {
			ev.Name = fmt.Sprintf("Name %d", rng.IntN(50))
			names[m] = ev.Name
		}
		events = append(events, ev)
		old, ok := scores[m]
		switch {
		case b.increment:
			scores[m] = old + v
		case b.update == "latest" || !ok:
			scores[m] = v
		case (v > old) != b.asc && v != old:
			scores[m] = v
		}
	}
	for i := 0; i < len(events); i += ranking.MaxBatch {
		res, err := f.store.Apply(context.Background(), "b", events[i:min(i+ranking.MaxBatch, len(events))], ranking.ApplyOptions{NoRanks: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("load: %s: %v", r.Member, r.Err)
			}
		}
	}
	var ms []string
	for m := range scores {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(x, y string) int {
		c := cmp.Compare(scores[y], scores[x])
		if b.asc {
			c = -c
		}
		if c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	out := make([]renderEntry, len(ms))
	for i, m := range ms {
		rank := int64(i + 1)
		if b.shared && i > 0 && scores[ms[i-1]] == scores[m] {
			rank = out[i-1].Rank
		}
		out[i] = renderEntry{Rank: rank, Member: m, Name: names[m], Score: cfg.FormatScore(scores[m])}
		for _, z := range b.zones {
			if rank <= int64(z.top) {
				out[i].Zone = z.title
				break
			}
		}
	}
	return out
}

type apiEntry struct {
	Rank   int64       `json:"rank"`
	Member string      `json:"member"`
	Name   string      `json:"name"`
	Score  json.Number `json:"score"`
	Zone   *string     `json:"zone"`
}

func (e apiEntry) entry(tb testing.TB, b *ranking.Board) renderEntry {
	tb.Helper()
	v, err := b.ParseScore(e.Score.String())
	if err != nil {
		tb.Fatalf("score %s: %v", e.Score, err)
	}
	out := renderEntry{Rank: e.Rank, Member: e.Member, Name: e.Name, Score: b.FormatScore(v)}
	if e.Zone != nil {
		out.Zone = *e.Zone
	}
	if out.Name == out.Member {
		out.Name = "" // the API names a nameless member by its id
	}
	return out
}

func decode[T any](tb testing.TB, r response) T {
	tb.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("body %q: %v", r.Body, err)
	}
	return v
}

// readPages reads the whole period through the JSON API, a page of random
// size after another.
func readPages(t *testing.T, f *fixture, rng *rand.Rand, b *ranking.Board, view, seg string) []renderEntry {
	t.Helper()
	var out []renderEntry
	for {
		limit := 1 + rng.IntN(400)
		if rng.IntN(4) == 0 {
			limit = ranking.MaxLimit
		}
		pg := decode[struct {
			Total   int64      `json:"total"`
			Entries []apiEntry `json:"entries"`
		}](t, MustOK(t, f.get(t, withSeg(fmt.Sprintf("/api/v1/boards/b/%s?offset=%d&limit=%d", view, len(out), limit), seg))))
		for _, e := range pg.Entries {
			out = append(out, e.entry(t, b))
		}
		if len(pg.Entries) < limit {
			if int64(len(out)) != pg.Total {
				t.Fatalf("%s: total %d, %d entries read", view, pg.Total, len(out))
			}
			return out
		}
	}
}

func checkCSV(t *testing.T, f *fixture, b *ranking.Board, view, seg string, want []renderEntry) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(MustOK(t, f.get(t, withSeg("/boards/b/"+view+".csv", seg))).Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := "rank,member,name,score"
	if len(b.Zones) > 0 {
		head += ",zone"
	}
	if len(rows) != len(want)+1 || strings.Join(rows[0], ",") != head {
		t.Fatalf("%s.csv: %d rows, head %v; want %d and %s", view, len(rows)-1, rows[0], len(want), head)
	}
	for i, w := range want {
		line := []string{strconv.FormatInt(w.Rank, 10), w.Member, w.Name, w.Score}
		if len(b.Zones) > 0 {
			line = append(line, w.Zone)
		}
		if !slices.Equal(rows[i+1], line) {
			t.Fatalf("%s.csv row %d: %v, want %v", view, i+1, rows[i+1], line)
		}
	}
}

// checkLists asks for random member lists (with ids that have no score)
// and checks each against the standings.
func checkLists(t *testing.T, f *fixture, rng *rand.Rand, b *ranking.Board, view, seg string, want []renderEntry) {
	t.Helper()
	at := map[string]int{}
	for i, w := range want {
		at[w.Member] = i
	}
	for range 10 {
		var ids []string
		seen := map[string]bool{}
		for range 1 + rng.IntN(100) {
			id := fmt.Sprintf("m%04d", rng.IntN(2100))
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		var exp []renderEntry
		for _, id := range ids {
			if i, ok := at[id]; ok {
				exp = append(exp, want[i])
			}
		}
		slices.SortFunc(exp, func(x, y renderEntry) int { return cmp.Compare(at[x.Member], at[y.Member]) })
		got := decode[struct {
			Total   int64      `json:"total"`
			Entries []apiEntry `json:"entries"`
		}](t, MustOK(t, f.get(t, withSeg("/api/v1/boards/b/"+view+"?members="+url.QueryEscape(strings.Join(ids, ",")), seg))))
		if got.Total != int64(len(want)) || len(got.Entries) != len(exp) {
			t.Fatalf("%s list of %d ids: total %d, %d entries; want %d and %d", view, len(ids), got.Total, len(got.Entries), len(want), len(exp))
		}
		for i, e := range got.Entries {
			if g := e.entry(t, b); g != exp[i] {
				t.Fatalf("%s list entry %d: %+v, want %+v", view, i, g, exp[i])
			}
		}
	}
}

// checkCards reads the rank cards of random members, first and last
// included, with random neighbours.
func checkCards(t *testing.T, f *fixture, rng *rand.Rand, b *ranking.Board, view, seg string, want []renderEntry) {
	t.Helper()
	picks := []int{0, len(want) - 1}
	for range 20 {
		picks = append(picks, rng.IntN(len(want)))
	}
	for _, i := range picks {
		around := rng.IntN(ranking.MaxAround + 1)
		w := want[i]
		c := decode[struct {
			apiEntry
			Total  int64      `json:"total"`
			Around []apiEntry `json:"around"`
		}](t, MustOK(t, f.get(t, withSeg(fmt.Sprintf("/api/v1/boards/b/%s/members/%s?around=%d", view, w.Member, around), seg))))
		if g := c.entry(t, b); g.Rank != w.Rank || g.Score != w.Score || c.Total != int64(len(want)) {
			t.Fatalf("%s card of %s: rank %d, score %s, total %d; want %d, %s, %d", view, w.Member, g.Rank, g.Score, c.Total, w.Rank, w.Score, len(want))
		}
		exp := want[max(0, i-around):min(len(want), i+around+1)]
		if len(c.Around) != len(exp) {
			t.Fatalf("%s card of %s around %d: %d neighbours, want %d", view, w.Member, around, len(c.Around), len(exp))
		}
		for k, e := range c.Around {
			if g := e.entry(t, b); g != exp[k] {
				t.Fatalf("%s card of %s around %d, entry %d: %+v, want %+v", view, w.Member, around, k, g, exp[k])
			}
		}
	}
}

// checkPageRows checks the board page's rows (rank and member) on its
// first, second and last page.
func checkPageRows(t *testing.T, f *fixture, view, seg string, want []renderEntry) {
	t.Helper()
	last := (len(want) + web.PageSize - 1) / web.PageSize
	for _, page := range []int{1, 2, last} {
		doc := MustOK(t, f.get(t, withSeg(fmt.Sprintf("/boards/b/%s?page=%d", view, page), seg))).Doc(t)
		var got []string
		doc.Find(testid(views.TestRow)).Each(func(_ int, s *goquery.Selection) {
			m, _ := s.Attr("data-member")
			got = append(got, strings.TrimSpace(s.Find(testid(views.TestRank)).Text())+" "+m)
		})
		var exp []string
		for _, w := range want[(page-1)*web.PageSize : min(len(want), page*web.PageSize)] {
			exp = append(exp, strconv.FormatInt(w.Rank, 10)+" "+w.Member)
		}
		if !slices.Equal(got, exp) {
			t.Fatalf("%s page %d rows:\n%v\nwant\n%v", view, page, got, exp)
		}
	}
}

// withSeg adds segment=seg to path's query, unless seg is "".
func withSeg(path, seg string) string {
	if seg == "" {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + "segment=" + url.QueryEscape(seg)
}

// checkRanks checks that entries are in the board's order, ranked as its
// ties say, with the zones their ranks fall in.
func checkRanks(t *testing.T, b renderBoard, what string, es []renderEntry) {
	t.Helper()
	if len(es) == 0 {
		t.Fatalf("%s: no entries", what)
	}
	for i, e := range es {
		rank := int64(i + 1)
		if i > 0 {
			p := es[i-1]
			if p.Score == e.Score && b.shared {
				rank = p.Rank
			}
			if p.Score == e.Score && p.Member >= e.Member {
				t.Fatalf("%s: %+v before %+v", what, p, e)
			}
		}
		zone := ""
		for _, z := range b.zones {
			if rank <= int64(z.top) {
				zone = z.title
				break
			}
		}
		if e.Rank != rank || e.Zone != zone {
			t.Fatalf("%s: entry %d is %+v, want rank %d, zone %q", what, i, e, rank, zone)
		}
	}
}
