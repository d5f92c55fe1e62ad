// Package rankingtest opens stores for tests the way the program does,
// through ranking.Open.
package rankingtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

// MustStore opens a Store for cfg with ranking.Open on the Redis that rdb
// talks to (a miniredis, the standalone server or the cluster: the
// flavours of redistest.Backends) and closes it when tb finishes. The store
// has a client of its own; rdb stays the test's, for looking at keys.
// An empty opts.Prefix becomes one of the test's own (redistest.Namespace),
// so that tests sharing a server do not collide; ranking.DefaultPrefix
// keeps the program's.
func MustStore(tb testing.TB, rdb redis.UniversalClient, cfg *ranking.Config, opts ranking.Options) *ranking.Store {
	tb.Helper()
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		opts.RedisCluster = strings.Join(c.Options().Addrs, ",")
	case *redis.Client:
		o := c.Options()
		opts.RedisURL = fmt.Sprintf("redis://%s/%d", o.Addr, o.DB)
	default:
		tb.Fatalf("rankingtest: no store on a %T", rdb)
	}
	if opts.Prefix == "" {
		opts.Prefix = redistest.Namespace(tb) + ":"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := ranking.Open(ctx, cfg, opts)
	if err != nil {
		tb.Fatalf("rankingtest: open store: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
