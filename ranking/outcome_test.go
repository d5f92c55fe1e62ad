//go:build unix

package ranking_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// dropProxy relays TCP between clients and a Redis on loopback. Armed, it
// lets the next script call through to Redis, waits for Redis's answer,
// and then closes that client's connection instead of relaying it: the
// write was applied, and its sender saw a dropped connection.
type dropProxy struct {
	ln    net.Listener
	to    string
	armed atomic.Bool
	drops atomic.Int64
	wg    sync.WaitGroup
}

func mustDropProxy(t *testing.T, to string) *dropProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{ln: ln, to: to}
	p.wg.Go(p.accept)
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *dropProxy) Addr() string { return p.ln.Addr().String() }

func (p *dropProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		r, err := net.Dial("tcp", p.to)
		if err != nil {
			c.Close()
			continue
		}
		var drop atomic.Bool // this connection's next answer is dropped
		p.wg.Go(func() {
			defer r.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if bytes.Contains(bytes.ToLower(buf[:n]), []byte("evalsha")) && p.armed.CompareAndSwap(true, false) {
						drop.Store(true)
					}
					if _, werr := r.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		})
		p.wg.Go(func() {
			defer c.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := r.Read(buf)
				if n > 0 && drop.Load() {
					p.drops.Add(1)
					r.Close()
					return
				}
				if n > 0 {
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		})
	}
}

// TestWriteNotResentAfterDroppedConnection: a write whose connection drops
// after Redis ran it is never sent again without an idempotency id (it
// answers unavailable, outcome unknown, and counts once); with an id the
// store sends it again and the id makes the second run a duplicate.
func TestWriteNotResentAfterDroppedConnection(t *testing.T) {
	t.Parallel() // waits on timeouts, its own servers or prefix
	ctx := context.Background()
	p := mustDropProxy(t, redistest.MustStandalone(t))
	// go-redis's defaults, as cmd/standings makes its client: they retry a
	// dropped connection by themselves.
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	s := newStore(t, rdb, MustConfig(t, "boards: [{id: b, views: [day, all]}]\n"), nil)
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "warm", Value: 1}); err != nil {
		t.Fatal(err)
	}

	p.armed.Store(true)
	_, err := s.Write(ctx, "b", ranking.Event{Member: "keyless", Value: 5})
	if p.drops.Load() != 1 {
		t.Fatalf("the proxy dropped %d answers, want 1", p.drops.Load())
	}
	if ranking.ErrorCode(err) != ranking.EUNAVAILABLE || ranking.ErrorOutcome(err) != ranking.OutcomeUnknown {
		t.Errorf("key-less write whose answer was lost: %v (outcome %q), want unavailable, outcome unknown", err, ranking.ErrorOutcome(err))
	}
	if c, err := s.Member(ctx, "b", "all", "keyless", ranking.MemberQuery{}); err != nil || c.Score != 5 {
		t.Errorf("key-less write: score %+v %v, want 5 (applied once)", c, err)
	}

	p.armed.Store(true)
	res, err := s.Write(ctx, "b", ranking.Event{Member: "keyed", Value: 5, ID: "k1"})
	if err != nil || !res.Duplicate {
		t.Errorf("keyed write whose answer was lost: %+v %v, want the store's own retry answered as a duplicate", res, err)
	}
	if c, err := s.Member(ctx, "b", "all", "keyed", ranking.MemberQuery{}); err != nil || c.Score != 5 {
		t.Errorf("keyed write: score %+v %v, want 5 (applied once)", c, err)
	}
}

// mustOwnServer starts a Redis of the test's own, to stop and kill.
func mustOwnServer(t *testing.T) *redistest.Server {
	t.Helper()
	redistest.MustStandalone(t) // skips when Redis is not available
	srv, err := redistest.StartServer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// pause stops a Redis process (SIGSTOP) until the returned func or the
// end of the test resumes it.
func pause(t *testing.T, pid int) (resume func()) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(resume)
	return resume
}

// TestWriteOutcomes: while Redis hangs (SIGSTOP) a write, and the first
// script call of a batch, answer unavailable with outcome unknown, the
// batch's later events "not applied"; once Redis resumes, exactly what was
// sent is applied, once. With Redis gone (connections refused) a write is
// "not applied".
func TestWriteOutcomes(t *testing.T) {
	t.Parallel() // waits on timeouts, its own servers or prefix
	srv := mustOwnServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	s := sharedStore(t, rdb, MustConfig(t, "boards: [{id: b, views: [day, all]}]\n"), nil)
	ctx := context.Background()
	if _, err := s.Write(ctx, "b", ranking.Event{Member: "warm", Value: 1}); err != nil {
		t.Fatal(err)
	}
	events := make([]ranking.Event, 250)
	for i := range events {
		events[i] = ranking.Event{Member: "m" + strconv.Itoa(i), Value: 1}
	}

	// Two connections ready before Redis hangs (the hung write's is closed
	// when it times out): one opened while Redis hangs fails its handshake
	// before the call is sent, and the call is then "not applied".
	k1, k2 := rdb.Conn(), rdb.Conn()
	if k1.Ping(ctx).Err() != nil || k2.Ping(ctx).Err() != nil {
		t.Fatal("ping")
	}
	k1.Close()
	k2.Close()
	resume := pause(t, srv.PID())
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 300*time.Millisecond) }
	c1, cancel := short()
	_, err := s.Write(c1, "b", ranking.Event{Member: "hung", Value: 3})
	cancel()
	if ranking.ErrorCode(err) != ranking.EUNAVAILABLE || ranking.ErrorOutcome(err) != ranking.OutcomeUnknown {
		t.Errorf("write while Redis hangs: %v (outcome %q), want unavailable, outcome unknown", err, ranking.ErrorOutcome(err))
	}
	c2, cancel := short()
	res, err := s.Apply(c2, "b", events, ranking.ApplyOptions{})
	cancel()
	if err != nil || len(res) != len(events) {
		t.Fatalf("batch while Redis hangs: %d results, %v; want one per event", len(res), err)
	}
	for i, r := range res {
		want := ranking.OutcomeNotApplied
		if i < 100 {
			want = ranking.OutcomeUnknown // the first script call was sent
		}
		if ranking.ErrorCode(r.Err) != ranking.EUNAVAILABLE || ranking.ErrorOutcome(r.Err) != want {
			t.Fatalf("batch event %d: %v (outcome %q), want unavailable, outcome %s", i, r.Err, ranking.ErrorOutcome(r.Err), want)
		}
	}
	resume()
	testsupport.WaitFor(t, "the hung write applied after Redis resumed", func() bool {
		c, err := s.Member(ctx, "b", "all", "hung", ranking.MemberQuery{})
		return err == nil && c.Score == 3
	})
	testsupport.WaitFor(t, "the batch's first call applied after Redis resumed", func() bool {
		pg, err := s.Page(ctx, "b", "all", ranking.PageQuery{Limit: 1000})
		return err == nil && pg.Total == 102 // warm, hung and the first 100
	})
	time.Sleep(100 * time.Millisecond) // nothing more arrives later
	if c, err := s.Member(ctx, "b", "all", "hung", ranking.MemberQuery{}); err != nil || c.Score != 3 {
		t.Errorf("hung write: %+v %v, want applied once (3)", c, err)
	}
	if pg, err := s.Page(ctx, "b", "all", ranking.PageQuery{Limit: 1000}); err != nil || pg.Total != 102 {
		t.Errorf("after the batch: %d members %v, want 102", pg.Total, err)
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	c3, cancel := short()
	_, err = s.Write(c3, "b", ranking.Event{Member: "gone", Value: 1})
	cancel()
	if ranking.ErrorCode(err) != ranking.EUNAVAILABLE || ranking.ErrorOutcome(err) != ranking.OutcomeNotApplied {
		t.Errorf("write with Redis gone: %v (outcome %q), want unavailable, outcome not_applied", err, ranking.ErrorOutcome(err))
	}
}

// TestActionOneBoardStalls: on a cluster where one board's master hangs,
// an action's healthy board is written and the stalled one answers
// unavailable, outcome unknown, whatever their order; once the master
// resumes, the stalled write is applied once.
func TestActionOneBoardStalls(t *testing.T) {
	t.Parallel()             // waits on timeouts, its own servers or prefix
	redistest.MustCluster(t) // skips when Redis is not available
	ctx := context.Background()
	c, err := redistest.StartCluster(ctx, redistest.ClusterMasters)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Two boards whose hash tags live on different masters.
	var ids []string
	var nodes []int
	for i := 0; len(ids) < 2; i++ {
		id := "b" + strconv.Itoa(i)
		n, err := c.SlotOwner(ctx, redistest.KeySlot("{"+id+"}"))
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) == 0 || nodes[0] != n {
			ids, nodes = append(ids, id), append(nodes, n)
		}
	}
	stalled, healthy := ids[0], ids[1]
	cfg := MustConfig(t, fmt.Sprintf("boards: [{id: %s, views: [all]}, {id: %s, views: [all]}]\nactions:\n  go: [{board: %s}, {board: %s, value: 2}]\n", stalled, healthy, stalled, healthy))
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	s := newStore(t, rdb, cfg, nil)
	if _, err := s.Act(ctx, "go", ranking.Event{Member: "warm"}); err != nil {
		t.Fatal(err)
	}

	resume := pause(t, c.Nodes[nodes[0]].PID())
	actx, cancel := context.WithTimeout(ctx, time.Second) // well below the cluster's node timeout
	res, err := s.Act(actx, "go", ranking.Event{Member: "ann"})
	cancel()
	resume()
	if err != nil || len(res) != 2 {
		t.Fatalf("action: %+v %v", res, err)
	}
	if r := res[0]; r.Board != stalled || ranking.ErrorCode(r.Err) != ranking.EUNAVAILABLE || ranking.ErrorOutcome(r.Err) != ranking.OutcomeUnknown {
		t.Errorf("stalled board %s: %+v (outcome %q), want unavailable, outcome unknown", stalled, r, ranking.ErrorOutcome(r.Err))
	}
	if r := res[1]; r.Board != healthy || r.Err != nil || r.Result.Views[0].Score != 2 {
		t.Errorf("healthy board %s: %+v, want written (2)", healthy, r)
	}
	testsupport.WaitFor(t, "the stalled board's write applied after its master resumed", func() bool {
		m, err := s.Member(ctx, stalled, "all", "ann", ranking.MemberQuery{})
		return err == nil && m.Score == 1
	})
}
