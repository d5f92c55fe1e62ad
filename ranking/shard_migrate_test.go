package ranking_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// TestShardedWritesWhileSlotMigrates moves the slot of one shard of a
// sharded board to another master in small batches while four writers send
// events with unique ids (retried with their id until acknowledged) to that
// board and to a board of one shard whose slot stays put. Afterwards every
// view of both reads the same, page by page: nothing lost, nothing counted
// twice on the shard that moved.
func TestShardedWritesWhileSlotMigrates(t *testing.T) {
	const (
		members   = 200
		startMove = 200  // events acknowledged before the move starts
		minEvents = 1200 // events, at least, and the move done
		maxEvents = 3000
		writers   = 4
	)
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	c, cc, rd := MustMovingCluster(t)
	cfg := MustConfig(t, fmt.Sprintf(`
timezone: %s
boards:
  - {id: one, update: increment, ties: first, views: [hour, day, week, all, 7d]}
  - {id: sh, shards: 3, update: increment, ties: first, views: [hour, day, week, all, 7d]}
`, zoneAwayFromMidnight(time.Now())))
	store := ranking.StoreOnClient(cc, cfg, ranking.Options{})
	sh, _ := cfg.Board("sh")
	slot := redistest.KeySlot("{" + ranking.ShardTag(sh, 1) + "}")
	from, err := c.SlotOwner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	to := (from + 1) % len(c.Addrs)

	var (
		issued, acked atomic.Int64
		moveDone      atomic.Bool
		errMu         sync.Mutex
		errCodes      = map[string]int{}
		lastErr       string
		started       = make(chan struct{})
		startOnce     sync.Once
	)
	write := func(board string, ev ranking.Event) bool {
		for ctx.Err() == nil {
			_, err := store.Write(ctx, board, ev)
			if err == nil {
				return true
			}
			errMu.Lock()
			errCodes[ranking.ErrorCode(err)]++
			lastErr = err.Error()
			errMu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
		return false
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 23))
			for n := 0; ; n++ {
				if (moveDone.Load() && acked.Load() >= minEvents) || issued.Add(1) > maxEvents {
					return
				}
				now, err := store.Now(ctx)
				if err != nil {
					now = time.Now()
				}
				ev := ranking.Event{
					Member: fmt.Sprintf("m%03d", r.IntN(members)),
					Value:  1 + r.Int64N(3),
					ID:     fmt.Sprintf("w%d-%d", w, n),
					// Explicit times on a 100 ms grid: both boards tie alike.
					At: now.Add(-time.Duration(r.IntN(2000)) * time.Millisecond).Truncate(100 * time.Millisecond),
				}
				if !write("sh", ev) || !write("one", ev) {
					return
				}
				if acked.Add(1) >= startMove {
					startOnce.Do(func() { close(started) })
				}
			}
		})
	}
	select {
	case <-started:
	case <-ctx.Done():
	}
	move, moveErr := c.MoveSlot(ctx, slot, to, redistest.MoveOptions{
		Batch:   10,
		Replace: true,
		Between: func(ctx context.Context, _ int) error {
			target := acked.Load() + 10
			for deadline := time.Now().Add(20 * time.Millisecond); time.Now().Before(deadline) && acked.Load() < target; {
				time.Sleep(time.Millisecond)
			}
			return ctx.Err()
		},
	})
	moveDone.Store(true)
	wg.Wait()
	if moveErr != nil {
		t.Fatalf("moving slot %d: %v", slot, moveErr)
	}
	if ctx.Err() != nil {
		t.Fatalf("the test ran out of time: %d events acknowledged; errors %v, last %q", acked.Load(), errCodes, lastErr)
	}
	t.Logf("%v: %d keys; %d events acknowledged on both boards; errors by code %v; the nodes answered %v", move, move.Moved(), acked.Load(), errCodes, rd)
	for code, n := range errCodes {
		if code != ranking.EUNAVAILABLE {
			t.Errorf("%d writes failed with %q during the move (last %q), want only %q", n, code, lastErr, ranking.EUNAVAILABLE)
		}
	}
	if cf := move.Conflicts(); len(cf) > 0 {
		t.Errorf("%d keys were written on the new master before they moved, e.g. %q", len(cf), cf[:min(len(cf), 5)])
	}
	for _, v := range sh.Views {
		for off := 0; ; off += ranking.MaxLimit {
			q := ranking.PageQuery{Offset: off, Limit: ranking.MaxLimit}
			want, err := store.Page(ctx, "one", v.Name, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := store.Page(ctx, "sh", v.Name, q)
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != want.Total || !slices.Equal(got.Entries, want.Entries) {
				t.Fatalf("%s offset %d after the move:\n got %d %v\nwant %d %v", v.Name, off, got.Total, got.Entries, want.Total, want.Entries)
			}
			if len(want.Entries) < ranking.MaxLimit {
				break
			}
		}
	}
}
