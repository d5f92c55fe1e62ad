package web

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTickCache: a value serves its key for a tick under the board's
// generation; concurrent misses build once; failures and values that do
// not fit the limit are not kept; expired entries make room.
func TestTickCache(t *testing.T) {
	gens := map[string]uint64{}
	var mu sync.Mutex
	gen := func(b string) uint64 {
		mu.Lock()
		defer mu.Unlock()
		return gens[b]
	}
	size := func(key string, v string) int { return len(v) }
	tc := newTickCache(time.Hour, gen, 10, size)
	var builds atomic.Int32
	build := func(v string) func() (string, bool, error) {
		return func() (string, bool, error) {
			builds.Add(1)
			time.Sleep(5 * time.Millisecond)
			return v, true, nil
		}
	}
	get := func(board, key, v string) string {
		t.Helper()
		got, err := tc.get(board, key, build(v))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { get("b", "k", "aaaa") })
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("20 concurrent misses built %d times, want 1", n)
	}
	if got := get("b", "k", "new"); got != "aaaa" || builds.Load() != 1 {
		t.Fatalf("within a tick: %q after %d builds", got, builds.Load())
	}
	// A local write moves the generation: the next read builds again.
	mu.Lock()
	gens["b"]++
	mu.Unlock()
	if got := get("b", "k", "bbbb"); got != "bbbb" {
		t.Fatalf("after a write: %q", got)
	}
	// 4 + 4 of 10 used: a 4-byte value does not fit and is not kept.
	get("c", "k2", "cccc")
	get("d", "k3", "dddd")
	if _, ok := tc.entries["k3"]; ok || tc.used != 8 {
		t.Fatalf("over the limit: kept %v, used %d", tc.entries, tc.used)
	}
	// Failures are never kept.
	fail := errors.New("down")
	if _, err := tc.get("e", "k4", func() (string, bool, error) { return "", true, fail }); !errors.Is(err, fail) {
		t.Fatalf("failure: %v", err)
	}
	if _, ok := tc.entries["k4"]; ok {
		t.Fatal("a failure was kept")
	}
	// Once expired, old entries make room (a cache whose tick is 1 ms).
	short := newTickCache(time.Millisecond, gen, 10, size)
	for _, k := range []string{"k1", "k2"} {
		if _, err := short.get("b", k, build("eeee")); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := short.get("b", "k3", build("ffff")); err != nil {
		t.Fatal(err)
	}
	if _, ok := short.entries["k3"]; !ok || short.used != 4 {
		t.Fatalf("after expiry: kept %v, used %d", short.entries, short.used)
	}
}
