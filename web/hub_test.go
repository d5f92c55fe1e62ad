package web_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/alicebob/miniredis/v2"
	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// liveFixture is a Server behind a real listener, for websocket tests.
type liveFixture struct {
	mr   *miniredis.Miniredis
	srv  *web.Server
	http *httptest.Server
}

// MustLive starts a Server with the given options on miniredis (mr, or a
// new one when nil).
func MustLive(tb testing.TB, mr *miniredis.Miniredis, opts web.Options) *liveFixture {
	tb.Helper()
	return MustLiveOf(tb, testBoards, mr, opts)
}

// MustLiveOf is MustLive with a boards file of the test's own.
func MustLiveOf(tb testing.TB, boards string, mr *miniredis.Miniredis, opts web.Options) *liveFixture {
	tb.Helper()
	cfg, err := ranking.ParseConfig([]byte(boards))
	if err != nil {
		tb.Fatal(err)
	}
	if mr == nil {
		mr = miniredis.RunT(tb)
		mr.SetTime(testNow)
	}
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	store := rankingtest.MustStore(tb, rdb, cfg, ranking.Options{Prefix: ranking.DefaultPrefix, Clock: func() time.Time { return testNow }})
	opts.Store, opts.Feed, opts.Config, opts.WriteKeys = store, store, cfg, []string{writeKey}
	srv := web.NewServer(opts)
	hs := httptest.NewServer(srv.Handler())
	tb.Cleanup(func() {
		srv.Close()
		hs.Close()
		rdb.Close()
	})
	return &liveFixture{mr: mr, srv: srv, http: hs}
}

func (f *liveFixture) write(tb testing.TB, board, body string) {
	tb.Helper()
	req, _ := http.NewRequest("POST", f.http.URL+"/api/v1/boards/"+board+"/scores", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+writeKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		tb.Fatalf("write %s: %d", body, res.StatusCode)
	}
}

func (f *liveFixture) dial(tb testing.TB, path string) *websocket.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.http.URL, "http")+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	c.SetReadLimit(1 << 22)
	tb.Cleanup(func() { c.CloseNow() })
	return c
}

// next reads one frame, failing after 5 s.
func next(tb testing.TB, c *websocket.Conn) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		tb.Fatalf("reading a frame: %v", err)
	}
	return string(b)
}

// until reads frames until one satisfies ok.
func until(tb testing.TB, c *websocket.Conn, ok func(frame string) bool) string {
	tb.Helper()
	for range 100 {
		if f := next(tb, c); ok(f) {
			return f
		}
	}
	tb.Fatal("no matching frame in 100")
	return ""
}

// untilRows applies frames to m (whole or diff, as the page does) until
// its rows, as "rank member score", satisfy ok.
func untilRows(tb testing.TB, c *websocket.Conn, m *web.LiveModel, ok func(rows string) bool) []string {
	tb.Helper()
	for range 100 {
		if err := m.Apply(next(tb, c)); err != nil {
			tb.Fatal(err)
		}
		if rows := m.Table(); ok(fmt.Sprint(rows)) {
			return rows
		}
	}
	tb.Fatal("no matching frame in 100")
	return nil
}

func frameRows(tb testing.TB, frame string) []string {
	tb.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(frame))
	if err != nil {
		tb.Fatal(err)
	}
	return tableRows(doc.Selection)
}

func TestLiveSnapshotThenChanges(t *testing.T) {
	f := MustLive(t, nil, web.Options{})
	f.write(t, "points", `{"member":"alice","value":5}`)
	c := f.dial(t, "/ws/points/week?limit=3")
	first := next(t, c)
	if !strings.HasPrefix(first, `<div id="`+views.TableID("points", "week", 3)+`"`) {
		t.Fatalf("first frame is not the whole table fragment: %.200s", first)
	}
	if got := frameRows(t, first); fmt.Sprint(got) != "[1 alice 5]" {
		t.Fatalf("snapshot %v", got)
	}
	var m web.LiveModel
	m.Apply(first)
	f.write(t, "points", `{"member":"bob","value":7}`)
	got := untilRows(t, c, &m, func(s string) bool { return strings.Contains(s, "bob") })
	if fmt.Sprint(got) != "[1 bob 7 2 alice 5]" {
		t.Errorf("after a write %v", got)
	}
	if m.Diffs != 1 || m.Wholes != 1 {
		t.Errorf("%d diff frames and %d whole ones, want the whole table then a diff", m.Diffs, m.Wholes)
	}
	// A reconnect gets the current state at once.
	c.Close(websocket.StatusNormalClosure, "")
	c2 := f.dial(t, "/ws/points/week?limit=3")
	if got := frameRows(t, next(t, c2)); fmt.Sprint(got) != "[1 bob 7 2 alice 5]" {
		t.Errorf("reconnect snapshot %v", got)
	}
	// A write to another view of another board does not wake this one.
	f.write(t, "lap", `{"member":"x","value":1}`)
}

// TestLiveNegotiatesDeflate: the socket offers permessage-deflate, and a
// whole table arrives deflated and whole.
func TestLiveNegotiatesDeflate(t *testing.T) {
	f := MustLive(t, nil, web.Options{})
	for i := range 100 {
		f.write(t, "points", fmt.Sprintf(`{"member":"member-%03d","value":%d}`, i, i+1))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.http.URL, "http")+"/ws/points/week?limit=100", &websocket.DialOptions{CompressionMode: websocket.CompressionNoContextTakeover})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 22)
	if ext := res.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("Sec-WebSocket-Extensions %q", ext)
	}
	if got := frameRows(t, next(t, c)); len(got) != 100 {
		t.Errorf("%d rows", len(got))
	}
}

func TestLiveSameBytesForEveryViewerAndRendersFollowTicks(t *testing.T) {
	tick := 100 * time.Millisecond
	f := MustLive(t, nil, web.Options{LiveTick: tick})
	const viewers = 20
	conns := make([]*websocket.Conn, viewers)
	for i := range conns {
		conns[i] = f.dial(t, "/ws/points/all?limit=5")
		next(t, conns[i]) // snapshot
	}
	before := liveRenders(t, f)
	start := time.Now()
	for i := range 60 {
		f.write(t, "points", fmt.Sprintf(`{"member":"m%d","value":%d}`, i%7, i))
	}
	f.write(t, "points", `{"member":"last","value":999}`)
	elapsed := time.Since(start)
	var want string
	for i, c := range conns {
		got := until(t, c, func(s string) bool { return strings.Contains(s, "last") })
		if i == 0 {
			want = got
		} else if got != want {
			t.Fatalf("viewer %d got other bytes", i)
		}
	}
	renders := liveRenders(t, f) - before
	// However many viewers and writes: at most one render per tick (plus
	// the ticks that end the wait).
	if limit := int(elapsed/tick) + 1 + int(time.Since(start)/tick-elapsed/tick) + 2; renders > float64(limit) {
		t.Errorf("%v renders for 61 writes over %v, %d viewers; want at most %d", renders, time.Since(start), viewers, limit)
	}
}

// liveRenders scrapes the render counter.
func liveRenders(tb testing.TB, f *liveFixture) float64 {
	tb.Helper()
	return metric(tb, f, "standings_live_renders_total")
}

func TestLiveRankCardHeadline(t *testing.T) {
	f := MustLive(t, nil, web.Options{})
	f.write(t, "points", `{"member":"alice","value":5}`)
	f.write(t, "points", `{"member":"bob","value":3}`)
	c := f.dial(t, "/ws/points/week?member=bob")
	first := next(t, c)
	if !strings.HasPrefix(first, `<div id="`+views.CardID("points", "week")+`" class="card-live"`) || !strings.Contains(first, "#2") {
		t.Fatalf("card snapshot %q", first)
	}
	f.write(t, "points", `{"member":"bob","value":10}`)
	until(t, c, func(s string) bool { return strings.Contains(s, "#1") && strings.Contains(s, ">13<") })
}

func TestLiveBadRequests(t *testing.T) {
	f := MustLive(t, nil, web.Options{})
	for path, status := range map[string]int{
		"/ws/points/week?limit=0":       422,
		"/ws/points/week?limit=101":     422,
		"/ws/points/week?limit=x":       422,
		"/ws/nope/week":                 404,
		"/ws/points/month":              404,
		"/ws/points/week?member=%01bad": 422,
	} {
		res, err := http.Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != status || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s, want %d JSON", path, res.StatusCode, res.Header.Get("Content-Type"), status)
		}
	}
}

func TestLiveShutdownCloses1012(t *testing.T) {
	f := MustLive(t, nil, web.Options{})
	c := f.dial(t, "/ws/points/week")
	next(t, c)
	done := make(chan struct{})
	go func() { f.srv.Close(); close(done) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err := c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusServiceRestart {
		t.Errorf("close status %v (%v), want 1012", websocket.CloseStatus(err), err)
	}
	<-done
	// After shutdown, new viewers are turned away the same way.
	c2 := f.dial(t, "/ws/points/week")
	if _, _, err := c2.Read(ctx); websocket.CloseStatus(err) != websocket.StatusServiceRestart {
		t.Errorf("late viewer: %v", err)
	}
}

func TestLiveAcrossInstances(t *testing.T) {
	a := MustLive(t, nil, web.Options{})
	b := MustLive(t, a.mr, web.Options{})
	c := b.dial(t, "/ws/points/day?limit=5")
	next(t, c)
	a.write(t, "points", `{"member":"via-a","value":4}`)
	until(t, c, func(s string) bool { return strings.Contains(s, "via-a") })
}

func TestLiveStalledClientIsDroppedWithoutDelayingOthers(t *testing.T) {
	tick := 20 * time.Millisecond
	f := MustLive(t, nil, web.Options{LiveTick: tick, LiveWriteTimeout: 300 * time.Millisecond, WriteRate: -1})
	// Fat frames fill the stalled client's socket buffers quickly.
	name := strings.Repeat("W", 64)
	var events []string
	for i := range 100 {
		events = append(events, fmt.Sprintf(`{"member":"member-%s-%03d","value":%d,"name":"%s"}`, strings.Repeat("x", 90), i, i, name))
	}
	req, _ := http.NewRequest("POST", f.http.URL+"/api/v1/boards/points/scores/batch", strings.NewReader(`{"events":[`+strings.Join(events, ",")+`]}`))
	req.Header.Set("Authorization", "Bearer "+writeKey)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("batch: %v", err)
	}

	stalled := dialStalled(t, f.http.Listener.Addr().String(), "/ws/points/all?limit=100")
	defer stalled.Close()
	healthy := f.dial(t, "/ws/points/all?limit=100")
	next(t, healthy)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The healthy viewer reads all the time, as a browser does; the test
	// only watches its count of frames keep growing.
	var got atomic.Int64
	readErr := make(chan error, 1)
	go func() {
		for {
			if _, _, err := healthy.Read(ctx); err != nil {
				readErr <- err
				return
			}
			got.Add(1)
		}
	}()
	dropped := false
	frames := 0
	for i := 0; !dropped && ctx.Err() == nil; i++ {
		// Every row's score changes, so that every frame is the whole
		// table (a diff would be no smaller).
		for k := range events {
			events[k] = fmt.Sprintf(`{"member":"member-%s-%03d","value":1}`, strings.Repeat("x", 90), k)
		}
		before := got.Load()
		req, _ := http.NewRequest("POST", f.http.URL+"/api/v1/boards/points/scores/batch", strings.NewReader(`{"events":[`+strings.Join(events, ",")+`]}`))
		req.Header.Set("Authorization", "Bearer "+writeKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("batch: %d %s", res.StatusCode, body)
		}
		deadline := time.Now().Add(5 * time.Second)
		for got.Load() == before {
			select {
			case err := <-readErr:
				t.Fatalf("the healthy viewer stopped receiving after %d frames: %v", frames, err)
			case <-time.After(5 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("the healthy viewer got no frame for 5 s after %d frames", frames)
			}
		}
		frames++
		if frames%20 == 0 {
			dropped = metric(t, f, "standings_live_dropped_total") >= 1
		}
	}
	if !dropped {
		t.Fatalf("the stalled viewer was never dropped (%d frames to the healthy one)", frames)
	}
	waitMetric(t, f, "standings_live_viewers", 1) // the dropped one's close handshake times out first
}

// dialStalled opens a websocket with a tiny receive buffer and never reads.
func dialStalled(tb testing.TB, addr, path string) net.Conn {
	tb.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
		return serr
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path, addr)
	return conn
}

// metric scrapes one unlabelled metric from /metrics.
func metric(tb testing.TB, f *liveFixture, name string) float64 {
	tb.Helper()
	res, err := http.Get(f.http.URL + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			x, _ := strconv.ParseFloat(v, 64)
			return x
		}
	}
	return 0
}

func TestLiveConnectDisconnectLeavesNoGoroutines(t *testing.T) {
	f := MustLive(t, nil, web.Options{})
	f.write(t, "points", `{"member":"alice","value":5}`)
	warm := f.dial(t, "/ws/points/week")
	next(t, warm)
	warm.Close(websocket.StatusNormalClosure, "")
	settle := func() int {
		n := runtime.NumGoroutine()
		for range 100 {
			time.Sleep(20 * time.Millisecond)
			if m := runtime.NumGoroutine(); m == n {
				return m
			} else {
				n = m
			}
		}
		return n
	}
	base := settle()
	for i := range 1000 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.http.URL, "http")+"/ws/points/week?limit="+strconv.Itoa(1+i%5), nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if i%2 == 0 {
			c.Read(ctx) // half take the snapshot, half leave at once
		}
		c.Close(websocket.StatusNormalClosure, "")
		cancel()
	}
	http.DefaultClient.CloseIdleConnections()
	var after int
	for range 50 {
		if after = settle(); after <= base+2 {
			break
		}
	}
	if after > base+2 {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("%d goroutines before, %d after 1000 cycles\n%s", base, after, buf[:n])
	}
	if v := metric(t, f, "standings_live_viewers"); v != 0 {
		t.Errorf("%v viewers left", v)
	}
}

func TestLiveRendersNothingForUnwatchedBoards(t *testing.T) {
	tick := 50 * time.Millisecond
	f := MustLive(t, nil, web.Options{LiveTick: tick})
	for i := range 20 {
		f.write(t, "points", fmt.Sprintf(`{"member":"m%d","value":1}`, i))
	}
	time.Sleep(5 * tick)
	if n := liveRenders(t, f); n != 0 {
		t.Fatalf("%v renders with nobody watching", n)
	}
	c := f.dial(t, "/ws/points/week?limit=3")
	next(t, c)
	c.Close(websocket.StatusNormalClosure, "")
	waitMetric(t, f, "standings_live_viewers", 0) // the hub notices the viewer left
	before := liveRenders(t, f)
	for i := range 20 {
		f.write(t, "points", fmt.Sprintf(`{"member":"m%d","value":1}`, i))
	}
	time.Sleep(5 * tick)
	if n := liveRenders(t, f); n != before {
		t.Errorf("%v renders after the last viewer left", n-before)
	}
}

// TestLiveLeagueGroup: a league group is a topic of its own, its round
// named or not: every viewer of the group page gets the same bytes (no
// row marked as anyone's), a write that scores a member of the group
// wakes it, the widget's table is a topic beside it, and a group that
// does not exist, or bad parameters, get a 4xx before any upgrade.
func TestLiveLeagueGroup(t *testing.T) {
	f := MustLiveOf(t, leagueTestBoards, nil, web.Options{})
	for i, v := range []string{"9", "8", "7", "6", "5"} {
		f.write(t, "lg", fmt.Sprintf(`{"member":"m%d","value":%s}`, i+1, v))
	}
	named := f.dial(t, "/ws/lg/league/bronze/1?round=2026-11-22")
	current := f.dial(t, "/ws/lg/league/bronze/1")
	widget := f.dial(t, "/ws/lg/league/bronze/1?widget=1")
	a, b, w := next(t, named), next(t, current), next(t, widget)
	if !strings.HasPrefix(a, `<div id="`+views.IDCohortLive+`" class="table-wrap">`) || a != b {
		t.Fatalf("the group's viewers got other frames:\n%.300s\n%.300s", a, b)
	}
	if got := fmt.Sprint(frameRows(t, a)); got != "[1 m1 9 2 m2 8 3 m3 7 4 m4 6 5 m5 5]" {
		t.Errorf("rows %s", got)
	}
	if strings.Contains(a, "self") || strings.Contains(a, "data-final") {
		t.Errorf("a shared frame marks a row as a viewer's, or is final: %s", a)
	}
	if w == a || !strings.Contains(w, `data-member="m5" data-zone="safe" data-place="is #5 of 5: stays in Bronze league if the round ends like this."`) {
		t.Errorf("the widget's table is not its own: %.600s", w)
	}

	// m5 jumps to the top: the group's topic wakes, once for both.
	f.write(t, "lg", `{"member":"m5","value":20}`)
	top := func(s string) bool { return strings.HasPrefix(fmt.Sprint(frameRows(t, s)), "[1 m5 ") }
	if a, b := until(t, named, top), until(t, current, top); a != b {
		t.Error("the group's viewers got other bytes after a write")
	}
	until(t, widget, func(s string) bool {
		return strings.Contains(s, `data-member="m5" data-zone="promotion" data-place="is #1 of 5`)
	})

	for path, status := range map[string]int{
		"/ws/lg/league/bronze/2":             404, // no such group (yet)
		"/ws/lg/league/tin/1":                404,
		"/ws/points/league/bronze/1":         404, // no league
		"/ws/lg/league/bronze/0":             422,
		"/ws/lg/league/bronze/x":             422,
		"/ws/lg/league/bronze/1?widget=yes":  422,
		"/ws/lg/league/bronze/1?round=never": 422,
	} {
		res, err := http.Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != status || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s, want %d JSON", path, res.StatusCode, res.Header.Get("Content-Type"), status)
		}
	}
}
