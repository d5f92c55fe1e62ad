package redistest_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking/redistest"
)

// TestServerStopStart: a stopped server refuses connections and comes back
// empty on the same address; Start refuses a running or closed server.
func TestServerStopStart(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := redistest.StartServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Error("Start of a running server: want an error")
	}

	addr, pid := s.Addr, s.PID()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertGone(t, pid)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after Stop", addr)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if s.Addr != addr || s.PID() == pid {
		t.Errorf("after Start: addr %s pid %d, want addr %s and a new process (old pid %d)", s.Addr, s.PID(), addr, pid)
	}
	if n, err := rdb.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Errorf("EXISTS k after restart = %d, %v; want 0 (nothing persisted)", n, err)
	}

	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Start(ctx); err == nil {
		t.Error("Start after Close: want an error")
	}
}

// TestDurableServerStopStart: a durable server killed by Stop comes back on
// the same address with every write it acknowledged.
func TestDurableServerStopStart(t *testing.T) {
	needRedis(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := redistest.StartDurableServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	for _, cfg := range [][2]string{{"appendonly", "yes"}, {"appendfsync", "always"}} {
		got, err := rdb.ConfigGet(ctx, cfg[0]).Result()
		if err != nil || got[cfg[0]] != cfg[1] {
			t.Errorf("CONFIG GET %s = %v, %v; want %s", cfg[0], got, err, cfg[1])
		}
	}
	const n = 100
	for i := range n {
		if err := rdb.IncrBy(ctx, "counter", 1).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.ZAdd(ctx, "z", redis.Z{Score: float64(i), Member: i}).Err(); err != nil {
			t.Fatal(err)
		}
	}

	addr, pid := s.Addr, s.PID()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertGone(t, pid)
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if s.Addr != addr {
		t.Errorf("after Start: addr %s, want %s", s.Addr, addr)
	}
	if got, err := rdb.Get(ctx, "counter").Int(); err != nil || got != n {
		t.Errorf("counter after restart = %d, %v; want %d", got, err, n)
	}
	if got, err := rdb.ZCard(ctx, "z").Result(); err != nil || got != n {
		t.Errorf("ZCARD z after restart = %d, %v; want %d", got, err, n)
	}
}
