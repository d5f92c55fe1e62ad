package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/standings/standings/internal/testsupport"
	"github.com/standings/standings/web"
)

// dialHeader dials a live feed with extra request headers.
func (f *liveFixture) dialHeader(tb testing.TB, path string, h http.Header) *websocket.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.http.URL, "http")+path, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		tb.Fatal(err)
	}
	c.SetReadLimit(1 << 22)
	tb.Cleanup(func() { c.CloseNow() })
	return c
}

// closedWith reads from c until it ends and returns its close status and
// reason.
func closedWith(tb testing.TB, c *websocket.Conn) (websocket.StatusCode, string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		_, _, err := c.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if ok := asCloseError(err, &ce); ok {
				return ce.Code, ce.Reason
			}
			tb.Fatalf("connection ended without a close frame: %v", err)
		}
	}
}

func asCloseError(err error, ce *websocket.CloseError) bool {
	code := websocket.CloseStatus(err)
	if code == -1 {
		return false
	}
	// CloseStatus found one; unwrap it for the reason.
	for e := err; e != nil; {
		if c, ok := e.(websocket.CloseError); ok {
			*ce = c
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	*ce = websocket.CloseError{Code: code}
	return true
}

// waitMetric polls a metric until it has the wanted value (the server
// notices a closed connection asynchronously).
func waitMetric(tb testing.TB, f *liveFixture, name string, want float64) {
	tb.Helper()
	testsupport.WaitFor(tb, fmt.Sprintf("%s = %v", name, want), func() bool { return metric(tb, f, name) == want })
}

func TestLivePerClientLimit(t *testing.T) {
	f := MustLive(t, nil, web.Options{LiveMaxPerClient: 3})
	f.write(t, "points", `{"member":"alice","value":5}`)
	var open []*websocket.Conn
	for range 3 {
		c := f.dial(t, "/ws/points/week?limit=3")
		next(t, c)
		open = append(open, c)
	}
	over := f.dial(t, "/ws/points/week?limit=3")
	if code, reason := closedWith(t, over); code != websocket.StatusTryAgainLater || reason != "too many live connections from this address" {
		t.Fatalf("over the limit: %v %q, want 1013 and the per-address reason", code, reason)
	}
	if v := metric(t, f, "standings_live_viewers"); v != 3 {
		t.Errorf("%v viewers, want 3 (a refused connection is none)", v)
	}
	if v := metric(t, f, `standings_live_refused_total{limit="per_client"}`); v != 1 {
		t.Errorf("%v refusals counted, want 1", v)
	}
	// A closed connection frees its slot.
	open[0].Close(websocket.StatusNormalClosure, "")
	waitMetric(t, f, "standings_live_viewers", 2)
	again := f.dial(t, "/ws/points/week?limit=3")
	if !strings.Contains(next(t, again), "alice") {
		t.Error("no snapshot after a slot was freed")
	}
}

func TestLiveTotalLimit(t *testing.T) {
	f := MustLive(t, nil, web.Options{LiveMaxConns: 2, LiveMaxPerClient: 100})
	a := f.dial(t, "/ws/points/week")
	next(t, a)
	b := f.dial(t, "/ws/points/week?member=nobody")
	next(t, b)
	over := f.dial(t, "/ws/points/day")
	if code, reason := closedWith(t, over); code != websocket.StatusTryAgainLater || reason != "server at its live connection limit" {
		t.Fatalf("over the limit: %v %q, want 1013 and the server-full reason", code, reason)
	}
	if v := metric(t, f, `standings_live_refused_total{limit="total"}`); v != 1 {
		t.Errorf("%v refusals counted, want 1", v)
	}
	if v := metric(t, f, "standings_live_viewers"); v != 2 {
		t.Errorf("%v viewers, want 2", v)
	}
	b.Close(websocket.StatusNormalClosure, "")
	waitMetric(t, f, "standings_live_viewers", 1)
	next(t, f.dial(t, "/ws/points/day"))
}

func TestLiveClientAddressIgnoresForwardedForUnlessTrusted(t *testing.T) {
	xff := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	t.Run("untrusted", func(t *testing.T) {
		f := MustLive(t, nil, web.Options{LiveMaxPerClient: 2})
		for i := range 2 {
			next(t, f.dialHeader(t, "/ws/points/week", xff(fmt.Sprintf("203.0.113.%d", i+1))))
		}
		// A forged header does not buy a new slot.
		if code, _ := closedWith(t, f.dialHeader(t, "/ws/points/week", xff("203.0.113.9"))); code != websocket.StatusTryAgainLater {
			t.Errorf("forged X-Forwarded-For got a slot (%v)", code)
		}
	})
	t.Run("trusted proxy", func(t *testing.T) {
		_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
		f := MustLive(t, nil, web.Options{LiveMaxPerClient: 2, TrustedProxies: []*net.IPNet{loopback}})
		for range 2 {
			next(t, f.dialHeader(t, "/ws/points/week", xff("203.0.113.1")))
		}
		if code, _ := closedWith(t, f.dialHeader(t, "/ws/points/week", xff("198.51.100.1, 203.0.113.1"))); code != websocket.StatusTryAgainLater {
			t.Errorf("a third connection of 203.0.113.1 behind the proxy: %v", code)
		}
		next(t, f.dialHeader(t, "/ws/points/week", xff("203.0.113.2")))
		// IPv6 clients count by /64.
		next(t, f.dialHeader(t, "/ws/points/week", xff("2001:db8::1")))
		next(t, f.dialHeader(t, "/ws/points/week", xff("2001:db8::2")))
		if code, _ := closedWith(t, f.dialHeader(t, "/ws/points/week", xff("2001:db8::ffff:3"))); code != websocket.StatusTryAgainLater {
			t.Errorf("a third address of one IPv6 /64: %v", code)
		}
	})
}

// 2,000 viewers of members without a score cost about one render a tick
// (read from the render counter against the frames of a table viewer),
// the table viewer gets a frame for every write, and a ghost that starts
// scoring gets its own headline.
func TestLiveGhostViewersDoNotMultiplyRenders(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 websockets")
	}
	const ghosts = 2000
	f := MustLive(t, nil, web.Options{LiveTick: 50 * time.Millisecond, LiveMaxConns: ghosts + 10, LiveMaxPerClient: ghosts + 10})
	f.write(t, "points", `{"member":"alice","value":5}`)
	table := f.dial(t, "/ws/points/day?limit=5")
	next(t, table)

	conns := make([]*websocket.Conn, ghosts)
	var wg sync.WaitGroup
	errs := make(chan error, ghosts)
	sem := make(chan struct{}, 64) // bounded dialing
	for i := range conns {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.http.URL, "http")+fmt.Sprintf("/ws/points/day?member=ghost-%d", i), nil)
			if err != nil {
				errs <- err
				return
			}
			conns[i] = c
			if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), "no score now") {
				errs <- fmt.Errorf("ghost %d: %q %v", i, b, err)
			}
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.CloseNow()
			}
		}
	})
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v := metric(t, f, "standings_live_viewers"); v != ghosts+1 {
		t.Fatalf("%v viewers", v)
	}

	// Every write changes the table: its viewer must see each one, and
	// each costs a table render and a look-up of the ghosts, not one
	// render per ghost.
	const writes = 20
	before := liveRenders(t, f)
	for i := range writes {
		f.write(t, "points", fmt.Sprintf(`{"member":"alice","value":%d}`, i+1))
		want := fmt.Sprint(5 + (i+1)*(i+2)/2)
		until(t, table, func(s string) bool { return strings.Contains(s, ">"+want+"<") })
	}
	renders := liveRenders(t, f) - before
	t.Logf("%v renders for %d writes with %d ghost viewers", renders, writes, ghosts)
	// Per write: the table, and the shared topic (a sweep of 2,000 takes
	// two looks); slack for the 5 s refresh.
	if limit := float64(writes*3 + 6); renders > limit {
		t.Errorf("%v renders for %d writes with %d ghost viewers; want at most %v", renders, writes, ghosts, limit)
	}

	// ghost-1234 scores: its viewer gets its rank.
	f.write(t, "points", `{"member":"ghost-1234","value":1}`)
	until(t, conns[1234], func(s string) bool { return strings.Contains(s, "#2") })
}
