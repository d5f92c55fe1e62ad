package redistest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking/redistest"
)

// MustDedicatedCluster starts a cluster of 3 masters of its own, closed when
// tb ends: tests that reshard must not use the shared one.
func MustDedicatedCluster(tb testing.TB) *redistest.Cluster {
	tb.Helper()
	c, err := redistest.StartCluster(context.Background(), 3)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

func nodeClient(tb testing.TB, addr string) *redis.Client {
	tb.Helper()
	cl := redis.NewClient(&redis.Options{Addr: addr})
	tb.Cleanup(func() { cl.Close() })
	return cl
}

func countKeys(tb testing.TB, ctx context.Context, addr string, slot int) int64 {
	tb.Helper()
	n, err := nodeClient(tb, addr).ClusterCountKeysInSlot(ctx, slot).Result()
	if err != nil {
		tb.Fatalf("%s: CLUSTER COUNTKEYSINSLOT %d: %v", addr, slot, err)
	}
	return n
}

// slotServer returns the address that serves slot according to the node at addr.
func slotServer(tb testing.TB, ctx context.Context, addr string, slot int) string {
	tb.Helper()
	slots, err := nodeClient(tb, addr).ClusterSlots(ctx).Result()
	if err != nil {
		tb.Fatalf("%s: CLUSTER SLOTS: %v", addr, err)
	}
	for _, s := range slots {
		if slot >= s.Start && slot <= s.End && len(s.Nodes) > 0 {
			return s.Nodes[0].Addr
		}
	}
	return ""
}

func TestKeySlot(t *testing.T) {
	ctx := t.Context()
	node := nodeClient(t, redistest.MustCluster(t)[0])
	for _, key := range []string{"", "a", "foo", "123456789", "{user1000}.following", "standings:{points}:z:all:all",
		"x{}y", "{}", "a{b", "a}b{c}", "{{x}}", "ünï{ß}", "prefix:{p}:", "{p}"} {
		want, err := node.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := redistest.KeySlot(key); int64(got) != want {
			t.Errorf("KeySlot(%q) = %d, CLUSTER KEYSLOT says %d", key, got, want)
		}
	}
}

func TestMoveSlot(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	c := MustDedicatedCluster(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { cc.Close() })

	const tag, n = "{mv}", 95
	slot := redistest.KeySlot(tag)
	from, err := c.SlotOwner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	to := (from + 1) % len(c.Addrs)
	for i := range n {
		ttl := time.Duration(0)
		if i%10 == 0 {
			ttl = 10 * time.Minute
		}
		if err := cc.Set(ctx, fmt.Sprintf("%s:k%d", tag, i), i, ttl).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cc.HSet(ctx, tag+":h", "f", "v").Err(); err != nil {
		t.Fatal(err)
	}

	// readAll reads every key through the cluster client: moved keys by ASK
	// from the source, the rest where they are.
	readAll := func(cl *redis.ClusterClient) {
		t.Helper()
		for i := range n {
			got, err := cl.Get(ctx, fmt.Sprintf("%s:k%d", tag, i)).Int()
			if err != nil || got != i {
				t.Fatalf("GET %s:k%d = %d, %v; want %d", tag, i, got, err, i)
			}
		}
		if got, err := cl.HGet(ctx, tag+":h", "f").Result(); err != nil || got != "v" {
			t.Fatalf("HGET %s:h f = %q, %v", tag, got, err)
		}
	}

	var steps []int
	m, err := c.MoveSlot(ctx, slot, to, redistest.MoveOptions{
		Batch: 10,
		Between: func(ctx context.Context, moved int) error {
			steps = append(steps, moved)
			// Half-moved: both nodes hold part of the slot, the cluster
			// client still finds every key.
			if src, dst := countKeys(t, ctx, c.Addrs[from], slot), countKeys(t, ctx, c.Addrs[to], slot); src+dst != n+1 || int(dst) != moved {
				t.Fatalf("after %d keys moved: source holds %d, target %d", moved, src, dst)
			}
			readAll(cc)
			return nil
		},
	})
	if err != nil {
		t.Fatalf("MoveSlot: %v", err)
	}
	if want := []int{10, 20, 30, 40, 50, 60, 70, 80, 90, 96}; !slices.Equal(steps, want) {
		t.Errorf("batches ended at %v keys, want %v", steps, want)
	}
	if m.Moved() != n+1 || len(m.Conflicts()) != 0 {
		t.Errorf("Moved %d keys with conflicts %v; want %d and none", m.Moved(), m.Conflicts(), n+1)
	}

	// Every master agrees that the target serves the slot, and only it
	// holds the keys, expiry included.
	for _, addr := range c.Addrs {
		if got := slotServer(t, ctx, addr, slot); got != c.Addrs[to] {
			t.Errorf("master %s says slot %d is served by %s, want %s", addr, slot, got, c.Addrs[to])
		}
	}
	if src, dst := countKeys(t, ctx, c.Addrs[from], slot), countKeys(t, ctx, c.Addrs[to], slot); src != 0 || dst != n+1 {
		t.Errorf("after the move: source holds %d keys, target %d; want 0 and %d", src, dst, n+1)
	}
	dst := nodeClient(t, c.Addrs[to])
	if ttl, err := dst.PTTL(ctx, tag+":k10").Result(); err != nil || ttl <= 0 {
		t.Errorf("PTTL %s:k10 on the target = %v, %v; want the expiry kept", tag, ttl, err)
	}
	if ttl, err := dst.PTTL(ctx, tag+":k11").Result(); err != nil || ttl != -1 {
		t.Errorf("PTTL %s:k11 on the target = %v, %v; want no expiry", tag, ttl, err)
	}
	readAll(cc)
	fresh := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	defer fresh.Close()
	readAll(fresh)

	// Moving a slot to the master that already serves it is refused.
	if _, err := c.BeginMove(ctx, slot, to); err == nil || !strings.Contains(err.Error(), "already served") {
		t.Errorf("BeginMove to the owner: %v", err)
	}
}

// TestMoveSlotConflict: a key written on the target before its copy moved
// fails the move, or with Replace is overwritten and reported.
func TestMoveSlotConflict(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	c := MustDedicatedCluster(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { cc.Close() })

	const tag = "{clash}"
	slot := redistest.KeySlot(tag)
	from, err := c.SlotOwner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	to := (from + 2) % len(c.Addrs)
	for _, k := range []string{"a", "b", "c"} {
		if err := cc.Set(ctx, tag+k, "source", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	m, err := c.BeginMove(ctx, slot, to)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// A write the target accepts (ASKING) for a key the source still has.
	conn := nodeClient(t, c.Addrs[to]).Conn()
	defer conn.Close()
	if _, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "ASKING")
		p.Set(ctx, tag+"b", "target", 0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	err = m.MoveKeys(ctx, tag+"a", tag+"b", tag+"c")
	if err == nil || !strings.Contains(err.Error(), "BUSYKEY") || !strings.Contains(err.Error(), tag+"b") {
		t.Fatalf("MoveKeys onto a clashing key: %v; want a BUSYKEY error naming it", err)
	}
	m.Replace = true
	if err := m.MoveKeys(ctx, tag+"b", tag+"c"); err != nil {
		t.Fatal(err)
	}
	if got := m.Conflicts(); !slices.Equal(got, []string{tag + "b"}) {
		t.Errorf("Conflicts = %q", got)
	}
	if err := m.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if got, err := cc.Get(ctx, tag+k).Result(); err != nil || got != "source" {
			t.Errorf("GET %s%s = %q, %v; want the source's copy", tag, k, got, err)
		}
	}
	if src := countKeys(t, ctx, c.Addrs[from], slot); src != 0 {
		t.Errorf("source still holds %d keys", src)
	}
}
