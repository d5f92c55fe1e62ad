// Command standings serves live leaderboards kept in Redis.
//
// With no Redis configured it runs on an embedded, non-durable in-process
// Redis with the demo boards, so that it works out of the box.
package main

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/web"
)

//go:embed demo.yaml
var demoConfig []byte

func main() {
	if len(os.Args) > 1 && os.Args[1] == "reshard" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := reshardMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	m := NewMain()
	if err := m.ParseFlags(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := m.Run(ctx); err != nil {
		m.Logger.Error("start", "err", err)
		m.Close()
		os.Exit(1)
	}
	<-ctx.Done()
	m.Logger.Info("shutting down")
	if err := m.Close(); err != nil {
		m.Logger.Error("shutdown", "err", err)
		os.Exit(1)
	}
}

// Main is the program: its settings, and what Run started, for Close to stop.
type Main struct {
	ConfigPath   string
	Addr         string
	RedisURL     string
	RedisCluster string
	Demo         bool
	WriteKeys    []string      // STANDINGS_WRITE_KEYS
	AdminKeys    []string      // STANDINGS_ADMIN_KEYS
	LiveTick     time.Duration // STANDINGS_LIVE_TICK: live fragments render at most once per tick
	// Live connection limits (STANDINGS_LIVE_MAX_CONNS,
	// STANDINGS_LIVE_MAX_PER_CLIENT) and the reverse proxies whose
	// X-Forwarded-For names the client (STANDINGS_TRUSTED_PROXIES).
	LiveMaxConns     int
	LiveMaxPerClient int
	TrustedProxies   []*net.IPNet
	WriteRate        int // STANDINGS_WRITE_RATE: events per second per API key

	Logger *slog.Logger
	Stdout io.Writer

	Config *ranking.Config
	Store  *ranking.Store
	URL    string // where Run is serving, e.g. http://127.0.0.1:8080

	embedded bool   // no Redis configured: the store runs on an in-process one
	instance string // this process's name: its ingest consumer, its word that it serves the boards

	streamStats *ranking.StreamStats // the ingest consumers' counters, for /metrics
	http        *http.Server
	web         *web.Server
	serving     chan struct{} // closed when the HTTP server has stopped
	demoSet     bool
	stop        context.CancelFunc
	done        chan struct{}
}

// NewMain returns a Main with the contract's defaults.
func NewMain() *Main {
	return &Main{Addr: "127.0.0.1:8080", Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)), Stdout: os.Stdout}
}

// ParseFlags reads flags, each with an environment twin (flags win).
func (m *Main) ParseFlags(args []string) error {
	fs := flag.NewFlagSet("standings", flag.ContinueOnError)
	fs.StringVar(&m.ConfigPath, "config", envOr("STANDINGS_CONFIG", ""), "boards file (YAML); default: the built-in demo boards")
	fs.StringVar(&m.Addr, "addr", envOr("STANDINGS_ADDR", m.Addr), "listen address HOST:PORT")
	fs.StringVar(&m.RedisURL, "redis", envOr("STANDINGS_REDIS_URL", ""), "redis:// or rediss:// URL of a standalone Redis; empty = embedded, not durable")
	fs.StringVar(&m.RedisCluster, "redis-cluster", envOr("STANDINGS_REDIS_CLUSTER", ""), "comma-separated seed nodes of a Redis Cluster")
	fs.BoolVar(&m.Demo, "demo", os.Getenv("STANDINGS_DEMO") == "1", "generate simulated traffic (on when embedded)")
	maxConns := fs.String("live-max-conns", envOr("STANDINGS_LIVE_MAX_CONNS", strconv.Itoa(web.DefaultLiveMaxConns)), "most open live-feed websockets")
	maxPerClient := fs.String("live-max-per-client", envOr("STANDINGS_LIVE_MAX_PER_CLIENT", strconv.Itoa(web.DefaultLiveMaxPerClient)), "most open live-feed websockets of one client address (an IPv6 /64)")
	proxies := fs.String("trusted-proxies", envOr("STANDINGS_TRUSTED_PROXIES", ""), "comma-separated CIDRs or IPs of reverse proxies whose X-Forwarded-For names the client; empty: the TCP peer is the client")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "demo" {
			m.demoSet = true
		}
	})
	m.LiveTick = web.DefaultLiveTick
	if s := os.Getenv("STANDINGS_LIVE_TICK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 100*time.Millisecond || d > 250*time.Millisecond {
			return fmt.Errorf("STANDINGS_LIVE_TICK must be a duration from 100ms to 250ms, got %q", s)
		}
		m.LiveTick = d
	}
	var err error
	if m.LiveMaxConns, err = liveLimit("--live-max-conns (STANDINGS_LIVE_MAX_CONNS)", *maxConns); err != nil {
		return err
	}
	if m.LiveMaxPerClient, err = liveLimit("--live-max-per-client (STANDINGS_LIVE_MAX_PER_CLIENT)", *maxPerClient); err != nil {
		return err
	}
	if m.TrustedProxies, err = parseTrustedProxies(*proxies); err != nil {
		return err
	}
	m.WriteRate = web.DefaultWriteRate
	if s := os.Getenv("STANDINGS_WRITE_RATE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1_000_000 {
			return fmt.Errorf("STANDINGS_WRITE_RATE must be a whole number of events per second from 1 to 1000000, got %q", s)
		}
		m.WriteRate = n
	}
	m.WriteKeys = splitKeys(os.Getenv("STANDINGS_WRITE_KEYS"))
	m.AdminKeys = splitKeys(os.Getenv("STANDINGS_ADMIN_KEYS"))
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if m.RedisURL != "" && m.RedisCluster != "" {
		return errors.New("--redis and --redis-cluster are exclusive: give one")
	}
	return nil
}

// liveLimit reads a connection limit: a whole number from 1 up.
func liveLimit(name, s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s must be a whole number from 1 up, got %q", name, s)
	}
	return n, nil
}

// parseTrustedProxies reads comma-separated CIDRs or single addresses.
func parseTrustedProxies(s string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !strings.Contains(p, "/") {
			if ip := net.ParseIP(p); ip != nil {
				bits := 128
				if ip.To4() != nil {
					ip, bits = ip.To4(), 32
				}
				out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
				continue
			}
		}
		_, n, err := net.ParseCIDR(p)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxies (STANDINGS_TRUSTED_PROXIES): %q is neither an IP address nor a CIDR", p)
		}
		out = append(out, n)
	}
	return out, nil
}

// splitKeys reads a comma-separated key list, trimmed, without empty entries.
func splitKeys(s string) []string {
	var keys []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

// Run loads the boards, connects to Redis (or starts the embedded one),
// checks that it answers, and starts serving HTTP on Addr.
func (m *Main) Run(ctx context.Context) error {
	var err error
	if m.ConfigPath == "" {
		m.Config, err = ranking.ParseConfig(demoConfig)
	} else {
		m.Config, err = ranking.LoadConfigFile(m.ConfigPath)
	}
	if err != nil {
		return err
	}
	m.embedded = m.RedisURL == "" && m.RedisCluster == ""
	if m.embedded {
		if !m.demoSet {
			m.Demo = true
		}
		m.Logger.Warn("NO REDIS CONFIGURED: running on an embedded in-memory Redis; data is NOT durable and is lost on exit. Use --redis or --redis-cluster for real use.")
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m.Store, err = ranking.Open(pingCtx, m.Config, ranking.Options{
		RedisURL: m.RedisURL, RedisCluster: m.RedisCluster, Embedded: m.embedded,
		Logger: m.Logger,
	})
	var urlErr *ranking.RedisURLError
	if errors.As(err, &urlErr) {
		return fmt.Errorf("--redis: %w", err)
	}
	if err != nil {
		return err
	}
	// Learn Redis's clock now rather than on the first request.
	if err := m.Store.SyncClock(pingCtx); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	// Say that this instance serves the boards before checking their shard
	// counts: a reshard starting meanwhile then sees one or the other.
	host, _ := os.Hostname()
	var r [4]byte
	_, _ = rand.Read(r[:])
	m.instance = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(r[:]))
	if err := m.Store.Announce(pingCtx, m.instance); err != nil {
		return err
	}
	if err := m.Store.CheckShards(pingCtx); err != nil {
		_ = m.Store.Withdraw(pingCtx, m.instance)
		return err
	}
	// A board's stored scores read back only with the settings that wrote
	// them.
	if err := m.Store.CheckEncoding(pingCtx); err != nil {
		_ = m.Store.Withdraw(pingCtx, m.instance)
		return err
	}
	m.Logger.Info("boards loaded", "boards", len(m.Config.Boards), "timezone", m.Config.Timezone)
	// Bind before any background work starts, so that a busy port is the
	// one thing reported and no demo traffic is started for nobody.
	ln, err := net.Listen("tcp", m.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}

	var d *demo
	if m.Demo {
		// The demo's history travels the embedded Redis's clock: before
		// anything else reads or writes.
		d = newDemo(m.Store, m.Config, m.Logger, uint64(time.Now().UnixNano()))
		d.Seed(ctx)
	}
	// Rolling windows: build today's if missing and tomorrow's ahead of
	// midnight. Every instance may run this; the builds are idempotent.
	bg, stop := context.WithCancel(context.Background())
	m.streamStats = &ranking.StreamStats{}
	m.stop, m.done = stop, make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		m.Store.RunWindowPreparer(bg, time.Minute, func(err error) {
			m.Logger.Error("preparing rolling windows", "err", err)
		})
	})
	wg.Go(func() {
		// Every instance records and relays results; each is recorded once.
		m.Store.RunResultRecorder(bg, 30*time.Second, func(err error) {
			m.Logger.Error("recording period results", "err", err)
		})
	})
	wg.Go(func() {
		// Names, search entries and member records of members with no
		// score left go (contract 14); every instance may walk, each step
		// checks and deletes atomically.
		m.Store.RunSweeper(bg, time.Minute, func(err error) {
			m.Logger.Error("forgetting members without scores", "err", err)
		})
	})
	wg.Go(func() {
		// Search entries move from ni into packed blocks in bounded steps;
		// every instance may run it, each step is atomic.
		m.Store.RunIndexCompactor(bg, 10*time.Second, func(err error) {
			m.Logger.Error("compacting the search index", "err", err)
		})
	})
	// Ingest streams: every instance joins the consumer group under a name
	// of its own, so a dead instance's entries are claimed by the others.
	wg.Go(func() {
		m.Store.RunStreamConsumer(bg, m.instance, ranking.StreamOptions{Stats: m.streamStats}, func(err error) {
			m.Logger.Error("ingest stream", "err", err)
		})
	})
	// Name search: members who scored before the index existed are added
	// once per board, in the background.
	wg.Go(func() {
		if err := m.Store.IndexMemberIDs(bg); err != nil && bg.Err() == nil {
			m.Logger.Error("indexing member ids for search", "err", err)
		}
	})
	// Webhooks: every instance sends due deliveries; a lease in Redis keeps
	// each in flight on one instance at a time.
	wg.Go(func() {
		m.Store.RunWebhooks(bg, ranking.WebhookOptions{OnError: func(err error) {
			m.Logger.Error("webhook deliveries", "err", err)
		}})
	})
	// The word that this instance serves the boards, repeated until Close.
	wg.Go(func() {
		m.Store.RunAnnounce(bg, m.instance, func(err error) {
			m.Logger.Error("saying this instance serves the boards", "err", err)
		})
	})
	if d != nil {
		wg.Go(func() { d.Run(bg) })
	}
	go func() {
		wg.Wait()
		close(m.done)
	}()
	return m.serve(ln)
}

// serve starts the HTTP server on ln. Writes are never open to anonymous
// callers: with no key configured, one is generated and logged once.
func (m *Main) serve(ln net.Listener) error {
	writeKeys := m.WriteKeys
	if len(writeKeys) == 0 && len(m.AdminKeys) == 0 {
		key, err := generateKey()
		if err != nil {
			ln.Close()
			return err
		}
		writeKeys = []string{key}
		m.Logger.Warn("generated write key: " + key)
	}
	m.web = web.NewServer(web.Options{
		Store: m.Store, Feed: m.Store, Config: m.Config,
		WriteKeys: writeKeys, AdminKeys: m.AdminKeys,
		Logger:     m.Logger,
		NotDurable: m.embedded,
		LiveTick:   m.LiveTick,

		LiveMaxConns:     m.LiveMaxConns,
		LiveMaxPerClient: m.LiveMaxPerClient,
		TrustedProxies:   m.TrustedProxies,
		WriteRate:        m.WriteRate,
		StreamStats:      m.streamStats,
	})
	ln = m.web.Listener(ln) // bad escapes in paths get the contract's error body
	m.http = &http.Server{
		Handler:           m.web.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
	}
	m.serving = make(chan struct{})
	go func() {
		defer close(m.serving)
		if err := m.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Logger.Error("http server", "err", err)
		}
	}()
	m.URL = "http://" + ln.Addr().String()
	m.Logger.Info("listening", "addr", m.URL)
	return nil
}

// generateKey returns 32 random hex characters.
func generateKey() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate write key: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Close stops what Run started: the HTTP server first (stop accepting,
// finish in-flight requests), then the background work, then Redis.
func (m *Main) Close() error {
	var errs []error
	// Websockets first: HTTP shutdown does not track them. They are told
	// 1012 (service restart) and reconnect to another instance.
	if m.web != nil {
		m.web.Close()
	}
	if m.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := m.http.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("http shutdown: %w", err))
		}
		cancel()
		<-m.serving
	}
	if m.stop != nil {
		m.stop()
		<-m.done
	}
	if m.Store != nil {
		errs = append(errs, m.Store.Close())
	}
	return errors.Join(errs...)
}
