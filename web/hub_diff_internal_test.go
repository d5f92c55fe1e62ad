package web

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a-h/templ"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// randomTables is a random workload of one live table: members join,
// score (up and down), change names, tie, leave the top, rank changes
// come and go; the ticker and the caption change now and then.
type randomTables struct {
	rng    *rand.Rand
	board  *ranking.Board
	scores map[string]int64
	names  map[string]string
	moves  map[string]views.Move
	limit  int
	tick   int
}

func newRandomTables(seed uint64, b *ranking.Board, limit int) *randomTables {
	return &randomTables{rng: rand.New(rand.NewPCG(seed, 7)), board: b, scores: map[string]int64{}, names: map[string]string{}, moves: map[string]views.Move{}, limit: limit}
}

var randomMoves = []views.Move{{}, {Kind: "new", Text: "new", Label: "new since last week"}, {Kind: "up", Text: "▲2", Label: "up 2 places since last week"}, {Kind: "down", Text: "▼1", Label: "down 1 place since last week"}, {Kind: "same", Text: "–", Label: "same rank since last week"}}

// step changes a few things and returns the table as a frame shows it.
func (r *randomTables) step(t testing.TB) ([]byte, *tableState) {
	t.Helper()
	r.tick++
	for range r.rng.IntN(6) {
		m := fmt.Sprintf("m%02d", r.rng.IntN(40))
		switch r.rng.IntN(10) {
		case 0:
			r.names[m] = fmt.Sprintf("Name <%d> & \"%d\"", r.rng.IntN(3), r.tick)
		case 1:
			r.moves[m] = randomMoves[r.rng.IntN(len(randomMoves))]
		case 2:
			delete(r.scores, m)
		default:
			r.scores[m] += r.rng.Int64N(5000) - 1500
		}
	}
	type e struct {
		m string
		s int64
	}
	var es []e
	for m, s := range r.scores {
		es = append(es, e{m, s})
	}
	slices.SortFunc(es, func(a, b e) int {
		if a.s != b.s {
			if r.board.Order == ranking.Asc {
				return int(a.s - b.s)
			}
			return int(b.s - a.s)
		}
		if a.m < b.m {
			return -1
		}
		return 1
	})
	if len(es) > r.limit {
		es = es[:r.limit]
	}
	var rows []views.Row
	var raw []int64
	for i, x := range es {
		rank := int64(i + 1)
		if i > 0 && x.s == es[i-1].s {
			rank = rows[i-1].Rank // a tie shares the rank
		}
		name := r.names[x.m]
		if name == "" {
			name = x.m
		}
		rows = append(rows, views.Row{Rank: rank, Member: x.m, Name: name, Score: scoreText(r.board, x.s), CardURL: "/c/" + x.m, Move: r.moves[x.m], Initials: initials(name), Hue: hue(x.m)})
		raw = append(raw, x.s)
	}
	markZoneEnds(r.board, rows) // as web/rows.go:rows marks them
	tb := views.Table{ID: "standings-b-day-100", Period: "2026-11-26", Rows: rows, Caption: fmt.Sprintf("ranks 1 to %d of %d", len(rows), len(r.scores)), Empty: "No scores yet."}
	if r.tick%3 == 0 {
		tb.Caption += "!"
	}
	tb.Ticker = []views.Overtake{{Member: "a", Name: "A", Passed: "b", PassedName: "B", Rank: 2, Ago: fmt.Sprintf("%d s ago", r.tick/4)}}
	tb.Podium = podium(rows)
	ticker := mustString(t, views.TableTicker(tb.Ticker))
	return []byte(mustString(t, views.StandingsTable(tb))), tableStateOf(r.board, tb, raw, ticker)
}

func mustString(t testing.TB, c templ.Component) string {
	t.Helper()
	s, err := templ.ToGoHTML(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

// randomTableRuns runs run as a subtest per random live-table workload: a
// plain board, a lap board (lower is better, durations) and one whose zone
// lines move from row to row as ranks change (shared ties), each with a
// table of 5 and of 100 rows, on a random seed the subtest names.
func randomTableRuns(t *testing.T, run func(t *testing.T, b *ranking.Board, r *randomTables)) {
	for _, spec := range []string{
		"boards:\n  - id: b\n    views: [day]\n",
		"boards:\n  - id: b\n    views: [day]\n    order: asc\n    update: best\n    format: duration\n    decimals: 3\n",
		"boards:\n  - id: b\n    views: [day]\n    ties: shared\n    zones: [{title: Prize, top: 3}, {title: Top 10, top: 10}]\n",
	} {
		cfg, err := ranking.ParseConfig([]byte(spec))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := cfg.Board("b")
		for _, limit := range []int{5, 100} {
			seed := rand.Uint64()
			t.Run(fmt.Sprintf("%s/%d/zones=%d/seed=%d", b.Format, limit, len(b.Zones), seed), func(t *testing.T) {
				run(t, b, newRandomTables(seed, b, limit))
			})
		}
	}
}

// TestDiffFramesRebuildTheWholeFragment: on random workloads, a model of
// the page that applies each diff frame to what it showed holds what a
// fresh whole fragment shows, rows, ranks, rank changes and blocks alike;
// and each score change is said with the board's format and order.
func TestDiffFramesRebuildTheWholeFragment(t *testing.T) {
	randomTableRuns(t, func(t *testing.T, b *ranking.Board, r *randomTables) {
		var model LiveModel
		var prev *tableState
		diffs, moved, ranks, lines := 0, 0, 0, 0
		for i := range 400 {
			full, st := r.step(t)
			var want LiveModel
			if err := want.Apply(string(full)); err != nil {
				t.Fatal(err)
			}
			diff := diffOf(prev, st)
			if diff == nil {
				if err := model.Apply(string(full)); err != nil {
					t.Fatal(err)
				}
			} else {
				diffs++
				if err := model.Apply(string(diff)); err != nil {
					t.Fatalf("step %d: %v\n%s", i, err, diff)
				}
				moved += len(model.LastPlacedNoRow)
				if strings.Contains(string(diff), `"ranks":`) {
					ranks++
				}
				if strings.Contains(string(diff), `zone-end`) {
					lines++
				}
				for m, d := range model.LastDeltas {
					if d == "" || (d[0] != '+' && d[:3] != "−") {
						t.Fatalf("step %d: delta %q of %s", i, d, m)
					}
				}
			}
			if why := model.Same(&want); why != "" {
				t.Fatalf("step %d (diff %v): %s\nframe %s", i, diff != nil, why, diff)
			}
			prev = st
		}
		if diffs < 300 || moved == 0 || ranks == 0 {
			t.Errorf("%d of 400 frames were diffs, %d rows moved without their markup, %d diffs changed ranks in runs: the workload misses a case", diffs, moved, ranks)
		}
		if len(b.Zones) > 0 && lines == 0 {
			t.Error("no diff moved a zone line: the workload misses the case")
		}
	})
}

// TestScoreDelta: changes are said as the board shows scores and judged by
// its order: on a lap board (lower is better) 3:02.165 -> 2:57.250 is a
// better "−4.915 s", never "-44.915".
func TestScoreDelta(t *testing.T) {
	cfg, err := ranking.ParseConfig([]byte("boards:\n  - id: lap\n    views: [day]\n    order: asc\n    update: best\n    format: duration\n    decimals: 3\n  - id: pts\n    views: [day]\n"))
	if err != nil {
		t.Fatal(err)
	}
	lap, _ := cfg.Board("lap")
	pts, _ := cfg.Board("pts")
	for _, c := range []struct {
		b        *ranking.Board
		from, to int64
		text     string
		better   int
	}{
		{lap, 182165, 177250, "−4.915 s", 1},
		{lap, 177250, 182165, "+4.915 s", -1},
		{lap, 182165, 100000, "−1:22.165", 1},
		{pts, 10, 18, "+8", 1},
		{pts, 18, 10, "−8", -1},
	} {
		text, better := scoreDelta(c.b)(c.from, c.to)
		if text != c.text || better != c.better {
			t.Errorf("%s %d -> %d: %q %d, want %q %d", c.b.ID, c.from, c.to, text, better, c.text, c.better)
		}
	}
}

// TestDiffOfAClimbIsSmall: one member climbing from the bottom of 100 rows
// to the top costs its own row, and the 99 rows it pushes down cost a run
// of rank changes, not their markup.
func TestDiffOfAClimbIsSmall(t *testing.T) {
	cfg, _ := ranking.ParseConfig([]byte("boards:\n  - id: b\n    views: [day]\n"))
	b, _ := cfg.Board("b")
	score := map[string]int64{}
	mk := func(order []string) *tableState {
		var rows []views.Row
		var raw []int64
		for i, m := range order {
			rows = append(rows, views.Row{Rank: int64(i + 1), Member: m, Name: m, Score: fmt.Sprint(score[m]), CardURL: "/c/" + m})
			raw = append(raw, score[m])
		}
		return tableStateOf(b, views.Table{ID: "t", Period: "p", Rows: rows}, raw, "")
	}
	var before []string
	for i := range 100 {
		before = append(before, fmt.Sprintf("member-%03d", i))
		score[before[i]] = int64(1000 - i)
	}
	a := mk(before)
	score[before[99]] = 2000
	after := append([]string{before[99]}, before[:99]...)
	diff := diffOf(a, mk(after))
	full := mustString(t, views.StandingsTable(views.Table{ID: "t", Period: "p", Rows: mk(after).rows}))
	if len(diff)*10 > len(full) {
		t.Errorf("a climb's diff is %d bytes against %d for the whole table:\n%.2000s", len(diff), len(full), diff)
	}
}

// takeAs takes the frame waiting in c's mailbox as c's writer would send
// it to a viewer whose last frame was *sent: the bytes sent and the whole
// fragment they stand for.
func (c *client) takeAs(sent *uint64) (got, full []byte, ok bool) {
	select {
	case f := <-c.mailbox:
		got = f.bytesFor(*sent)
		*sent = f.seq
		return got, f.full, true
	default:
		return nil, nil, false
	}
}

// TestHubViewerThatMissesFramesStaysRight: two viewers of one table; one
// takes every frame (diffs after the first), the other only now and then,
// so that its one-slot mailbox drops frames. Both always show what a fresh
// whole fragment shows: a viewer that missed a diff gets the whole table.
func TestHubViewerThatMissesFramesStaysRight(t *testing.T) {
	cfg, _ := ranking.ParseConfig([]byte("boards:\n  - id: b\n    views: [day]\n"))
	b, _ := cfg.Board("b")
	r := newRandomTables(rand.Uint64(), b, 20)
	var mu sync.Mutex
	var last []byte
	render := func(context.Context, topicKey) (rendered, error) {
		mu.Lock()
		defer mu.Unlock()
		full, st := r.step(t)
		for bytes.Equal(full, last) { // every render changes something
			full, st = r.step(t)
		}
		last = full
		return rendered{frame: full, table: st, ranked: true}, nil
	}
	f := newFakeRender()
	h := newHub(render, f.scored, nil, hubLimits{tick: time.Nanosecond, maxRenders: 64, maxConns: 1 << 20, maxPerClient: 1 << 20},
		slog.New(slog.DiscardHandler), newMetrics())
	t.Cleanup(h.close)
	key := topicKey{board: "b", view: "day", limit: 20}
	fast, slow := h.joinNew(t, key), h.joinNew(t, key)
	var fastSent, slowSent uint64
	var fastModel, slowModel LiveModel
	check := func(who string, c *client, sent *uint64, m *LiveModel) {
		t.Helper()
		got, full, ok := c.takeAs(sent)
		if !ok {
			t.Fatalf("%s: no frame", who)
		}
		if err := m.Apply(string(got)); err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		var want LiveModel
		want.Apply(string(full))
		if why := m.Same(&want); why != "" {
			t.Fatalf("%s: %s", who, why)
		}
	}
	for i := range 300 {
		h.markAll()
		h.tickNow()
		check("every frame", fast, &fastSent, &fastModel)
		if i%4 == 0 {
			check("now and then", slow, &slowSent, &slowModel)
		}
	}
	if fastModel.Diffs < 250 {
		t.Errorf("the viewer that took every frame got %d diffs of 300", fastModel.Diffs)
	}
	if slowModel.Wholes < 70 {
		t.Errorf("the viewer that missed frames got %d whole tables for 75 frames", slowModel.Wholes)
	}
}
