package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	"github.com/coder/websocket"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// The live suite: many websocket viewers of one board while events are
// written at a steady rate, served by the hub and, in the same run, by a
// naive server that renders for every viewer on every event. Each server
// runs in a child process (this program re-executed with liveRoleEnv), so
// its CPU time is its own.

const (
	liveRoleEnv  = "STANDINGS_BENCH_ROLE"  // "live-hub", "live-hub-whole" or "live-naive"
	liveRedisEnv = "STANDINGS_BENCH_REDIS" // the Redis address for a child
	liveBoard    = `
boards:
  - id: live
    title: Live
    views: [day, all]
    max_score: 100000000
`
	livePrefix = "bench-live:"
	// liveSampleEvery: latency is sampled for every n-th write.
	liveSampleEvery = 25
	liveLimit       = 10
	// The bytes run: viewers of a board page's 100 rows while members of
	// a populated board score at random, as on a live week board.
	bytesLimit   = 100
	bytesMembers = 1000
	bytesViewers = 100
)

// liveSettings size the suite; tests shrink them.
type liveSettings struct {
	viewers  int
	rate     int // events/s
	duration time.Duration
	// ghosts are extra viewers of members that never score (one each),
	// the cheapest way to ask a live server for work.
	ghosts int
}

func runLive(ctx context.Context, e *env) error {
	s := liveSettings{viewers: e.opts.viewers, rate: e.opts.liveRate, duration: e.opts.liveDuration}
	hub, err := e.liveRun(ctx, "live-hub", s)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	naive, err := e.liveRun(ctx, "live-naive", s)
	if err != nil {
		return fmt.Errorf("naive: %w", err)
	}
	runs := []struct {
		prefix string
		res    liveResult
	}{{"live", hub}, {"naive", naive}}
	if e.opts.ghosts > 0 {
		// The hub again, with ghost viewers beside the same viewers.
		g := s
		g.ghosts = e.opts.ghosts
		ghosts, err := e.liveRun(ctx, "live-hub", g)
		if err != nil {
			return fmt.Errorf("hub with ghosts: %w", err)
		}
		runs = append(runs, struct {
			prefix string
			res    liveResult
		}{"ghosts", ghosts})
		e.out.bench("ghosts_ghost_viewers", float64(g.ghosts), "viewers")
	}
	for _, r := range runs {
		e.out.bench(r.prefix+"_viewers", float64(r.res.viewers), "viewers")
		e.out.bench(r.prefix+"_events_per_s", r.res.eventsPerS, "events/s")
		e.out.bench(r.prefix+"_latency_p50_ms", ms(percentile(r.res.latencies, 50)), "ms")
		e.out.bench(r.prefix+"_latency_p99_ms", ms(percentile(r.res.latencies, 99)), "ms")
		e.out.bench(r.prefix+"_renders_per_s", r.res.rendersPerS, "renders/s")
		e.out.bench(r.prefix+"_frames_per_viewer_s", r.res.framesPerViewerS, "frames/s")
		e.out.bench(r.prefix+"_server_cpu_s", r.res.cpu.Seconds(), "s")
	}
	e.out.ratio("renders_naive_vs_hub", divide(naive.rendersPerS, hub.rendersPerS))
	e.out.ratio("cpu_naive_vs_hub", divide(naive.cpu.Seconds(), hub.cpu.Seconds()))

	// Bytes: diff frames (deflate offered, as browsers do) against whole
	// fragments (the hub with LiveWholeFrames, no deflate), same workload.
	b := liveSettings{viewers: min(s.viewers, bytesViewers), rate: s.rate, duration: s.duration}
	diff, err := e.bytesRun(ctx, "live-hub", b, websocket.CompressionContextTakeover)
	if err != nil {
		return fmt.Errorf("bytes, diff frames: %w", err)
	}
	whole, err := e.bytesRun(ctx, "live-hub-whole", b, websocket.CompressionDisabled)
	if err != nil {
		return fmt.Errorf("bytes, whole frames: %w", err)
	}
	e.out.bench("live_bytes_per_viewer_s", diff.wirePerViewerS, "bytes/s")
	e.out.bench("live_bytes_per_frame", diff.wirePerFrame, "bytes")
	e.out.bench("full_bytes_per_viewer_s", whole.wirePerViewerS, "bytes/s")
	e.out.bench("full_bytes_per_frame", whole.wirePerFrame, "bytes")
	e.out.bench("live_bytes_server_cpu_s", diff.cpu.Seconds(), "s")
	e.out.bench("full_bytes_server_cpu_s", whole.cpu.Seconds(), "s")
	e.out.ratio("live_bytes_full_vs_diff", divide(whole.wirePerViewerS, diff.wirePerViewerS))
	return nil
}

// bytesResult is what a bytes run's viewers received.
type bytesResult struct {
	wirePerViewerS float64 // bytes on the wire (frames, headers, deflated or not)
	wirePerFrame   float64
	cpu            time.Duration
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// bytesRun starts a server child of the given role, seeds bytesMembers
// members, connects the viewers of the board page's rows (offering
// compression mode), then increments random members at the rate for the
// duration and counts what reaches the viewers.
func (e *env) bytesRun(ctx context.Context, role string, s liveSettings, mode websocket.CompressionMode) (bytesResult, error) {
	child, store, err := e.liveSetup(ctx, role)
	if err != nil {
		return bytesResult{}, err
	}
	defer child.stop()
	defer store.Close()
	for i := range bytesMembers {
		if _, err := store.Write(ctx, "live", ranking.Event{Member: fmt.Sprintf("member-%04d", i), Value: int64(100000 - 37*i), Name: fmt.Sprintf("Member %d", i)}); err != nil {
			return bytesResult{}, err
		}
	}
	var wire, frames atomic.Int64
	recording := atomic.Bool{}
	vctx, vcancel := context.WithCancel(ctx)
	defer vcancel()
	var wg sync.WaitGroup
	connected := atomic.Int64{}
	dialErr := make(chan error, 1)
	for v := range s.viewers {
		wg.Go(func() {
			var n atomic.Int64
			tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return countingConn{c, &n}, nil
			}}
			c := dialViewer(vctx, child.addr, v, bytesLimit, &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}, CompressionMode: mode}, 1<<22, &connected, dialErr)
			if c == nil {
				return
			}
			defer c.CloseNow()
			for {
				before := n.Load()
				if _, _, err := c.Read(vctx); err != nil {
					return
				}
				if recording.Load() {
					frames.Add(1)
					wire.Add(n.Load() - before)
				}
			}
		})
	}
	deadline := time.Now().Add(60 * time.Second)
	for connected.Load() < int64(s.viewers) {
		select {
		case err := <-dialErr:
			return bytesResult{}, err
		default:
		}
		if time.Now().After(deadline) {
			return bytesResult{}, fmt.Errorf("only %d of %d viewers connected", connected.Load(), s.viewers)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // every viewer has its whole table
	cpu0, err := child.cpu()
	if err != nil {
		return bytesResult{}, err
	}
	recording.Store(true)
	start := time.Now()
	tick := time.NewTicker(2 * time.Millisecond)
	var written int64
	rng := uint64(1)
write:
	for ctx.Err() == nil {
		<-tick.C
		for {
			el := time.Since(start)
			if el >= s.duration {
				break write
			}
			if written >= int64(float64(s.rate)*el.Seconds()) {
				break
			}
			// A xorshift draw: the same workload in both runs.
			rng ^= rng << 13
			rng ^= rng >> 7
			rng ^= rng << 17
			m := fmt.Sprintf("member-%04d", rng%bytesMembers)
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := store.Write(wctx, "live", ranking.Event{Member: m, Value: int64(1 + rng%50)})
			cancel()
			if err != nil {
				tick.Stop()
				return bytesResult{}, fmt.Errorf("write: %w", err)
			}
			written++
		}
	}
	tick.Stop()
	elapsed := time.Since(start)
	// The last writes' frames leave at the hub's next tick: they are
	// counted for two ticks more, and on a loaded machine until a frame
	// has come at all (bounded), so a short run is not taken for silence.
	drain := time.Now().Add(10 * time.Second)
	time.Sleep(2 * web.DefaultLiveTick)
	for frames.Load() == 0 && written > 0 && time.Now().Before(drain) {
		time.Sleep(20 * time.Millisecond)
	}
	recording.Store(false)
	cpu1, err := child.cpu()
	if err != nil {
		return bytesResult{}, err
	}
	vcancel()
	wg.Wait()
	res := bytesResult{
		wirePerViewerS: float64(wire.Load()) / float64(s.viewers) / elapsed.Seconds(),
		wirePerFrame:   divide(float64(wire.Load()), float64(frames.Load())),
		cpu:            cpu1 - cpu0,
	}
	e.logf("%s bytes: %d viewers, %.0f bytes/s per viewer, %.0f bytes a frame, server CPU %.2fs",
		role, s.viewers, res.wirePerViewerS, res.wirePerFrame, res.cpu.Seconds())
	return res, nil
}

// liveResult is one server's measurement.
type liveResult struct {
	viewers          int
	eventsPerS       float64
	latencies        []time.Duration // sorted
	rendersPerS      float64
	framesPerViewerS float64
	cpu              time.Duration
}

// probeRE finds the first probe row of a frame: in a whole fragment, or
// in a diff frame's row markup (a JSON string, its quotes escaped).
var probeRE = regexp.MustCompile(`data-member=\\?"p(\d+)`)

// liveSetup empties Redis, starts a server child of the given role and
// opens a store on the live board: the start of every run of the suite.
func (e *env) liveSetup(ctx context.Context, role string) (*liveChild, *ranking.Store, error) {
	if err := e.rdb.FlushAll(ctx).Err(); err != nil {
		return nil, nil, err
	}
	child, err := startLiveChild(ctx, role, e.rdb.Options().Addr)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := ranking.ParseConfig([]byte(liveBoard))
	if err == nil {
		var store *ranking.Store
		if store, err = e.openStore(ctx, cfg, livePrefix, e.opts.writers+2, ""); err == nil {
			return child, store, nil
		}
	}
	child.stop()
	return nil, nil, err
}

// liveRun starts a server child of the given role, connects the viewers,
// writes probes at the rate for the duration, and measures.
func (e *env) liveRun(ctx context.Context, role string, s liveSettings) (liveResult, error) {
	child, store, err := e.liveSetup(ctx, role)
	if err != nil {
		return liveResult{}, err
	}
	defer child.stop()
	defer store.Close()
	if _, err := store.Write(ctx, "live", ranking.Event{Member: "seed", Value: 1}); err != nil {
		return liveResult{}, err
	}

	// Acknowledgement times (UnixNano) of the sampled probes, by probe
	// number / liveSampleEvery; the writer never writes more than
	// rate × duration probes, so this bounds the memory.
	acks := make([]atomic.Int64, int(float64(s.rate)*s.duration.Seconds())/liveSampleEvery+2)
	var frames atomic.Int64
	var mu sync.Mutex
	var lats []time.Duration
	recording := atomic.Bool{}

	vctx, vcancel := context.WithCancel(ctx)
	defer vcancel()
	var wg sync.WaitGroup
	connected := atomic.Int64{}
	dialErr := make(chan error, 1)
	for v := range s.viewers {
		wg.Go(func() {
			c := dialViewer(vctx, child.addr, v, liveLimit, nil, 1<<20, &connected, dialErr)
			if c == nil {
				return
			}
			defer c.CloseNow()
			seen := int64(-1)
			var local []time.Duration
			for {
				_, b, err := c.Read(vctx)
				if err != nil {
					break
				}
				now := time.Now()
				if !recording.Load() {
					continue
				}
				frames.Add(1)
				// The newest probe is the leader, so this frame shows every
				// write up to it: each of those that this viewer had not seen
				// yet took from its acknowledgement until now (sampled).
				m := probeRE.FindSubmatch(b)
				if m == nil {
					continue
				}
				n, _ := strconv.ParseInt(string(m[1]), 10, 64)
				for k := (seen/liveSampleEvery + 1) * liveSampleEvery; k <= n && len(local) < 2000; k += liveSampleEvery {
					i := k / liveSampleEvery
					if i >= int64(len(acks)) {
						break
					}
					// A frame can beat the writer to storing the ack time
					// it has just been given: count that as no delay.
					at := acks[i].Load()
					if at == 0 {
						local = append(local, 0)
						continue
					}
					local = append(local, max(0, now.Sub(time.Unix(0, at))))
				}
				seen = max(seen, n)
			}
			mu.Lock()
			lats = append(lats, local...)
			mu.Unlock()
		})
	}
	// Wait for every viewer (bounded).
	deadline := time.Now().Add(60 * time.Second)
	for connected.Load() < int64(s.viewers) {
		select {
		case err := <-dialErr:
			return liveResult{}, err
		default:
		}
		if time.Now().After(deadline) {
			return liveResult{}, fmt.Errorf("only %d of %d viewers connected", connected.Load(), s.viewers)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := dialGhosts(vctx, child.addr, s.ghosts, &wg); err != nil {
		return liveResult{}, err
	}
	e.logf("%s: %d viewers and %d ghost viewers connected", role, s.viewers, s.ghosts)

	renders0, err := child.renders()
	if err != nil {
		return liveResult{}, err
	}
	cpu0, err := child.cpu()
	if err != nil {
		return liveResult{}, err
	}
	recording.Store(true)
	start := time.Now()
	// Writer: one Store.Write per event, so that each event is one change
	// message (the naive server renders per viewer per message), in order
	// from one goroutine, so that a frame whose leader is p<n> shows every
	// write up to n. Paced by the clock: each tick writes what the rate
	// owes by now, catching up after a slow write, never past the duration.
	tick := time.NewTicker(2 * time.Millisecond)
	var written int64
	var werr error
write:
	for ctx.Err() == nil {
		<-tick.C
		for {
			el := time.Since(start)
			if el >= s.duration {
				break write
			}
			if written >= int64(float64(s.rate)*el.Seconds()) {
				break
			}
			n := written + 1
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := store.Write(wctx, "live", ranking.Event{Member: "p" + strconv.FormatInt(n, 10), Value: 1000 + n})
			cancel()
			if err != nil {
				werr = err
				break write
			}
			if n%liveSampleEvery == 0 && n/liveSampleEvery < int64(len(acks)) {
				acks[n/liveSampleEvery].Store(time.Now().UnixNano())
			}
			written = n
		}
	}
	tick.Stop()
	elapsed := time.Since(start)
	recording.Store(false)
	if werr != nil {
		return liveResult{}, fmt.Errorf("write: %w", werr)
	}
	cpu1, err := child.cpu()
	if err != nil {
		return liveResult{}, err
	}
	renders1, err := child.renders()
	if err != nil {
		return liveResult{}, err
	}
	vcancel()
	wg.Wait()
	res := liveResult{
		viewers:          s.viewers,
		eventsPerS:       float64(written) / elapsed.Seconds(),
		latencies:        sortedCopy(lats),
		rendersPerS:      (renders1 - renders0) / elapsed.Seconds(),
		framesPerViewerS: float64(frames.Load()) / float64(s.viewers) / elapsed.Seconds(),
		cpu:              cpu1 - cpu0,
	}
	e.logf("%s: %.0f events/s, latency p50 %.1f ms p99 %.1f ms, %.1f renders/s, %.2f frames/s per viewer, server CPU %.2fs",
		role, res.eventsPerS, ms(percentile(res.latencies, 50)), ms(percentile(res.latencies, 99)), res.rendersPerS, res.framesPerViewerS, res.cpu.Seconds())
	return res, nil
}

// dialGhosts connects n viewers of members that never score, each
// draining its frames until ctx ends; it returns once all are connected.
func dialGhosts(ctx context.Context, addr string, n int, wg *sync.WaitGroup) error {
	sem := make(chan struct{}, 64) // bounded dialing
	errs := make(chan error, n)
	var dialing sync.WaitGroup
	for g := range n {
		sem <- struct{}{}
		dialing.Add(1)
		wg.Go(func() {
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			c, _, err := websocket.Dial(dctx, "ws://"+addr+"/ws/live/day?member=ghost-"+strconv.Itoa(g), nil)
			cancel()
			<-sem
			dialing.Done()
			if err != nil {
				errs <- fmt.Errorf("ghost viewer %d: %w", g, err)
				return
			}
			defer c.CloseNow()
			for {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
			}
		})
	}
	dialing.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// liveChild is a server process of the live suite.
type liveChild struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

func startLiveChild(ctx context.Context, role, redisAddr string) (*liveChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), liveRoleEnv+"="+role, liveRedisEnv+"="+redisAddr)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &liveChild{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(c.done) }()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
				lines <- a
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case c.addr = <-lines:
		return c, nil
	case <-c.done:
		return nil, errors.New("server child exited before listening")
	case <-time.After(30 * time.Second):
		c.stop()
		return nil, errors.New("server child did not start")
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
}

func (c *liveChild) stop() {
	c.cmd.Process.Kill()
	<-c.done
}

// cpu reads the child's user+system time from /proc.
func (c *liveChild) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

var rendersRE = regexp.MustCompile(`(?m)^standings_live_renders_total (\S+)$`)

// renders reads the child's render counter from /metrics.
func (c *liveChild) renders() (float64, error) {
	// Bounded: a saturated naive server still answers, but slowly.
	res, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + c.addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	m := rendersRE.FindSubmatch(b)
	if m == nil {
		return 0, errors.New("no render counter in /metrics")
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// liveChildMain runs a server child: it returns false when this process is
// not one.
func liveChildMain() bool {
	role := os.Getenv(liveRoleEnv)
	if role == "" {
		return false
	}
	if err := serveLiveChild(role, os.Getenv(liveRedisEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "live server:", err)
		os.Exit(1)
	}
	os.Exit(0)
	return true
}

func serveLiveChild(role, redisAddr string) error {
	cfg, err := ranking.ParseConfig([]byte(liveBoard))
	if err != nil {
		return err
	}
	store, err := ranking.Open(context.Background(), cfg, ranking.Options{RedisURL: "redis://" + redisAddr + "?pool_size=64", Prefix: livePrefix})
	if err != nil {
		return err
	}
	defer store.Close()
	var h http.Handler
	switch role {
	case "live-hub", "live-hub-whole":
		// Every viewer dials from loopback: the per-client limit would
		// refuse all but a few.
		h = web.NewServer(web.Options{Store: store, Feed: store, Config: cfg, WriteKeys: []string{"bench"}, Logger: slog.New(slog.DiscardHandler),
			LiveMaxConns: 1 << 20, LiveMaxPerClient: 1 << 20, LiveWholeFrames: role == "live-hub-whole"}).Handler()
	case "live-naive":
		h = newNaive(store, cfg)
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("ADDR %s\n", ln.Addr())
	return http.Serve(ln, h)
}

// naive is the baseline: every viewer renders and sends the top-N itself
// on every change it hears of (the writer makes one change per event).
// Notifications beyond 64 waiting for one viewer are dropped (else memory
// would grow without bound), so when it falls behind it renders as often
// as it can.
type naive struct {
	store   *ranking.Store
	board   *ranking.Board
	renders atomic.Int64

	mu      sync.Mutex
	viewers map[chan struct{}]struct{}
}

func newNaive(store *ranking.Store, cfg *ranking.Config) *naive {
	b, _ := cfg.Board("live")
	n := &naive{store: store, board: b, viewers: map[chan struct{}]struct{}{}}
	go n.follow()
	return n
}

func (n *naive) follow() {
	for {
		sub, err := n.store.Subscribe(context.Background())
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for range sub.C() {
			n.mu.Lock()
			for v := range n.viewers {
				select {
				case v <- struct{}{}:
				default:
				}
			}
			n.mu.Unlock()
		}
	}
}

func (n *naive) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		fmt.Fprintf(w, "standings_live_renders_total %d\n", n.renders.Load())
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := c.CloseRead(context.Background())
	wake := make(chan struct{}, 64)
	n.mu.Lock()
	n.viewers[wake] = struct{}{}
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.viewers, wake)
		n.mu.Unlock()
	}()
	v, _ := n.board.View("day")
	send := func() error {
		pg, err := n.store.Page(ctx, "live", "day", ranking.PageQuery{Limit: liveLimit})
		if err != nil {
			return err
		}
		rows := make([]views.Row, 0, len(pg.Entries))
		for _, e := range pg.Entries {
			rows = append(rows, views.Row{Rank: e.Rank, Member: e.Member, Name: e.Member, Score: n.board.FormatScore(e.Score), CardURL: "/boards/live/day/members/" + e.Member})
		}
		buf := templ.GetBuffer()
		defer templ.ReleaseBuffer(buf)
		t := views.Table{ID: views.TableID("live", v.Name, liveLimit), Caption: "Live", Period: pg.Period.ID, Rows: rows}
		if err := views.StandingsTable(t).Render(ctx, buf); err != nil {
			return err
		}
		n.renders.Add(1)
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return c.Write(wctx, websocket.MessageText, buf.Bytes())
	}
	if send() != nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			if send() != nil {
				return
			}
		}
	}
}

// dialViewer opens viewer v's feed of the live board's day view at limit
// rows (opts may be nil) and counts it in connected; on failure it keeps
// the first error in dialErr and returns nil.
func dialViewer(ctx context.Context, addr string, v, limit int, opts *websocket.DialOptions, readLimit int64, connected *atomic.Int64, dialErr chan<- error) *websocket.Conn {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	c, _, err := websocket.Dial(dctx, "ws://"+addr+"/ws/live/day?limit="+strconv.Itoa(limit), opts)
	cancel()
	if err != nil {
		select {
		case dialErr <- fmt.Errorf("viewer %d: %w", v, err):
		default:
		}
		return nil
	}
	c.SetReadLimit(readLimit)
	connected.Add(1)
	return c
}
