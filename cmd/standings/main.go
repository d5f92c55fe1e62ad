// Command standings serves live leaderboards kept in Redis.
//
// With no Redis configured it runs on an embedded, non-durable in-process
// Redis with the demo boards, so that it works out of the box.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
)

//go:embed demo.yaml
var demoConfig []byte

func main() {
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

	Logger *slog.Logger
	Stdout io.Writer

	Config *ranking.Config
	Store  *ranking.Store

	embedded *miniredis.Miniredis
	rdb      redis.UniversalClient
	demoSet  bool
	stop     context.CancelFunc
	done     chan struct{}
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "demo" {
			m.demoSet = true
		}
	})
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if m.RedisURL != "" && m.RedisCluster != "" {
		return errors.New("--redis and --redis-cluster are exclusive: give one")
	}
	return nil
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

// Run loads the boards, connects to Redis (or starts the embedded one) and
// checks that it answers.
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
	switch {
	case m.RedisCluster != "":
		m.rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(m.RedisCluster, ",")})
	case m.RedisURL != "":
		opts, err := redis.ParseURL(m.RedisURL)
		if err != nil {
			return fmt.Errorf("--redis: %w", err)
		}
		m.rdb = redis.NewClient(opts)
	default:
		m.embedded = miniredis.NewMiniRedis()
		m.embedded.ClockTTL(true) // TTLs run with the wall clock, so retention expires
		if err := m.embedded.Start(); err != nil {
			return fmt.Errorf("embedded redis: %w", err)
		}
		m.rdb = redis.NewClient(&redis.Options{Addr: m.embedded.Addr()})
		if !m.demoSet {
			m.Demo = true
		}
		m.Logger.Warn("NO REDIS CONFIGURED: running on an embedded in-memory Redis; data is NOT durable and is lost on exit. Use --redis or --redis-cluster for real use.")
	}
	m.Store = ranking.NewStore(m.rdb, m.Config, ranking.Options{})
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := m.Store.SyncClock(pingCtx); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	m.Logger.Info("boards loaded", "boards", len(m.Config.Boards), "timezone", m.Config.Timezone)

	// Rolling windows: build today's if missing and tomorrow's ahead of
	// midnight. Every instance may run this; the builds are idempotent.
	bg, stop := context.WithCancel(context.Background())
	m.stop, m.done = stop, make(chan struct{})
	go func() {
		defer close(m.done)
		m.Store.RunWindowPreparer(bg, time.Minute, func(err error) {
			m.Logger.Error("preparing rolling windows", "err", err)
		})
	}()
	return nil
}

// Close stops what Run started.
func (m *Main) Close() error {
	if m.stop != nil {
		m.stop()
		<-m.done
	}
	var errs []error
	if m.rdb != nil {
		errs = append(errs, m.rdb.Close())
	}
	if m.embedded != nil {
		m.embedded.Close()
	}
	return errors.Join(errs...)
}
