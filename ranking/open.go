package ranking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Open connects to the Redis that opts names (RedisURL, RedisCluster or
// Embedded, exactly one), checks that it answers, and returns a Store for
// cfg on it. Close closes what Open opened. A RedisURL that go-redis cannot
// read is a *RedisURLError; a Redis that does not answer is an error that
// starts "redis: ". Redis's clock is learned on first use (SyncClock learns
// it now).
func Open(ctx context.Context, cfg *Config, opts Options) (*Store, error) {
	if n := btoi(opts.RedisURL != "") + btoi(opts.RedisCluster != "") + btoi(opts.Embedded); n != 1 {
		return nil, errors.New("ranking: give exactly one of RedisURL, RedisCluster and Embedded")
	}
	if opts.Logger != nil {
		// go-redis logs every failed dial; an outage is already reported by
		// /readyz, the metrics and one warning per failed request, so its
		// own lines go to debug.
		redis.SetLogger(redisLogger{opts.Logger})
	}
	var (
		rdb      redis.UniversalClient
		embedded *miniredis.Miniredis
	)
	switch {
	case opts.RedisCluster != "":
		rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(opts.RedisCluster, ","), ContextTimeoutEnabled: true, PoolSize: DefaultPoolSize})
	case opts.RedisURL != "":
		ro, err := redisURLOptions(opts.RedisURL)
		if err != nil {
			return nil, err
		}
		rdb = redis.NewClient(ro)
	default:
		embedded = miniredis.NewMiniRedis()
		embedded.ClockTTL(true) // TTLs run with the wall clock, so retention expires
		if err := embedded.Start(); err != nil {
			return nil, fmt.Errorf("embedded redis: %w", err)
		}
		rdb = redis.NewClient(&redis.Options{Addr: embedded.Addr(), ContextTimeoutEnabled: true, PoolSize: DefaultPoolSize})
		// The embedded miniredis gains nothing from shared read pipelines
		// and would give them one turn of its lock.
		opts.SoloReads = true
	}
	s := newStore(rdb, cfg, opts)
	s.owned, s.embedded = true, embedded
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("redis: %w", err)
	}
	return s, nil
}

// Close closes what Open opened: the Redis client, and the embedded Redis.
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	err := s.rdb.Close()
	if s.embedded != nil {
		s.embedded.Close()
	}
	return err
}

// RedisURLError is a RedisURL that go-redis cannot read; callers name
// where the URL came from (cmd/standings: "--redis: ...").
type RedisURLError struct{ Err error }

func (e *RedisURLError) Error() string { return e.Err.Error() }
func (e *RedisURLError) Unwrap() error { return e.Err }

// redisURLOptions parses a RedisURL (go-redis's URL options apply) and
// fills in what the URL leaves to the server.
func redisURLOptions(url string) (*redis.Options, error) {
	ro, err := redis.ParseURL(url)
	if err != nil {
		return nil, &RedisURLError{err}
	}
	// Request deadlines (2 s) must bound every command, also when a Redis
	// hangs rather than refusing connections.
	ro.ContextTimeoutEnabled = true
	if ro.PoolSize == 0 { // no pool_size in the URL
		ro.PoolSize = DefaultPoolSize
	}
	return ro, nil
}

// redisLogger sends go-redis's internal log lines to slog at debug level.
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.l.DebugContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TravelEmbedded sets the embedded Redis's clock to t, or back to the wall
// clock when t is zero, and learns it; false (and nothing done) on any other
// Redis. The demo writes its history this way: each past period is written
// while it is open and recorded once final, through the normal write path.
// Nothing else may use the store while the clock is away from the wall's.
func (s *Store) TravelEmbedded(ctx context.Context, t time.Time) (bool, error) {
	if s.embedded == nil {
		return false, nil
	}
	if t.IsZero() {
		// Tick TTLs up to the wall clock first, then let them run with it
		// again: SetTime(zero) alone would expire every key at once.
		s.embedded.SetTime(time.Now())
		s.embedded.DB(0) // reaching a database ticks the TTLs
		s.embedded.ClockTTL(false)
		s.embedded.SetTime(time.Time{})
		s.embedded.ClockTTL(true)
	} else {
		s.embedded.SetTime(t)
	}
	return true, s.SyncClock(ctx)
}
