package ranking

import (
	"errors"
	"testing"
)

// TestRedisURLOptions: the RedisURL's own options win; what it leaves out
// gets the server's defaults; a bad URL is a *RedisURLError.
func TestRedisURLOptions(t *testing.T) {
	opts, err := redisURLOptions("redis://localhost:6379/2")
	if err != nil {
		t.Fatal(err)
	}
	if opts.PoolSize != DefaultPoolSize || !opts.ContextTimeoutEnabled || opts.DB != 2 {
		t.Errorf("defaults: pool %d, context timeouts %v, db %d", opts.PoolSize, opts.ContextTimeoutEnabled, opts.DB)
	}
	opts, err = redisURLOptions("redis://localhost:6379/0?pool_size=7")
	if err != nil || opts.PoolSize != 7 {
		t.Errorf("pool_size=7: %v, %v", opts, err)
	}
	for _, bad := range []string{"http://localhost", "redis://localhost/x", "redis://localhost/0?pool_size=many"} {
		var ue *RedisURLError
		if _, err := redisURLOptions(bad); !errors.As(err, &ue) {
			t.Errorf("%s: want a RedisURLError, got %v", bad, err)
		}
	}
}
