// Command benchmark measures Standings against plain Redis baselines.
//
// It starts its own redis-server on 127.0.0.1, runs the selected suites and
// stops the server again. Progress goes to stderr; results go to stdout as
// machine-readable lines:
//
//	BENCH <name> <value> <unit>
//	RATIO <name> <value>
//
// Usage:
//
//	go run ./cmd/benchmark [-suite ingest,memory] [-duration 5s] [-members 1000000]
//
// Every measurement is bounded by -duration (or by -members for loads), and
// the whole run by -timeout, so the program always stops by itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// suite is one named group of measurements.
type suite struct {
	name string
	desc string
	run  func(ctx context.Context, e *env) error
}

// suites lists every suite in the order they run. Add new ones here.
var suites = []suite{
	{"ingest", "events/s of Store.Apply on a 5-view board against plain Redis write patterns", runIngest},
	{"memory", "Redis bytes per member per view against plain sorted sets", runMemory},
	{"windows", "events/s into 7d, 30d and 90d rolling windows, side by side", runWindows},
	{"pages", "board page and rank card req/s and p99 with 64 clients, beside /healthz", runPages},
	{"live", "websocket viewers of one board under steady writes: the hub against a naive per-viewer renderer", runLive},
	{"stream", "events/s through a board's ingest stream beside Store.Apply of the same events", runStream},
	{"league", "events/s into a board with a league beside the same board without, and the longest Redis call while a round of 100,000 members closes", runLeague},
	{"shard", "one board over a 3-master cluster: shards 1 against shards 3, Redis CPU and memory per master for the same events and reads", runShard},
	{"results", "how long recording a final period's result blocks Redis, on -members members and on 1,000", runResults},
}

// options are the command-line settings.
type options struct {
	suites   []suite
	duration time.Duration // per measurement
	members  int           // memory and results suites load size
	writers  int           // concurrent client goroutines for every contender
	timeout  time.Duration // whole run

	viewers      int           // live suite: websocket viewers
	liveRate     int           // live suite: events/s written
	liveDuration time.Duration // live suite: length of each side
	ghosts       int           // live suite: extra viewers of members that never score

	cpuProfile string // file for a CPU profile of the whole run ("" = none)
}

// env is what a suite runs with.
type env struct {
	opts options
	rdb  *redis.Client
	out  *reporter // stdout results
	log  io.Writer // stderr progress
}

func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.log, format+"\n", args...)
}

func main() {
	if liveChildMain() {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchmark: %v\n", err)
		os.Exit(1)
	}
}

// run parses args, starts Redis, runs the suites and always stops Redis.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	if opts.cpuProfile != "" {
		f, err := os.Create(opts.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	start := time.Now()
	srv, err := redistest.StartServer(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := srv.Close(); cerr != nil {
			fmt.Fprintf(stderr, "benchmark: stopping redis-server: %v\n", cerr)
		}
	}()
	rdb := newClient(srv.Addr, opts.writers)
	defer rdb.Close()
	fmt.Fprintf(stderr, "redis-server %s on %s (pid %d); %d writers, %v per measurement\n",
		serverVersion(ctx, rdb), srv.Addr, srv.PID(), opts.writers, opts.duration)

	e := &env{opts: opts, rdb: rdb, out: newReporter(stdout), log: stderr}
	for _, s := range opts.suites {
		fmt.Fprintf(stderr, "== suite %s: %s\n", s.name, s.desc)
		t0 := time.Now()
		if err := s.run(ctx, e); err != nil {
			if ctxErr := context.Cause(ctx); ctxErr != nil && !errors.Is(err, ctxErr) {
				err = fmt.Errorf("%w (stopped: %v)", err, ctxErr)
			}
			return fmt.Errorf("suite %s: %w", s.name, err)
		}
		fmt.Fprintf(stderr, "== suite %s done in %v\n", s.name, time.Since(t0).Round(time.Millisecond))
	}
	fmt.Fprintf(stderr, "all suites done in %v\n", time.Since(start).Round(time.Millisecond))
	return e.out.err
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("benchmark", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suiteList := fs.String("suite", "", "comma-separated suites to run (default all: "+strings.Join(suiteNames(), ",")+")")
	opts := options{}
	fs.DurationVar(&opts.duration, "duration", 5*time.Second, "length of each timed measurement")
	fs.IntVar(&opts.members, "members", 1_000_000, "members loaded by the memory suite and in the results suite's period")
	fs.IntVar(&opts.writers, "writers", 4, "concurrent writers, the same for every contender")
	fs.DurationVar(&opts.timeout, "timeout", 30*time.Minute, "upper bound on the whole run")
	fs.IntVar(&opts.viewers, "viewers", 2000, "live suite: websocket viewers of one board")
	fs.IntVar(&opts.liveRate, "live-rate", 1000, "live suite: events written per second")
	fs.DurationVar(&opts.liveDuration, "live-duration", 20*time.Second, "live suite: length of each measurement")
	fs.StringVar(&opts.cpuProfile, "cpuprofile", "", "write a CPU profile of the run (this process: clients and servers) to `file`, for go tool pprof")
	fs.IntVar(&opts.ghosts, "ghosts", 2000, "live suite: a third run of the hub with this many extra viewers of members that never score (0: none)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	switch {
	case opts.duration <= 0:
		return options{}, errors.New("-duration must be positive")
	case opts.members <= 0:
		return options{}, errors.New("-members must be positive")
	case opts.writers <= 0 || opts.writers > 64:
		return options{}, errors.New("-writers must be between 1 and 64")
	case opts.viewers <= 0 || opts.viewers > 10000:
		return options{}, errors.New("-viewers must be between 1 and 10000")
	case opts.ghosts < 0 || opts.ghosts > 10000:
		return options{}, errors.New("-ghosts must be between 0 and 10000")
	case opts.liveRate <= 0 || opts.liveDuration <= 0:
		return options{}, errors.New("-live-rate and -live-duration must be positive")
	case opts.timeout <= 0:
		return options{}, errors.New("-timeout must be positive")
	}
	var err error
	opts.suites, err = selectSuites(*suiteList)
	return opts, err
}

// selectSuites resolves a comma-separated list; empty means all.
func selectSuites(list string) ([]suite, error) {
	if strings.TrimSpace(list) == "" {
		return suites, nil
	}
	var picked []suite
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		s, ok := findSuite(name)
		if !ok {
			return nil, fmt.Errorf("unknown suite %q (have %s)", name, strings.Join(suiteNames(), ", "))
		}
		seen[name] = true
		picked = append(picked, s)
	}
	return picked, nil
}

func findSuite(name string) (suite, bool) {
	for _, s := range suites {
		if s.name == name {
			return s, true
		}
	}
	return suite{}, false
}

func suiteNames() []string {
	names := make([]string, len(suites))
	for i, s := range suites {
		names[i] = s.name
	}
	return names
}

// newClient returns a client whose pool fits the writers plus a spare for
// control commands, with timeouts long enough for FLUSHALL of a big data set.
func newClient(addr string, writers int) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:         addr,
		PoolSize:     writers + 2,
		ReadTimeout:  time.Minute,
		WriteTimeout: time.Minute,
	})
}

// openStore opens a store for cfg as cmd/standings does (ranking.Open), on
// the benchmark's Redis with a client like newClient's: pool connections,
// timeouts long enough for big scripts; query adds go-redis URL options.
func (e *env) openStore(ctx context.Context, cfg *ranking.Config, prefix string, pool int, query string) (*ranking.Store, error) {
	return e.openStoreWith(ctx, cfg, ranking.Options{Prefix: prefix}, pool, query)
}

// openStoreWith is openStore with further options.
func (e *env) openStoreWith(ctx context.Context, cfg *ranking.Config, opts ranking.Options, pool int, query string) (*ranking.Store, error) {
	opts.RedisURL = fmt.Sprintf("redis://%s/0?pool_size=%d&read_timeout=1m&write_timeout=1m", e.rdb.Options().Addr, pool)
	if query != "" {
		opts.RedisURL += "&" + query
	}
	return ranking.Open(ctx, cfg, opts)
}

func serverVersion(ctx context.Context, rdb *redis.Client) string {
	info, err := infoSection(ctx, rdb, "server")
	if err != nil {
		return "?"
	}
	return info["redis_version"]
}
