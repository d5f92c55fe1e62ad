package ranking

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/ranking/redistest"
)

const groupConfig = `boards:
  - id: g
    max_score: 100
    views: [day, all]
`

func (g *writeGroup) state() (out bool, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.out, len(g.waiting)
}

// groupStore is a store of groupConfig whose first script call a hook
// holds once armed, and the sizes of the grouped calls of its unkeyed
// writes to board g.
func groupStore(t *testing.T, be redistest.Backend, opts Options) (*Store, *holdHook, *writeGroup, func() []int) {
	rdb := be.Client(t)
	hook := &holdHook{hold: 1, release: make(chan struct{})}
	rdb.AddHook(hook)
	opts.Prefix = redistest.Namespace(t) + ":"
	s := newStore(rdb, mustConfig(t, groupConfig), opts)
	g := s.writeGroupOf(s.cfg.Boards[0], Event{Member: "x"})
	var mu sync.Mutex
	var sizes []int
	g.sent = func(n int) { mu.Lock(); sizes = append(sizes, n); mu.Unlock() }
	return s, hook, g, func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(sizes) }
}

// A write that finds a call of its board out waits; the waiting writes
// leave in one call when it lands, and each gets its own result: scores
// and ranks as if written one by one, a refusal for the one event the
// bounds refuse (the others stand), "not applied" at once for one whose
// caller left while it waited (never sent). Writes with ids go apart, and
// a repeated id within one call counts once.
func TestWriteGroupSharesCalls(t *testing.T) {
	for _, be := range pipeBackends() {
		t.Run(be.Name, func(t *testing.T) {
			s, hook, g, sizes := groupStore(t, be, Options{})
			ctx := context.Background()
			if _, err := s.Write(ctx, "g", Event{Member: "full", Value: 60}); err != nil {
				t.Fatal(err)
			}
			hook.armed.Store(true)
			lone := make(chan error, 1)
			go func() {
				res, err := s.Write(ctx, "g", Event{Member: "lone", Value: 99})
				// Its script runs once released, after k (100) is written.
				if err == nil && (res.Views[1].Score != 99 || res.Views[1].Rank != 2) {
					err = fmt.Errorf("lone write answered %+v", res.Views)
				}
				lone <- err
			}()
			testsupport.WaitFor(t, "the lone write to be out", func() bool { out, _ := g.state(); return out })

			// n writes of members m0..m(n-1), values 1..n, and full +60,
			// which max_score 100 refuses.
			const n = 12
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					res, err := s.Write(ctx, "g", Event{Member: fmt.Sprintf("m%d", i), Value: int64(i + 1)})
					// Ranked right after its own event: below k (100, written
					// meanwhile), lone (99) and full (60), above the members
					// m0..m(i-1) and below those of m(i+1).. already written
					// in the call.
					if err != nil || res.Views[1].Score != int64(i+1) || res.Views[1].Rank < 4 || res.Views[1].Rank > int64(3+n-i) {
						t.Errorf("write %d: %+v %v, want score %d, rank 4..%d", i, res.Views, err, i+1, 3+n-i)
					}
				})
			}
			wg.Go(func() {
				var e *Error
				if _, err := s.Write(ctx, "g", Event{Member: "full", Value: 60}); !errors.As(err, &e) || e.Code != EINVALID {
					t.Errorf("full +60: %v, want EINVALID", err)
				}
			})
			testsupport.WaitFor(t, "the writes to wait", func() bool { _, w := g.state(); return w == n+1 })
			gone, cancel := context.WithCancel(ctx)
			goneErr := make(chan error, 1)
			go func() {
				_, err := s.Write(gone, "g", Event{Member: "gone", Value: 5})
				goneErr <- err
			}()
			testsupport.WaitFor(t, "the last write to wait", func() bool { _, w := g.state(); return w == n+2 })
			cancel()
			if err := <-goneErr; !errors.Is(err, context.Canceled) {
				t.Fatalf("a waiting write whose context ended: %v, want context.Canceled", err)
			}

			// Writes with ids have their own group: one goes out at once
			// while the unkeyed call is held.
			if res, err := s.Write(ctx, "g", Event{Member: "k", Value: 100, ID: "id-k"}); err != nil || res.Views[1].Score != 100 {
				t.Fatalf("keyed write while an unkeyed call is out: %+v %v", res, err)
			}

			close(hook.release)
			if err := <-lone; err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			testsupport.WaitFor(t, "the calls to land", func() bool { out, w := g.state(); return !out && w == 0 })
			if got := sizes(); !reflect.DeepEqual(got, []int{n + 1}) {
				t.Fatalf("grouped calls: %v, want one of %d writes (the write whose caller left is not sent)", got, n+1)
			}
			page, err := s.Page(ctx, "g", "all", PageQuery{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, e := range page.Entries {
				got[e.Member] = e.Score
			}
			want := map[string]int64{"lone": 99, "full": 60, "k": 100}
			for i := range n {
				want[fmt.Sprintf("m%d", i)] = int64(i + 1)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("board after the grouped call: %v, want %v", got, want)
			}

			// The same id twice in one call: the second is a duplicate.
			kg := s.writeGroupOf(s.cfg.Boards[0], Event{Member: "x", ID: "x"})
			hook.calls.Store(0)
			hook.release = make(chan struct{})
			first := make(chan error, 1)
			go func() { _, err := s.Write(ctx, "g", Event{Member: "d", Value: 1, ID: "id-first"}); first <- err }()
			testsupport.WaitFor(t, "the keyed write to be out", func() bool { out, _ := kg.state(); return out })
			results := make([]WriteResult, 2)
			var kw sync.WaitGroup
			for j := range results {
				kw.Go(func() {
					var err error
					results[j], err = s.Write(ctx, "g", Event{Member: "d", Value: 10, ID: "id-twice"})
					if err != nil {
						t.Errorf("keyed write %d: %v", j, err)
					}
				})
			}
			testsupport.WaitFor(t, "the keyed writes to wait", func() bool { _, w := kg.state(); return w == 2 })
			close(hook.release)
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			kw.Wait()
			if results[0].Duplicate == results[1].Duplicate {
				t.Fatalf("one id written twice in one call: duplicates %v and %v, want exactly one", results[0].Duplicate, results[1].Duplicate)
			}
			c, err := s.Member(ctx, "g", "all", "d", MemberQuery{})
			if err != nil || c.Score != 11 {
				t.Fatalf("d after 1, and 10 twice with one id: %+v %v, want 11", c, err)
			}
		})
	}
}

// Concurrent single writes, grouped as they come, answer each event as the
// model does when the events of each writer apply in its order: every
// answer is the member's sum after its own event (each writer has its own
// members), refusals included; the board ends as the model.
func TestWriteGroupMatchesModel(t *testing.T) {
	for _, be := range pipeBackends() {
		t.Run(be.Name, func(t *testing.T) {
			s, _, g, sizes := groupStore(t, be, Options{})
			ctx := context.Background()
			const writers, each = 8, 40
			final := make([]map[string]int64, writers)
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(w), 7))
					sum := map[string]int64{}
					for range each {
						m := fmt.Sprintf("w%d-%d", w, rng.IntN(3))
						v := int64(rng.IntN(41) - 10) // -10..30: some sums leave [0, 100]
						res, err := s.Write(ctx, "g", Event{Member: m, Value: v})
						next := sum[m] + v
						var e *Error
						switch {
						case next < 0 || next > 100:
							if !errors.As(err, &e) || e.Code != EINVALID {
								t.Errorf("%s %+d from %d: %v, want EINVALID", m, v, sum[m], err)
							}
						case err != nil:
							t.Errorf("%s %+d: %v", m, v, err)
						default:
							sum[m] = next
							if res.Views[1].Score != next {
								t.Errorf("%s %+d: answered %d, want %d", m, v, res.Views[1].Score, next)
							}
						}
					}
					final[w] = sum
				})
			}
			wg.Wait()
			testsupport.WaitFor(t, "the calls to land", func() bool { out, w := g.state(); return !out && w == 0 })
			want := map[string]int64{}
			for _, f := range final {
				for m, v := range f {
					if v != 0 {
						want[m] = v
					}
				}
			}
			page, err := s.Page(ctx, "g", "all", PageQuery{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, e := range page.Entries {
				if e.Score != 0 {
					got[e.Member] = e.Score
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("board: %v, want %v", got, want)
			}
			t.Logf("grouped calls: %v", sizes())
		})
	}
}

// With SoloWrites every write goes on its own.
func TestSoloWrites(t *testing.T) {
	be := pipeBackends()[0]
	s, hook, g, sizes := groupStore(t, be, Options{SoloWrites: true})
	ctx := context.Background()
	hook.armed.Store(true)
	held := make(chan error, 1)
	go func() { _, err := s.Write(ctx, "g", Event{Member: "a", Value: 1}); held <- err }()
	testsupport.WaitFor(t, "the first write to be held", func() bool { return hook.calls.Load() >= 1 })
	if _, err := s.Write(ctx, "g", Event{Member: "b", Value: 2}); err != nil {
		t.Fatal(err)
	}
	close(hook.release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if out, w := g.state(); out || w != 0 || len(sizes()) != 0 {
		t.Fatalf("solo writes went through the group: out %v, waiting %d, calls %v", out, w, sizes())
	}
}

// A panic in a grouped call fails its writes with EINTERNAL, and the group
// goes on.
func TestWriteGroupPanic(t *testing.T) {
	release := make(chan struct{})
	g := &writeGroup{apply: func(ctx context.Context, events []Event) ([]WriteResult, error) {
		if events[0].Member == "held" {
			<-release
		}
		if events[0].Member == "boom" {
			panic("boom")
		}
		res := make([]WriteResult, len(events))
		for i, ev := range events {
			res[i].Member = ev.Member
		}
		return res, nil
	}}
	ctx := context.Background()
	held := make(chan error, 1)
	go func() { _, err := g.write(ctx, Event{Member: "held"}); held <- err }()
	testsupport.WaitFor(t, "the first write to be out", func() bool { out, _ := g.state(); return out })
	boom := make(chan error, 2)
	for range 2 {
		go func() { _, err := g.write(ctx, Event{Member: "boom"}); boom <- err }()
	}
	testsupport.WaitFor(t, "the writes to wait", func() bool { _, w := g.state(); return w == 2 })
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for range 2 {
		var e *Error
		if err := <-boom; !errors.As(err, &e) || e.Code != EINTERNAL {
			t.Fatalf("a grouped write whose call panicked: %v, want EINTERNAL", err)
		}
	}
	if res, err := g.write(ctx, Event{Member: "after"}); err != nil || res.Member != "after" {
		t.Fatalf("a write after the panic: %+v %v", res, err)
	}
}
