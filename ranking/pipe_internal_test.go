package ranking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/ranking/redistest"
)

// pipeBackends are the Redis flavours the read pipe is tested on.
func pipeBackends() []redistest.Backend {
	return redistest.Backends(func(t *testing.T) redis.UniversalClient {
		m := miniredis.RunT(t)
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { rdb.Close() })
		return rdb
	})
}

// holdHook holds the first hold script calls sent on their own (not in a
// pipeline) until release is closed: the read pipe's flights stay out, so
// the calls after them have to wait and share a pipeline.
type holdHook struct {
	hold    int32
	armed   atomic.Bool // holds only once armed
	calls   atomic.Int32
	release chan struct{}
}

func (h *holdHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *holdHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); h.armed.Load() && (name == "evalsha" || name == "eval") && h.calls.Add(1) <= h.hold {
			<-h.release
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook holds a lone transaction (a rank card's) as
// ProcessHook holds a lone script.
func (h *holdHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "multi" && h.armed.Load() && h.calls.Add(1) <= h.hold {
			<-h.release
		}
		return next(ctx, cmds)
	}
}

func mustConfig(t *testing.T, text string) *Config {
	t.Helper()
	cfg, err := ParseConfig([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// heldStore is a store of cfg on rdb (with its own key prefix) whose
// script calls a holdHook can hold once armed.
func heldStore(t *testing.T, rdb redis.UniversalClient, cfg *Config, opts Options) (*Store, *holdHook) {
	hook := &holdHook{hold: pipeMaxFlights, release: make(chan struct{})}
	rdb.AddHook(hook)
	opts.Prefix = redistest.Namespace(t) + ":"
	return newStore(rdb, cfg, opts), hook
}

func (p *readPipe) state() (flights, waiting int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flights, len(p.waiting)
}

// heldPipe is a read pipe on rdb whose first pipeMaxFlights lone calls
// (scripts or transactions) a holdHook holds, and the sizes of the
// pipelines it has sent.
func heldPipe(rdb redis.UniversalClient) (*readPipe, *holdHook, func() []int) {
	hook := &holdHook{hold: pipeMaxFlights, release: make(chan struct{})}
	hook.armed.Store(true)
	rdb.AddHook(hook)
	p := &readPipe{rdb: rdb}
	var mu sync.Mutex
	var sizes []int
	p.pipelines = func(n int) { mu.Lock(); sizes = append(sizes, n); mu.Unlock() }
	return p, hook, func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(sizes) }
}

// dropWaiting starts call behind the n calls waiting on p, ends its
// context once it waits too, and checks that it returns at once with its
// context's error.
func dropWaiting(t *testing.T, p *readPipe, n int, call func(context.Context) error) {
	t.Helper()
	gone, cancel := context.WithCancel(context.Background())
	goneErr := make(chan error, 1)
	go func() { goneErr <- call(gone) }()
	testsupport.WaitFor(t, "the calls to wait", func() bool { _, w := p.state(); return w == n+1 })
	cancel()
	if err := <-goneErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiting call whose context ended: %v, want context.Canceled", err)
	}
}

// A call that finds both flights out waits; the waiting calls leave in one
// pipeline when a flight lands, each gets its own reply (EVAL when Redis
// does not have the script yet), and a caller whose context ends while it
// waits gets its context's error at once and is left out of the pipeline.
func TestReadPipeSharesPipelines(t *testing.T) {
	for _, be := range pipeBackends() {
		t.Run(be.Name, func(t *testing.T) {
			p, hook, sizes := heldPipe(be.Client(t))
			ctx := context.Background()
			// Scripts Redis has never seen: the pipeline's EVALSHAs fail
			// with NOSCRIPT and go again as EVAL.
			nonce := fmt.Sprint(time.Now().UnixNano())
			lone := redis.NewScript(`return 'lone ` + nonce + `'`)
			echo := redis.NewScript(`return {KEYS[1], ARGV[1], ARGV[2], '` + nonce + `'}`)

			var wg sync.WaitGroup
			for range pipeMaxFlights {
				wg.Go(func() {
					if v, err := p.run(ctx, lone, []string{"{lone}"}).Text(); err != nil || v != "lone "+nonce {
						t.Errorf("lone call: %q %v", v, err)
					}
				})
			}
			testsupport.WaitFor(t, "the flights to be taken", func() bool { f, _ := p.state(); return f == pipeMaxFlights })

			const n = 20
			for i := range n {
				wg.Go(func() {
					key := fmt.Sprintf("k%d", i) // keys in many slots: several cluster nodes
					got, err := p.run(ctx, echo, []string{key}, i, "x"+key).Slice()
					want := []any{key, fmt.Sprint(i), "x" + key, nonce}
					if err != nil || !reflect.DeepEqual(got, want) {
						t.Errorf("call %d: got %v %v, want %v", i, got, err, want)
					}
				})
			}
			dropWaiting(t, p, n, func(ctx context.Context) error { return p.run(ctx, echo, []string{"gone"}, 0, "gone").Err() })
			close(hook.release)
			wg.Wait()
			testsupport.WaitFor(t, "the flights to land", func() bool { f, w := p.state(); return f == 0 && w == 0 })
			if got := sizes(); !reflect.DeepEqual(got, []int{n}) {
				t.Fatalf("pipelines sent: %v, want one of %d calls (the call whose caller left is not sent)", got, n)
			}
		})
	}
}

// A waiting call keeps its caller's deadline: Redis does not answer, the
// caller gets its deadline's error when it ends, and the flights still
// land once Redis answers.
func TestReadPipeWaitKeepsTheDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// A Redis that reads commands and never answers.
	var conns sync.WaitGroup
	quit := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				go func() { <-quit; c.Close() }()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			})
		}
	}()
	defer func() { close(quit); ln.Close(); conns.Wait() }()
	rdb := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), ContextTimeoutEnabled: true, MaxRetries: -1, Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	p := &readPipe{rdb: rdb}
	script := redis.NewScript(`return 1`)
	var wg sync.WaitGroup
	errs := make(chan error, pipeMaxFlights+1)
	for range pipeMaxFlights + 1 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			errs <- p.run(ctx, script, []string{"k"}).Err()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err == nil || !(errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "i/o timeout")) {
			t.Fatalf("a call to a Redis that does not answer: %v, want its deadline's error", err)
		}
	}
	testsupport.WaitFor(t, "the flights to land", func() bool { f, w := p.state(); return f == 0 && w == 0 })
}

// Transactions share pipelines as scripts do: the waiting ones leave
// together (in one MULTI/EXEC per hash tag), each call's commands
// get their own replies, a script Redis lacks goes again by EVAL, and a
// caller whose context ends while it waits gets its context's error.
func TestReadPipeTransactions(t *testing.T) {
	for _, be := range pipeBackends() {
		t.Run(be.Name, func(t *testing.T) {
			rdb := be.Client(t)
			p, hook, sizes := heldPipe(rdb)
			ctx := context.Background()
			nonce := fmt.Sprint(time.Now().UnixNano())
			script := redis.NewScript(`return {KEYS[1], ARGV[1], '` + nonce + `'}`)
			for i := range 30 {
				if err := rdb.Set(ctx, fmt.Sprintf("{t%d}v", i), i, time.Minute).Err(); err != nil {
					t.Fatal(err)
				}
			}
			read := func(ctx context.Context, i int) error {
				key := fmt.Sprintf("{t%d}", i) // keys in many slots: several cluster nodes
				var sc *redis.Cmd
				var get *redis.StringCmd
				err := p.runTx(ctx, key, func(ctx context.Context, pipe redis.Pipeliner, eval bool) func() bool {
					if eval {
						sc = script.Eval(ctx, pipe, []string{key}, i)
					} else {
						sc = script.EvalSha(ctx, pipe, []string{key}, i)
					}
					get = pipe.Get(ctx, key+"v")
					return func() bool { return redis.HasErrorPrefix(sc.Err(), "NOSCRIPT") }
				})
				if err != nil {
					return err
				}
				got, err := sc.Slice()
				if want := []any{key, fmt.Sprint(i), nonce}; err != nil || !reflect.DeepEqual(got, want) {
					return fmt.Errorf("call %d: script %v %v, want %v", i, got, err, want)
				}
				if v, err := get.Int(); err != nil || v != i {
					return fmt.Errorf("call %d: get %v %v, want %d", i, v, err, i)
				}
				return nil
			}
			var wg sync.WaitGroup
			for i := range pipeMaxFlights {
				wg.Go(func() {
					if err := read(ctx, i); err != nil {
						t.Error(err)
					}
				})
			}
			testsupport.WaitFor(t, "the flights to be taken", func() bool { f, _ := p.state(); return f == pipeMaxFlights })
			const n = 20
			for i := pipeMaxFlights; i < pipeMaxFlights+n; i++ {
				wg.Go(func() {
					if err := read(ctx, i); err != nil {
						t.Error(err)
					}
				})
			}
			dropWaiting(t, p, n, func(ctx context.Context) error { return read(ctx, 29) })
			close(hook.release)
			wg.Wait()
			if got := sizes(); !reflect.DeepEqual(got, []int{n}) {
				t.Errorf("pipelines of %v calls, want one of the %d that waited", got, n)
			}
			testsupport.WaitFor(t, "the flights to land", func() bool { f, w := p.state(); return f == 0 && w == 0 })
		})
	}
}

// Rank cards and pages read by concurrent requests, sharing pipelines, are
// the ones each request reads alone.
func TestReadPipeCardsAndPages(t *testing.T) {
	cfg := mustConfig(t, `
boards:
  - id: b
    title: B
    views: [day, week, all]
`)
	for _, be := range pipeBackends() {
		t.Run(be.Name, func(t *testing.T) {
			s, hook := heldStore(t, be.Client(t), cfg, Options{})
			ctx := context.Background()
			const n = 30
			var evs []Event
			for i := range n {
				evs = append(evs, Event{Member: fmt.Sprintf("m%02d", i), Name: fmt.Sprintf("Member %d", i), Value: int64(1 + i*7%n)})
			}
			if _, err := s.Apply(ctx, "b", evs, ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			type answer struct {
				Card *RankCard
				Page *Page
			}
			read := func(i int) (answer, error) {
				if i%2 == 0 {
					c, err := s.RankCard(ctx, "b", []string{"day", "week", "all"}[i%3], fmt.Sprintf("m%02d", i), RankCardQuery{Around: 2, History: 12})
					if err == nil {
						c.Now, c.History.Now = time.Time{}, time.Time{} // Redis's clock at the read
					}
					return answer{Card: c}, err
				}
				pg, err := s.Page(ctx, "b", []string{"day", "week", "all"}[i%3], PageQuery{Offset: i % 5, Limit: 10})
				if err == nil {
					pg.Now = time.Time{}
				}
				return answer{Page: pg}, err
			}
			alone := func() []answer {
				var as []answer
				for i := range n {
					a, err := read(i)
					if err != nil {
						t.Fatal(err)
					}
					as = append(as, a)
				}
				return as
			}
			// A period that turns during the test changes the answers:
			// then it runs again.
			for attempt := 0; ; attempt++ {
				want := alone()
				hook.calls.Store(0)
				hook.release = make(chan struct{})
				hook.armed.Store(true)
				got := make([]answer, n)
				var wg sync.WaitGroup
				for i := range pipeMaxFlights {
					wg.Go(func() {
						a, err := read(i)
						if err != nil {
							t.Error(err)
						}
						got[i] = a
					})
				}
				testsupport.WaitFor(t, "the flights to be taken", func() bool { f, _ := s.reads["b"].state(); return f == pipeMaxFlights })
				for i := pipeMaxFlights; i < n; i++ {
					wg.Go(func() {
						a, err := read(i)
						if err != nil {
							t.Error(err)
						}
						got[i] = a
					})
				}
				testsupport.WaitFor(t, "the reads to wait", func() bool { _, w := s.reads["b"].state(); return w == n-pipeMaxFlights })
				close(hook.release)
				wg.Wait()
				hook.armed.Store(false)
				if !reflect.DeepEqual(want, alone()) && attempt < 2 {
					continue
				}
				for i := range n {
					if !reflect.DeepEqual(got[i], want[i]) {
						g, _ := json.Marshal(got[i])
						w, _ := json.Marshal(want[i])
						t.Fatalf("read %d in a shared pipeline:\n%s\nalone:\n%s", i, g, w)
					}
				}
				return
			}
		})
	}
}

// Each board has its own pipe: reads of a board whose flights are both
// out do not hold back another board's.
func TestReadPipePerBoard(t *testing.T) {
	cfg := mustConfig(t, `
boards:
  - id: a
    title: A
    views: [week]
  - id: b
    title: B
    views: [week]
`)
	for _, be := range pipeBackends() {
		t.Run(be.Name, func(t *testing.T) {
			s, hook := heldStore(t, be.Client(t), cfg, Options{})
			ctx := context.Background()
			for _, id := range []string{"a", "b"} {
				if _, err := s.Apply(ctx, id, []Event{{Member: "m", Value: 1}}, ApplyOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			readWhileHeld(t, s, hook, "a", "b")
		})
	}
}

// With SoloReads every read goes out on its own: reads held in Redis do
// not make the next one wait.
func TestSoloReads(t *testing.T) {
	cfg := mustConfig(t, "boards: [{id: a, views: [week]}]\n")
	s, hook := heldStore(t, pipeBackends()[0].Client(t), cfg, Options{SoloReads: true})
	ctx := context.Background()
	if _, err := s.Apply(ctx, "a", []Event{{Member: "m", Value: 1}}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	readWhileHeld(t, s, hook, "a", "a")
}

// readWhileHeld holds pipeMaxFlights page reads of board held in Redis
// and checks that a page read of board other (one member) answers
// meanwhile.
func readWhileHeld(t *testing.T, s *Store, hook *holdHook, held, other string) {
	t.Helper()
	ctx := context.Background()
	hook.armed.Store(true)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(hook.release)
	for range pipeMaxFlights {
		wg.Go(func() {
			if _, err := s.Page(ctx, held, "week", PageQuery{Limit: 10}); err != nil {
				t.Error(err)
			}
		})
	}
	testsupport.WaitFor(t, "the reads to be held", func() bool { return hook.calls.Load() == pipeMaxFlights })
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if pg, err := s.Page(octx, other, "week", PageQuery{Limit: 10}); err != nil || len(pg.Entries) != 1 {
		t.Fatalf("a read of board %s while board %s's reads are held: %v %v", other, held, pg, err)
	}
}
