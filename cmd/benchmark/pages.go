package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/web"
)

// The pages suite: the top-100 board page, the embed widget and the rank
// card served to 64 concurrent clients, beside the same server's /healthz
// in the same run, the contenders taking turns. Every request accepts gzip, as browsers do, and the
// client keeps the bytes as they come (a browser inflates them on its own
// machine, not on the server's).

const (
	pagesClients = 64
	pagesRounds  = 5 // slices per contender, taken in turns (see runPages)
	pagesBoard   = `
boards:
  - id: bench
    title: Bench
    views: [day, week, month, all]
`
)

func runPages(ctx context.Context, e *env) error {
	if err := e.rdb.FlushAll(ctx).Err(); err != nil {
		return err
	}
	cfg, err := ranking.ParseConfig([]byte(pagesBoard))
	if err != nil {
		return err
	}
	// The page servers' store is opened as cmd/standings opens its own
	// (ranking.DefaultPoolSize connections), not like the benchmark's
	// control client.
	store, err := ranking.Open(ctx, cfg, ranking.Options{RedisURL: "redis://" + e.rdb.Options().Addr, Prefix: "bench-pages:"})
	if err != nil {
		return err
	}
	defer store.Close()
	n := min(e.opts.members, 50000)
	members := memberIDs(n)
	rnd := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < n; i += ranking.MaxBatch {
		var evs []ranking.Event
		for _, m := range members[i:min(i+ranking.MaxBatch, n)] {
			evs = append(evs, ranking.Event{Member: m, Name: "Player " + m, Value: 1 + rnd.Int64N(100000)})
		}
		if _, err := store.Apply(ctx, "bench", evs, ranking.ApplyOptions{}); err != nil {
			return fmt.Errorf("load: %w", err)
		}
	}
	e.logf("pages: %d members loaded", n)
	cardN, err := loadCardHistory(ctx, e, members)
	if err != nil {
		return err
	}

	shared, err := startPageServer(store, cfg, 0)
	if err != nil {
		return err
	}
	defer shared.close()
	unshared, err := startPageServer(store, cfg, -1)
	if err != nil {
		return err
	}
	defer unshared.close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()

	get := func(base string, path func(r *rand.Rand) string) func(int) work {
		return func(w int) work {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			return func(ctx context.Context) (int, error) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path(r), nil)
				req.Header.Set("Accept-Encoding", "gzip")
				res, err := client.Do(req)
				if err != nil {
					if ctx.Err() != nil {
						return 0, nil
					}
					return 0, err
				}
				_, err = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					return 0, fmt.Errorf("%s: status %d", req.URL.Path, res.StatusCode)
				}
				return 1, err
			}
		}
	}
	fixed := func(p string) func(*rand.Rand) string { return func(*rand.Rand) string { return p } }
	// revalidate is a browser or CDN that keeps the page it got and asks
	// again with If-None-Match: mostly 304s while the period is unchanged.
	revalidate := func(base, path string) func(int) work {
		return func(int) work {
			etag := ""
			return func(ctx context.Context) (int, error) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				if etag != "" {
					req.Header.Set("If-None-Match", etag)
				}
				res, err := client.Do(req)
				if err != nil {
					if ctx.Err() != nil {
						return 0, nil
					}
					return 0, err
				}
				_, err = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				switch res.StatusCode {
				case http.StatusOK:
					etag = res.Header.Get("ETag")
				case http.StatusNotModified:
				default:
					return 0, fmt.Errorf("%s: status %d", path, res.StatusCode)
				}
				return 1, err
			}
		}
	}
	card := func(r *rand.Rand) string { return "/boards/bench/week/members/" + members[r.IntN(cardN)] }

	contenders := []struct {
		name string
		work func(int) work
	}{
		{"healthz", get(shared.url, fixed("/healthz"))},
		{"board_page", get(shared.url, fixed("/boards/bench/week"))},
		{"board_page_unshared", get(unshared.url, fixed("/boards/bench/week"))},
		{"board_page_304", revalidate(shared.url, "/boards/bench/week")},
		{"embed", get(shared.url, fixed("/embed/bench/week?limit=10"))},
		{"rank_card", get(shared.url, card)},
		{"rank_card_read", get(shared.url, func(r *rand.Rand) string { return cardReadPath + members[r.IntN(cardN)] })},
		{"rank_card_bytes", get(shared.url, func(r *rand.Rand) string { return cardBytesPath + members[r.IntN(cardN)] })},
	}
	for _, c := range contenders {
		if _, err := drive(ctx, pagesClients, warmupFor(e.opts.duration), c.work); err != nil {
			return fmt.Errorf("%s warm-up: %w", c.name, err)
		}
	}
	// Every ratio divides by /healthz measured at another moment, and a
	// shared machine's speed drifts: the contenders take turns in
	// pagesRounds slices of -duration each, so a slow minute weighs on all
	// of them alike.
	results := map[string]runResult{}
	redisCPUs, appCPUs := map[string]time.Duration{}, map[string]time.Duration{}
	calls, usec := map[string]map[string]float64{}, map[string]map[string]float64{}
	slice := e.opts.duration / pagesRounds
	for range pagesRounds {
		for _, c := range contenders {
			if err := e.rdb.ConfigResetStat(ctx).Err(); err != nil {
				return err
			}
			cpu0, err := redisCPU(ctx, e.rdb)
			if err != nil {
				return err
			}
			app0 := processCPU()
			res, err := drive(ctx, pagesClients, slice, c.work)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			appCPUs[c.name] += processCPU() - app0
			cpu1, err := redisCPU(ctx, e.rdb)
			if err != nil {
				return err
			}
			stats, err := commandStats(ctx, e.rdb)
			if err != nil {
				return err
			}
			all := results[c.name]
			all.events += res.events
			all.calls += res.calls
			all.elapsed += res.elapsed
			all.latencies = append(all.latencies, res.latencies...)
			results[c.name] = all
			redisCPUs[c.name] += cpu1 - cpu0
			if calls[c.name] == nil {
				calls[c.name], usec[c.name] = map[string]float64{}, map[string]float64{}
			}
			for _, st := range stats {
				calls[c.name][st.name] += float64(st.calls)
				usec[c.name][st.name] += float64(st.calls) * st.usecPerCall
			}
		}
	}
	// Redis CPU per request, and this process's (the page server and its
	// clients together) per request.
	redisUS, appUS := map[string]float64{}, map[string]float64{}
	for _, c := range contenders {
		res := results[c.name]
		redisUS[c.name] = divide(float64(redisCPUs[c.name].Microseconds()), float64(res.events))
		appUS[c.name] = divide(float64(appCPUs[c.name].Microseconds()), float64(res.events))
		lat := sortedCopy(res.latencies)
		e.logf("pages: %-20s %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  redis CPU %.1f us/req  server+client CPU %.1f us/req", c.name, res.eventsPerSecond(), ms(percentile(lat, 50)), ms(percentile(lat, 99)), redisUS[c.name], appUS[c.name])
		names := make([]string, 0, len(calls[c.name]))
		for name := range calls[c.name] {
			names = append(names, name)
		}
		sort.Slice(names, func(i, j int) bool { return calls[c.name][names[i]] > calls[c.name][names[j]] })
		var parts []string
		for _, name := range names {
			n := calls[c.name][name]
			parts = append(parts, fmt.Sprintf("%s %.2f/req %.1fus/call", name, divide(n, float64(res.events)), divide(usec[c.name][name], n)))
		}
		e.logf("       %-20s redis commands: %s", "", strings.Join(parts, ", "))
	}
	for _, name := range []string{"healthz", "board_page", "board_page_unshared", "board_page_304", "embed", "rank_card", "rank_card_read", "rank_card_bytes"} {
		res := results[name]
		lat := sortedCopy(res.latencies)
		e.out.bench(name+"_rps", res.eventsPerSecond(), "req/s")
		e.out.bench(name+"_p50_ms", ms(percentile(lat, 50)), "ms")
		e.out.bench(name+"_p99_ms", ms(percentile(lat, 99)), "ms")
		e.out.bench(name+"_redis_us_per_req", redisUS[name], "us")
		e.out.bench(name+"_app_us_per_req", appUS[name], "us")
	}
	hz := results["healthz"].eventsPerSecond()
	e.out.ratio("board_page_vs_healthz", divide(results["board_page"].eventsPerSecond(), hz))
	e.out.ratio("board_page_unshared_vs_healthz", divide(results["board_page_unshared"].eventsPerSecond(), hz))
	e.logf("  targets: board_page_vs_healthz >= 0.5, embed_vs_healthz >= 0.5, rank_card_vs_healthz >= 0.25, rank_card_redis_us_per_req <= 40 us")
	e.out.ratio("embed_vs_healthz", divide(results["embed"].eventsPerSecond(), hz))
	e.out.ratio("rank_card_vs_healthz", divide(results["rank_card"].eventsPerSecond(), hz))
	e.out.ratio("board_page_304_vs_healthz", divide(results["board_page_304"].eventsPerSecond(), hz))
	// The card's ceiling: its Redis read alone, answered with 3 bytes and
	// none of the pages' middleware. A card page, which also builds,
	// renders and compresses the card, cannot be faster than this.
	e.out.ratio("rank_card_read_vs_healthz", divide(results["rank_card_read"].eventsPerSecond(), hz))
	// The floor of a card page made per request: its Redis read, then a
	// card page's bytes, gzipped once before the run, with a page's
	// headers. Only the model, the markup and the compression are left
	// out.
	e.out.ratio("rank_card_bytes_vs_healthz", divide(results["rank_card_bytes"].eventsPerSecond(), hz))

	// The card read directly, -writers readers at once, Redis's CPU per
	// read: by a store that keeps no chart point yet (a just-started
	// instance), each card member once; then by the same store, which
	// now keeps every card member's final points; beside the least Redis
	// work of the card's current standings (shard_floor.go).
	cold, err := ranking.Open(ctx, cfg, ranking.Options{RedisURL: "redis://" + e.rdb.Options().Addr, Prefix: "bench-pages:"})
	if err != nil {
		return err
	}
	defer cold.Close()
	cardMembers := members[:cardN]
	readCard := func(ctx context.Context, member string) error {
		_, err := cold.RankCard(ctx, "bench", "week", member, ranking.RankCardQuery{Around: cardReadAround, History: cardReadHistory})
		return err
	}
	cpu0, err := redisCPU(ctx, e.rdb)
	if err != nil {
		return err
	}
	err = e.inBatches(ctx, cardN, 1, func(ctx context.Context, lo, _ int) error { return readCard(ctx, cardMembers[lo]) })
	if err != nil {
		return fmt.Errorf("cold cards: %w", err)
	}
	cpu1, err := redisCPU(ctx, e.rdb)
	if err != nil {
		return err
	}
	kept, _, err := e.readCPU(ctx, []*redis.Client{e.rdb}, func(ctx context.Context, rng *rand.Rand) error {
		return readCard(ctx, cardMembers[rng.IntN(cardN)])
	})
	if err != nil {
		return fmt.Errorf("cards with points kept: %w", err)
	}
	floor, err := e.cardFloor(ctx, []*redis.Client{e.rdb}, cfg, store, "bench-pages:", "bench", cardMembers, cardReadAround, false)
	if err != nil {
		return err
	}
	rowsFloor, err := e.cardFloor(ctx, []*redis.Client{e.rdb}, cfg, store, "bench-pages:", "bench", cardMembers, cardReadAround, true)
	if err != nil {
		return err
	}
	e.logf("pages: %d card members' cards read once each by a store that kept nothing, then at random by the same store (points kept)", cardN)
	e.out.bench("rank_card_cold_redis_us_per_read", divide(float64((cpu1-cpu0).Microseconds()), float64(cardN)), "us")
	e.out.bench("rank_card_kept_redis_us_per_read", kept, "us")
	e.out.bench("rank_card_floor_redis_us_per_read", floor, "us")
	e.logf("  floor: the least an exact card's current standings ask of Redis (its chart's final periods kept), one plain script")
	e.out.bench("rank_card_rows_floor_redis_us_per_read", rowsFloor, "us")
	e.logf("  rows floor: the same, answering the headline's rows as a card shows them (each neighbour's code and name)")
	e.out.ratio("rank_card_kept_vs_cold", divide(kept, divide(float64((cpu1-cpu0).Microseconds()), float64(cardN))))
	e.out.ratio("rank_card_kept_vs_floor", divide(kept, floor))
	e.out.ratio("rank_card_kept_vs_rows_floor", divide(kept, rowsFloor))
	return nil
}

// pagesHistory is how many finished periods of every view before the
// current one the card members have a score in, as a rank card's chart
// (12 periods) shows them.
const pagesHistory = 11

// loadCardHistory gives up to 10,000 of the members (the card members)
// a score in each of the pagesHistory days, weeks and months before the
// current ones, and returns how many. Past periods are written through a
// store whose board accepts events 400 days late; the page servers read
// the same board with the default lateness, so those periods are final.
func loadCardHistory(ctx context.Context, e *env, members []string) (int, error) {
	cardN := min(len(members), 10000)
	cfg, err := ranking.ParseConfig([]byte(strings.Replace(pagesBoard, "    title: Bench", "    title: Bench\n    lateness: 9600h", 1)))
	if err != nil {
		return 0, err
	}
	late, err := ranking.Open(ctx, cfg, ranking.Options{RedisURL: "redis://" + e.rdb.Options().Addr, Prefix: "bench-pages:"})
	if err != nil {
		return 0, err
	}
	defer late.Close()
	now, err := late.Now(ctx)
	if err != nil {
		return 0, err
	}
	cal := cfg.Calendar
	var times []time.Time // one moment in each past period
	for _, v := range cfg.Boards[0].Views {
		if v.Kind == ranking.All {
			continue
		}
		p := cal.PeriodAt(v, now)
		for range pagesHistory {
			p = cal.Prev(v, p)
			times = append(times, p.Start.Add(p.End.Sub(p.Start)/2))
		}
	}
	e.logf("pages: %d card members get a score in each of the %d days, weeks and months before the current ones (%d events)", cardN, pagesHistory, cardN*len(times))
	rnd := rand.New(rand.NewPCG(5, 6))
	values := make([]int64, cardN*len(times))
	for i := range values {
		values[i] = 1 + rnd.Int64N(1000)
	}
	per := ranking.MaxBatch / len(times)
	err = e.inBatches(ctx, cardN, per, func(ctx context.Context, lo, hi int) error {
		var evs []ranking.Event
		for i := lo; i < hi; i++ {
			for j, at := range times {
				evs = append(evs, ranking.Event{Member: members[i], Value: values[i*len(times)+j], At: at})
			}
		}
		res, err := late.Apply(ctx, "bench", evs, ranking.ApplyOptions{NoRanks: true})
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Err != nil {
				return fmt.Errorf("history event of %s: %w", r.Member, r.Err)
			}
		}
		return nil
	})
	return cardN, err
}

// pageServer is a web.Server on a loopback port.
type pageServer struct {
	url  string
	web  *web.Server
	http *http.Server
}

func startPageServer(store *ranking.Store, cfg *ranking.Config, tick time.Duration) (*pageServer, error) {
	srv := web.NewServer(web.Options{
		Store: store, Feed: store, Config: cfg, WriteKeys: []string{"bench"},
		Logger: slog.New(slog.DiscardHandler), PageTick: tick,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, err
	}
	page, err := keptCard(srv.Handler())
	if err != nil {
		srv.Close()
		ln.Close()
		return nil, err
	}
	hs := &http.Server{Handler: withCardRead(store, page, srv.Handler()), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return &pageServer{url: "http://" + ln.Addr().String(), web: srv, http: hs}, nil
}

// cardReadPath + member answers "ok" after reading the member's rank card
// in the week view as the card page reads it (cardAround neighbours,
// cardHistory periods), and nothing else: no model, markup, compression,
// headers or middleware.
const (
	cardReadPath    = "/bench/card-read/"
	cardReadAround  = 5  // web's cardAround
	cardReadHistory = 12 // web's cardHistory
)

// withCardRead serves cardReadPath, and cardBytesPath + member, which
// reads the card as cardReadPath does, then answers page, a card page as
// the server answers it (headers and gzipped body) kept from before the
// run; other paths go to next.
func withCardRead(store *ranking.Store, page *httptest.ResponseRecorder, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		member, ok := strings.CutPrefix(r.URL.Path, cardReadPath)
		kept := false
		if !ok {
			member, kept = strings.CutPrefix(r.URL.Path, cardBytesPath)
		}
		if !ok && !kept {
			next.ServeHTTP(w, r)
			return
		}
		rc, err := store.RankCard(r.Context(), "bench", "week", member, ranking.RankCardQuery{Around: cardReadAround, History: cardReadHistory})
		if err != nil || rc.Rank == 0 {
			http.Error(w, fmt.Sprintf("card of %s: %v", member, err), http.StatusInternalServerError)
			return
		}
		if !kept {
			io.WriteString(w, "ok\n")
			return
		}
		for k, v := range page.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(page.Code)
		w.Write(page.Body.Bytes())
	})
}

const cardBytesPath = "/bench/card-bytes/"

// keptCard is the first card member's week card page as the server
// answers a browser (gzip accepted).
func keptCard(h http.Handler) (*httptest.ResponseRecorder, error) {
	req := httptest.NewRequest(http.MethodGet, "/boards/bench/week/members/"+memberIDs(1)[0], nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "gzip" {
		return nil, fmt.Errorf("card page to keep: status %d, encoding %q", rec.Code, rec.Header().Get("Content-Encoding"))
	}
	return rec, nil
}

func (p *pageServer) close() {
	p.web.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.http.Shutdown(ctx)
}
