package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// Adding a master to a cluster moves slots. While a board's slot is half
// moved, some of its keys are on the old master and some on the new one; a
// script call must then either see all of the board's keys or be refused
// (TRYAGAIN, ASK: the client retries), never run on half of them. These tests
// move a board's slot on a cluster of their own while writing to it and
// compare every view with the reference model of model_test.go.

// MustMovingCluster starts a 3-master cluster for one test (tests that
// reshard must not use the shared cluster) and a cluster client that counts
// the redirects and refusals the nodes answer.
func MustMovingCluster(tb testing.TB) (*redistest.Cluster, *redis.ClusterClient, *redirects) {
	tb.Helper()
	if err := redistest.Available(); err != nil {
		// Main has already failed the run when Redis is required.
		tb.Skipf("Redis not available: %v (set %s=1 to fail instead)", err, redistest.RequireEnv)
	}
	c, err := redistest.StartCluster(context.Background(), 3)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	rd := &redirects{}
	cc := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: c.Addrs,
		// Node clients see every reply, ASK and TRYAGAIN included, before
		// the cluster client follows or retries them.
		NewClient: func(opt *redis.Options) *redis.Client {
			node := redis.NewClient(opt)
			node.AddHook(rd)
			return node
		},
	})
	tb.Cleanup(func() { cc.Close() })
	return c, cc, rd
}

// redirects counts error replies of the cluster's nodes by kind.
type redirects struct {
	ask, tryAgain, moved atomic.Int64
}

func (r *redirects) note(err error) {
	if err == nil {
		return
	}
	switch s := err.Error(); {
	case strings.HasPrefix(s, "ASK "):
		r.ask.Add(1)
	case strings.HasPrefix(s, "TRYAGAIN"):
		r.tryAgain.Add(1)
	case strings.HasPrefix(s, "MOVED "):
		r.moved.Add(1)
	}
}

func (r *redirects) String() string {
	return fmt.Sprintf("%d ASK, %d TRYAGAIN, %d MOVED", r.ask.Load(), r.tryAgain.Load(), r.moved.Load())
}

func (r *redirects) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *redirects) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		// The cluster client clears the command's error before it follows
		// a redirect, so the hook's result is what counts here.
		err := next(ctx, cmd)
		r.note(err)
		return err
	}
}

func (r *redirects) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			r.note(cmd.Err())
		}
		return err
	}
}

// zoneAwayFromMidnight names a fixed-offset zone in which it is early
// afternoon at now. The model keys a rolling window by the day an event fell
// on, which is only the store's window while no day ends during the test.
func zoneAwayFromMidnight(now time.Time) string {
	off := 13 - now.UTC().Hour() // -10..13 hours east of UTC
	switch {
	case off == 0:
		return "Etc/GMT"
	case off > 0:
		return fmt.Sprintf("Etc/GMT-%d", off) // POSIX signs: GMT-3 is UTC+3
	default:
		return fmt.Sprintf("Etc/GMT+%d", -off)
	}
}

// answerDiff describes how a write's answer differs from the model's, or
// returns "" when they agree.
func answerDiff(got, want ranking.WriteResult) string {
	var out []string
	if got.Duplicate != want.Duplicate {
		out = append(out, fmt.Sprintf("duplicate %v, want %v", got.Duplicate, want.Duplicate))
	}
	if len(got.Views) != len(want.Views) {
		return strings.Join(append(out, fmt.Sprintf("%d views, want %d", len(got.Views), len(want.Views))), "; ")
	}
	for i, g := range got.Views {
		if w := want.Views[i]; g != w {
			out = append(out, fmt.Sprintf("%s %s score %d rank %d, want %s score %d rank %d", g.View, g.Period, g.Score, g.Rank, w.Period, w.Score, w.Rank))
		}
	}
	return strings.Join(out, "; ")
}

// diff is one difference between the store and the model.
type diff struct {
	kind string // lost, unexpected, score below, score above, rank, order, total, card
	text string
}

// boardDiffs reads every period of every view of the model's board (all
// rows, and a card for every member) and lists how the store differs. An
// error is a read that failed.
func boardDiffs(ctx context.Context, store *ranking.Store, mb *modelBoard) ([]diff, error) {
	var out []diff
	add := func(kind, format string, args ...any) { out = append(out, diff{kind, fmt.Sprintf(format, args...)}) }
	for _, mv := range mb.views {
		periods := make([]string, 0, len(mv.periods))
		for p := range mv.periods {
			periods = append(periods, p)
		}
		sort.Strings(periods)
		for _, p := range periods {
			where := mb.b.ID + "/" + mv.view.Name + "/" + p
			rows := mb.sorted(mv, p)
			var got []ranking.Entry
			var total int64
			for off := 0; ; off += ranking.MaxLimit {
				pg, err := store.Page(ctx, mb.b.ID, mv.view.Name, ranking.PageQuery{Period: p, Offset: off, Limit: ranking.MaxLimit})
				if err != nil {
					return out, fmt.Errorf("page %s: %w", where, err)
				}
				got, total = append(got, pg.Entries...), pg.Total
				if len(pg.Entries) < ranking.MaxLimit {
					break
				}
			}
			if total != int64(len(rows)) {
				add("total", "%s: total %d, want %d", where, total, len(rows))
			}
			byMember := map[string]ranking.Entry{}
			for _, e := range got {
				byMember[e.Member] = e
			}
			inModel := map[string]bool{}
			for i, e := range rows {
				inModel[e.member] = true
				want := mb.rank(mv, p, e.member)
				g, ok := byMember[e.member]
				switch {
				case !ok:
					add("lost", "%s: %s missing, want score %d rank %d", where, e.member, e.value, want)
				case g.Score < e.value:
					add("score below", "%s: %s score %d, want %d", where, e.member, g.Score, e.value)
				case g.Score > e.value:
					add("score above", "%s: %s score %d, want %d", where, e.member, g.Score, e.value)
				case g.Rank != want:
					add("rank", "%s: %s rank %d, want %d (score %d)", where, e.member, g.Rank, want, e.value)
				case i >= len(got) || got[i].Member != e.member:
					add("order", "%s: row %d is not %s", where, i+1, e.member)
				}
			}
			for _, g := range got {
				if !inModel[g.Member] {
					add("unexpected", "%s: %s listed with score %d rank %d, want absent", where, g.Member, g.Score, g.Rank)
				}
			}
			for _, e := range rows {
				card, err := store.Member(ctx, mb.b.ID, mv.view.Name, e.member, ranking.MemberQuery{Period: p, Around: 1})
				if ranking.ErrorCode(err) == ranking.ENOTFOUND {
					add("card", "%s: card of %s not found", where, e.member)
					continue
				}
				if err != nil {
					return out, fmt.Errorf("card %s %s: %w", where, e.member, err)
				}
				if want := mb.rank(mv, p, e.member); card.Score != e.value || card.Rank != want || card.Total != int64(len(rows)) {
					add("card", "%s: card of %s score %d rank %d total %d, want %d %d %d", where, e.member, card.Score, card.Rank, card.Total, e.value, want, len(rows))
				}
			}
		}
	}
	return out, nil
}

// reportDiffs fails tb with a count of each kind of difference and the
// first few of them.
func reportDiffs(tb testing.TB, when string, diffs []diff) {
	tb.Helper()
	if len(diffs) == 0 {
		return
	}
	counts := map[string]int{}
	for _, d := range diffs {
		counts[d.kind]++
	}
	var kinds []string
	for k, n := range counts {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	var first []string
	for _, d := range diffs[:min(len(diffs), 12)] {
		first = append(first, "  "+d.text)
	}
	tb.Errorf("%s: %d differences from the model (%s); the first:\n%s", when, len(diffs), strings.Join(kinds, ", "), strings.Join(first, "\n"))
}

// TestWriteDuringSlotMigration is the smallest case: two events, then the
// board's slot is opened for migration and only the all view's key moves.
// Writes and reads of the half-moved board must be refused as unavailable
// (the client may retry) or answer exactly what the model says; after the
// move every view is exact.
func TestWriteDuringSlotMigration(t *testing.T) {
	ctx := t.Context()
	c, cc, rd := MustMovingCluster(t)
	cfg := MustConfig(t, fmt.Sprintf("timezone: %s\nboards: [{id: p, views: [hour, day, week, month, all, 7d]}]\n", zoneAwayFromMidnight(time.Now())))
	b, _ := cfg.Board("p")
	store := ranking.StoreOnClient(cc, cfg, ranking.Options{})
	mb := newModelBoard(cfg, b)

	e1 := ranking.Event{Member: "alice", Value: 10, ID: "e1"}
	e2 := ranking.Event{Member: "alice", Value: 1, ID: "e2"}
	bob := ranking.Event{Member: "bob", Value: 7}
	// write sends ev and checks the answer against the model; a refusal is
	// allowed only as unavailable, and only when mayRefuse.
	write := func(when string, ev ranking.Event, mayRefuse bool) bool {
		t.Helper()
		got, err := store.Write(ctx, "p", ev)
		if err != nil {
			if !mayRefuse || ranking.ErrorCode(err) != ranking.EUNAVAILABLE {
				t.Fatalf("%s: %s %+d (id %q): %v (code %s)", when, ev.Member, ev.Value, ev.ID, err, ranking.ErrorCode(err))
			}
			t.Logf("%s: %s %+d (id %q) refused: %v", when, ev.Member, ev.Value, ev.ID, err)
			return false
		}
		want, code := mb.apply(ev, got.At.UnixMilli(), got.At.UnixMilli())
		if code != "" {
			t.Fatalf("%s: the model refuses %+v: %s", when, ev, code)
		}
		if d := answerDiff(got, want); d != "" {
			t.Errorf("%s: %s %+d (id %q) answered %s", when, ev.Member, ev.Value, ev.ID, d)
		}
		return true
	}

	write("before the move", e1, false)
	write("before the move", bob, false)

	allKey := ranking.DefaultPrefix + "{p}:z:all:all"
	slot := redistest.KeySlot(allKey)
	from, err := c.SlotOwner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.BeginMove(ctx, slot, (from+1)%len(c.Addrs))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Replace = true // a key written on the target early is reported below, not an error here
	if err := m.MoveKeys(ctx, allKey); err != nil {
		t.Fatal(err)
	}
	if left, err := m.Pending(ctx, 1000); err != nil || slices.Contains(left, allKey) || len(left) < 3 {
		t.Fatalf("after moving %s the source holds %q (%v); want the board's other keys only", allKey, left, err)
	}
	t.Logf("%v: only %s moved", m, allKey)

	// Half moved. Every answer is exact or a refusal.
	e2done := write("half moved", e2, true)
	e1done := write("half moved (e1 again)", e1, true)
	for _, mv := range mb.views {
		for p := range mv.periods {
			pg, err := store.Page(ctx, "p", mv.view.Name, ranking.PageQuery{Period: p, Limit: 10})
			if ranking.ErrorCode(err) == ranking.EUNAVAILABLE {
				t.Logf("half moved: page %s/%s refused: %v", mv.view.Name, p, err)
				continue
			}
			if err != nil {
				t.Fatalf("half moved: page %s/%s: %v", mv.view.Name, p, err)
			}
			var want []string
			for _, e := range mb.sorted(mv, p) {
				want = append(want, fmt.Sprintf("%s=%d", e.member, e.value))
			}
			var got []string
			for _, e := range pg.Entries {
				got = append(got, fmt.Sprintf("%s=%d", e.Member, e.Score))
			}
			if !slices.Equal(got, want) {
				t.Errorf("half moved: page %s/%s lists %v, want %v", mv.view.Name, p, got, want)
			}
		}
	}

	if err := m.Finish(ctx); err != nil {
		t.Fatalf("finishing the move: %v", err)
	}
	if cf := m.Conflicts(); len(cf) > 0 {
		t.Errorf("keys of the board were written on the new master before they moved (the move overwrote them): %q", cf)
	}
	t.Logf("moved %d keys; the nodes answered %v", m.Moved(), rd)

	// Moved. What was refused goes through now; e1 is a duplicate.
	if !e2done {
		write("after the move", e2, false)
	}
	if !e1done {
		write("after the move (e1 again)", e1, false)
	}
	write("after the move (e1 once more)", e1, false)
	write("after the move (e2 again)", e2, false)

	// Whatever the path, alice has 11 and bob 7 in every view (an hour may
	// have ended between the events, so the model decides the hour view).
	for _, v := range b.Views {
		if v.Name == "hour" {
			continue
		}
		pg, err := store.Page(ctx, "p", v.Name, ranking.PageQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(withoutPrev(pg.Entries)); got != "[{1 alice  11 0} {2 bob  7 0}]" {
			t.Errorf("after the move: %s lists %s, want alice 11 then bob 7", v.Name, got)
		}
	}
	diffs, err := boardDiffs(ctx, store, mb)
	if err != nil {
		t.Fatal(err)
	}
	reportDiffs(t, "after the move", diffs)
}

// liveEvent is one event of TestWritesWhileSlotMigrates and what it took to
// have it acknowledged.
type liveEvent struct {
	board   string
	ev      ranking.Event
	first   time.Time // first attempt
	retries int
}

// TestWritesWhileSlotMigrates moves the slot of two boards (an increment
// board with every kind of view and a best board whose id hashes to the same
// slot) to another master in small batches while four writers send events
// with unique ids, each retried with its id until acknowledged. Afterwards
// every view, every member is compared with the model: nothing lost, nothing
// counted twice, ranks and ties exact.
func TestWritesWhileSlotMigrates(t *testing.T) {
	const (
		members   = 300
		seedInc   = 600 // with the best board's seed, several hundred keys (idempotency records) to move
		seedBest  = 300
		startMove = 300  // live events acknowledged before the move starts
		minEvents = 2000 // live events, at least, and the move done
		maxEvents = 4000
		writers   = 4
		batch     = 20 // keys per MIGRATE
	)
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	c, cc, rd := MustMovingCluster(t)

	bestID := ""
	for i := 0; bestID == ""; i++ {
		if id := fmt.Sprintf("best-%d", i); redistest.KeySlot("{"+id+"}") == redistest.KeySlot("{live}") {
			bestID = id
		}
	}
	cfg := MustConfig(t, fmt.Sprintf(`
timezone: %s
boards:
  - {id: live, update: increment, ties: first, views: [hour, day, week, month, all, 7d]}
  - {id: %s, update: best, ties: first, max_score: 1000, views: [hour, day, week, month, all]}
`, zoneAwayFromMidnight(time.Now()), bestID))
	store := ranking.StoreOnClient(cc, cfg, ranking.Options{})
	models := map[string]*modelBoard{}
	for _, b := range cfg.Boards {
		models[b.ID] = newModelBoard(cfg, b)
	}
	var modelMu sync.Mutex
	rng := rand.New(rand.NewPCG(3, 5))
	member := func(r *rand.Rand) string { return fmt.Sprintf("m%03d", r.IntN(members)) }
	// Increments are small and best values coarse, so scores tie often; event
	// times are on a 100 ms grid, so ties of score and time fall back to the
	// member id.
	value := func(r *rand.Rand, board string) int64 {
		if board == "live" {
			return 1 + r.Int64N(3)
		}
		return 50 * r.Int64N(21)
	}

	// Seed: every member on both boards, in batches, before anything moves.
	for _, seed := range []struct {
		board string
		n     int
	}{{"live", seedInc}, {bestID, seedBest}} {
		var evs []ranking.Event
		for i := range seed.n {
			m := fmt.Sprintf("m%03d", i%members)
			if i >= members {
				m = member(rng)
			}
			evs = append(evs, ranking.Event{Member: m, Value: value(rng, seed.board), ID: fmt.Sprintf("seed-%d", i)})
		}
		res, err := store.Apply(ctx, seed.board, evs, ranking.ApplyOptions{})
		if err != nil {
			t.Fatalf("seeding %s: %v", seed.board, err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("seeding %s: event %d: %v", seed.board, i, r.Err)
			}
			if _, code := models[seed.board].apply(evs[i], r.At.UnixMilli(), r.At.UnixMilli()); code != "" {
				t.Fatalf("seeding %s: the model refuses %+v: %s", seed.board, evs[i], code)
			}
		}
	}
	if diffs, err := boardDiffs(ctx, store, models["live"]); err != nil || len(diffs) > 0 {
		reportDiffs(t, "after seeding (nothing moved yet)", diffs)
		t.Fatalf("the store and the model disagree before the move (err %v): the test itself is wrong", err)
	}

	slot := redistest.KeySlot("{live}")
	from, err := c.SlotOwner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	to := (from + 1) % len(c.Addrs)

	var (
		issued, acked    atomic.Int64
		retries          atomic.Int64
		moveStarted      atomic.Bool
		moveDone         atomic.Bool
		errMu            sync.Mutex
		errCodes         = map[string]int{}
		wrongAcks        []string
		maxStall         time.Duration
		maxStallInMove   time.Duration
		stalledEvent     string
		lastErrorSample  string
		unacknowledged   []string
		startMoveReached = make(chan struct{})
		startOnce        sync.Once
	)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 11))
			for n := 0; ; n++ {
				if (moveDone.Load() && acked.Load() >= minEvents) || issued.Add(1) > maxEvents {
					return
				}
				le := liveEvent{board: "live", first: time.Now()}
				if r.IntN(5) == 0 {
					le.board = bestID
				}
				now, err := store.Now(ctx)
				if err != nil {
					now = time.Now()
				}
				le.ev = ranking.Event{
					Member: member(r),
					Value:  value(r, le.board),
					ID:     fmt.Sprintf("w%d-%d", w, n),
					// An explicit time keeps the model exact even when the
					// acknowledgement is a duplicate (which carries no time).
					At: now.Add(-time.Duration(r.IntN(2000)) * time.Millisecond).Truncate(100 * time.Millisecond),
				}
				inMove := moveStarted.Load()
				var res ranking.WriteResult
				for {
					res, err = store.Write(ctx, le.board, le.ev)
					if err == nil {
						break
					}
					errMu.Lock()
					errCodes[ranking.ErrorCode(err)]++
					lastErrorSample = err.Error()
					errMu.Unlock()
					if ctx.Err() != nil {
						errMu.Lock()
						unacknowledged = append(unacknowledged, le.ev.ID)
						errMu.Unlock()
						return
					}
					le.retries++
					retries.Add(1)
					time.Sleep(time.Duration(1+r.IntN(5)) * time.Millisecond)
				}
				stall := time.Since(le.first)
				modelMu.Lock()
				_, code := models[le.board].apply(le.ev, le.ev.At.UnixMilli(), le.ev.At.UnixMilli())
				modelMu.Unlock()
				errMu.Lock()
				if code != "" {
					wrongAcks = append(wrongAcks, fmt.Sprintf("%s: the model refuses %+v: %s", le.board, le.ev, code))
				}
				if res.Duplicate && le.retries == 0 {
					wrongAcks = append(wrongAcks, fmt.Sprintf("%s %s answered duplicate on its first attempt", le.board, le.ev.ID))
				}
				if stall > maxStall {
					maxStall, stalledEvent = stall, fmt.Sprintf("%s (%d retries)", le.ev.ID, le.retries)
				}
				if (inMove || moveStarted.Load()) && stall > maxStallInMove {
					maxStallInMove = stall
				}
				errMu.Unlock()
				if acked.Add(1) >= startMove {
					startOnce.Do(func() { close(startMoveReached) })
				}
			}
		})
	}

	// The move, in batches; between two batches the writers get a moment
	// (until 15 more events are acknowledged, or 20 ms) to hit the
	// half-moved slot.
	var (
		move     *redistest.SlotMove
		moveErr  error
		moveTook time.Duration
		batches  int
	)
	select {
	case <-startMoveReached:
	case <-ctx.Done():
	}
	if ctx.Err() == nil {
		moveStarted.Store(true)
		began := time.Now()
		move, moveErr = c.MoveSlot(ctx, slot, to, redistest.MoveOptions{
			Batch:   batch,
			Replace: true, // a clash is reported below; the move must still end
			Between: func(ctx context.Context, moved int) error {
				batches++
				target := acked.Load() + 15
				for deadline := time.Now().Add(20 * time.Millisecond); time.Now().Before(deadline) && acked.Load() < target; {
					time.Sleep(time.Millisecond)
				}
				return ctx.Err()
			},
		})
		moveTook = time.Since(began)
	}
	moveDone.Store(true)
	wg.Wait()

	if moveErr != nil {
		t.Fatalf("moving slot %d: %v", slot, moveErr)
	}
	if ctx.Err() != nil {
		t.Fatalf("the test ran out of time: %d events acknowledged, %d never were (%v); errors by code %v, last %q",
			acked.Load(), len(unacknowledged), unacknowledged[:min(len(unacknowledged), 5)], errCodes, lastErrorSample)
	}
	if owner, err := c.SlotOwner(ctx, slot); err != nil || owner != to {
		t.Fatalf("after the move slot %d is served by master %d (%v), want %d", slot, owner, err, to)
	}
	t.Logf("%v: %d keys in %d batches of %d in %v; %d live events acknowledged, %d retries (errors by code %v); the nodes answered %v",
		move, move.Moved(), batches+1, batch, moveTook.Round(time.Millisecond), acked.Load(), retries.Load(), errCodes, rd)
	// A move may refuse writes for a while, but only as "try again"
	// (a 503 to API callers), never as an internal error.
	for code, n := range errCodes {
		if code != ranking.EUNAVAILABLE {
			t.Errorf("%d writes failed with %q during the move (last error %q), want only %q", n, code, lastErrorSample, ranking.EUNAVAILABLE)
		}
	}
	t.Logf("longest stall of a write (first attempt to acknowledgement): %v during the move, %v in all, event %s",
		maxStallInMove.Round(time.Millisecond), maxStall.Round(time.Millisecond), stalledEvent)
	if cf := move.Conflicts(); len(cf) > 0 {
		t.Errorf("%d keys of the boards were written on the new master before they moved (the move overwrote them), e.g. %q", len(cf), cf[:min(len(cf), 5)])
	}
	if len(wrongAcks) > 0 {
		t.Errorf("%d wrong acknowledgements, e.g. %q", len(wrongAcks), wrongAcks[:min(len(wrongAcks), 5)])
	}
	// On the increment board the all view's points add up to every
	// acknowledged event once: fewer is an event lost, more one counted twice.
	var points, want int64
	for off := 0; ; off += ranking.MaxLimit {
		pg, err := store.Page(ctx, "live", "all", ranking.PageQuery{Offset: off, Limit: ranking.MaxLimit})
		if err != nil {
			t.Fatalf("reading live/all after the move: %v", err)
		}
		for _, e := range pg.Entries {
			points += e.Score
		}
		if len(pg.Entries) < ranking.MaxLimit {
			break
		}
	}
	for _, mv := range models["live"].views {
		for _, e := range mv.periods["all"] {
			want += e.value
		}
	}
	if points != want {
		t.Errorf("live/all holds %d points in all, the acknowledged events %d (%+d)", points, want, points-want)
	}
	for _, b := range cfg.Boards {
		diffs, err := boardDiffs(ctx, store, models[b.ID])
		if err != nil {
			t.Fatalf("reading board %s after the move: %v", b.ID, err)
		}
		reportDiffs(t, "board "+b.ID+" after the move", diffs)
	}
}
