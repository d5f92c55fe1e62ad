package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/ranking/redistest"
	"github.com/standings/standings/web"
)

// MustRateLimited checks a 429 rate_limited answer with a whole-second
// Retry-After of at least 1.
func MustRateLimited(tb testing.TB, r response, retryAfter string) {
	tb.Helper()
	if r.Status != http.StatusTooManyRequests || r.ErrorCode(tb) != "rate_limited" {
		tb.Fatalf("status %d body %s, want 429 rate_limited", r.Status, r.Body)
	}
	if got := r.Header.Get("Retry-After"); got != retryAfter {
		tb.Fatalf("Retry-After %q, want %q", got, retryAfter)
	}
}

// TestWriteRateLimit: on miniredis's clock, 2 events per second with
// bursts of 4, per API key; a batch costs its events; refused writes
// change nothing.
func TestWriteRateLimit(t *testing.T) {
	f := MustFixtureWith(t, web.Options{WriteRate: 2})
	const scores, batch = "/api/v1/boards/points/scores", "/api/v1/boards/points/scores/batch"
	for i := range 4 {
		MustOK(t, f.do(t, "POST", scores, writeKey, fmt.Sprintf(`{"member":"m%d","value":1}`, i)))
	}
	before := f.dump()
	MustRateLimited(t, f.do(t, "POST", scores, writeKey, `{"member":"late","value":1}`), "1")
	MustRateLimited(t, f.do(t, "POST", batch, writeKey, `{"events":[{"member":"late","value":1}]}`), "1")
	f.MustUnchanged(t, before)

	// The admin key has a budget of its own.
	MustOK(t, f.do(t, "POST", scores, adminKey, `{"member":"admin","value":1}`))

	// One second later two events are allowed: a batch of three is
	// refused whole, a batch of two passes.
	f.mr.SetTime(testNow.Add(time.Second))
	before = f.dump() // the admin key's budget is full again, so gone
	MustRateLimited(t, f.do(t, "POST", batch, writeKey, `{"events":[{"member":"b1","value":1},{"member":"b2","value":1},{"member":"b3","value":1}]}`), "1")
	f.MustUnchanged(t, before)
	MustOK(t, f.do(t, "POST", batch, writeKey, `{"events":[{"member":"b1","value":1},{"member":"b2","value":1}]}`))

	// Four seconds later the burst is back, no more.
	f.mr.SetTime(testNow.Add(5 * time.Second))
	r := MustOK(t, f.do(t, "POST", batch, writeKey, `{"events":[{"member":"c1","value":1},{"member":"c2","value":1},{"member":"c3","value":1},{"member":"c4","value":1}]}`))
	if strings.Contains(r.Body, `"error"`) {
		t.Fatalf("batch: %s", r.Body)
	}
	// Bad input costs nothing and is refused as such, not as over the rate.
	if r := f.do(t, "POST", scores, writeKey, `{"member":"x","value":"1"}`); r.Status != 400 {
		t.Fatalf("bad input over the rate: %d %s", r.Status, r.Body)
	}
	// A batch larger than the burst could never pass: 422, not 429.
	f.mr.SetTime(testNow.Add(time.Hour))
	var big strings.Builder
	big.WriteString(`{"events":[`)
	for i := range 5 {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `{"member":"d%d","value":1}`, i)
	}
	big.WriteString(`]}`)
	if r := f.do(t, "POST", batch, writeKey, big.String()); r.Status != 422 || r.ErrorCode(t) != "invalid_argument" {
		t.Fatalf("batch over the burst: %d %s", r.Status, r.Body)
	}
}

// TestWriteRateSharedAcrossInstances: two Servers on one real Redis spend
// one budget per API key.
func TestWriteRateSharedAcrossInstances(t *testing.T) {
	if err := redistest.Available(); err != nil {
		if redistest.Required() {
			t.Fatal(err)
		}
		t.Skipf("Redis is not available: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rs, err := redistest.StartServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	cfg, err := ranking.ParseConfig([]byte(testBoards))
	if err != nil {
		t.Fatal(err)
	}
	var servers [2]*fixture
	for i := range servers {
		rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
		t.Cleanup(func() { rdb.Close() })
		store := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: ranking.DefaultPrefix})
		srv := web.NewServer(web.Options{
			Store: store, Feed: store, Config: cfg,
			WriteKeys: []string{writeKey}, WriteRate: 1, // bursts of 2; the test takes far less than a second
		})
		t.Cleanup(srv.Close)
		servers[i] = &fixture{srv: srv, handler: srv.Handler()}
	}
	a, b := servers[0], servers[1]
	MustOK(t, a.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"x","value":1}`))
	MustOK(t, b.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"y","value":1}`))
	for _, s := range servers {
		r := s.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"z","value":1}`)
		if r.Status != http.StatusTooManyRequests || r.ErrorCode(t) != "rate_limited" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("third write: %d %v %s", r.Status, r.Header, r.Body)
		}
	}
	card := a.get(t, "/api/v1/boards/points/all/members/z")
	if card.Status != http.StatusNotFound {
		t.Fatalf("a refused write was applied: %d %s", card.Status, card.Body)
	}
}
