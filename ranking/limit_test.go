package ranking_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
)

// bucketModel is the brute-force reference: a token bucket of burst
// tokens refilled at rate per second, in exact microseconds.
type bucketModel struct {
	rate, burst int64
	tokensUS    int64 // tokens × 1e6, so refills stay integral
	last        int64 // µs
}

func (m *bucketModel) take(nowUS, cost int64) (bool, int64) {
	m.tokensUS = min(m.burst*1e6, m.tokensUS+(nowUS-m.last)*m.rate)
	m.last = nowUS
	if m.tokensUS >= cost*1e6 {
		m.tokensUS -= cost * 1e6
		return true, 0
	}
	return false, (cost*1e6 - m.tokensUS + m.rate - 1) / m.rate
}

// TestTakeRateMatchesTokenBucket drives the limiter with miniredis's clock
// through random costs and pauses, against the model.
func TestTakeRateMatchesTokenBucket(t *testing.T) {
	t.Parallel() // its own miniredis
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	m, rdb := MustMiniredis(t, start)
	cfg := MustConfig(t, "boards: [{id: points}]\n")
	s := newStore(t, rdb, cfg, nil)
	ctx := context.Background()
	const rate, burst = 1000, 2000
	model := &bucketModel{rate: rate, burst: burst, tokensUS: burst * 1e6}
	rng := rand.New(rand.NewPCG(1, 2))
	now := int64(0)
	allowed, refused := 0, 0
	for i := range 3000 {
		now += rng.Int64N(3000) // 0..3 ms between requests
		m.SetTime(start.Add(time.Duration(now) * time.Microsecond))
		cost := 1 + rng.IntN(20)
		if rng.IntN(50) == 0 {
			cost = 1 + rng.IntN(1000) // a batch
		}
		got, err := s.TakeRate(ctx, "key-a", rate, burst, cost)
		if err != nil {
			t.Fatal(err)
		}
		ok, retry := model.take(now, int64(cost))
		if got.Allowed != ok {
			t.Fatalf("step %d (t=%dµs, cost %d): allowed %v, model %v", i, now, cost, got.Allowed, ok)
		}
		if d := got.RetryAfter - time.Duration(retry)*time.Microsecond; d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("step %d: retry after %v, model %dµs", i, got.RetryAfter, retry)
		}
		if ok {
			allowed++
		} else {
			refused++
		}
	}
	if allowed == 0 || refused == 0 {
		t.Fatalf("the run never crossed the limit: %d allowed, %d refused", allowed, refused)
	}
}

// TestTakeRateKeysAreSeparateAndHashed: each API key has its own budget,
// and Redis holds a digest of it, never the key.
func TestTakeRateKeysAreSeparateAndHashed(t *testing.T) {
	m, rdb := MustMiniredis(t, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	s := newStore(t, rdb, MustConfig(t, "boards: [{id: points}]\n"), nil)
	ctx := context.Background()
	for _, key := range []string{"secret-key-a", "secret-key-b"} {
		for i := range 4 {
			got, err := s.TakeRate(ctx, key, 2, 4, 1)
			if err != nil || !got.Allowed {
				t.Fatalf("%s #%d: %+v, %v", key, i, got, err)
			}
		}
		got, err := s.TakeRate(ctx, key, 2, 4, 1)
		if err != nil || got.Allowed || got.RetryAfter != 500*time.Millisecond {
			t.Fatalf("%s over the burst: %+v, %v; want refused, retry 500ms", key, got, err)
		}
	}
	for _, k := range m.Keys() {
		if strings.Contains(k, "secret") {
			t.Fatalf("Redis key %q holds the API key", k)
		}
	}
	if _, err := s.TakeRate(ctx, "secret-key-c", 2, 4, 5); ranking.ErrorCode(err) != ranking.EINVALID {
		t.Fatalf("cost over the burst: %v, want invalid_argument", err)
	}
}

// TestTakeRateOnEveryBackend: the script runs on real Redis and on a
// cluster (its one key declared), and a refusal records nothing.
func TestTakeRateOnEveryBackend(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			s := newStore(t, be.Client(t), MustConfig(t, "boards: [{id: points}]\n"), nil)
			ctx := context.Background()
			// 1 event per second, bursts of 3: the test takes well under
			// a second, so at most one more token can have come in.
			got, err := s.TakeRate(ctx, "k", 1, 3, 3)
			if err != nil || !got.Allowed {
				t.Fatalf("first burst: %+v, %v", got, err)
			}
			for range 5 {
				got, err = s.TakeRate(ctx, "k", 1, 3, 2)
				if err != nil || got.Allowed {
					t.Fatalf("over the burst: %+v, %v; want refused", got, err)
				}
				if got.RetryAfter <= time.Second || got.RetryAfter > 2*time.Second {
					t.Fatalf("retry after %v, want (1s, 2s]", got.RetryAfter)
				}
			}
		})
	}
}

// BenchmarkTakeRate is the cost the write rate check adds to a write: one
// script round trip to a local Redis.
func BenchmarkTakeRate(b *testing.B) {
	rdb := redistest.Client(b)
	s := rankingtest.MustStore(b, rdb, MustConfig(b, "boards: [{id: points}]\n"), ranking.Options{})
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.TakeRate(ctx, "bench-key", 1_000_000, 2_000_000, 1); err != nil {
			b.Fatal(err)
		}
	}
}
