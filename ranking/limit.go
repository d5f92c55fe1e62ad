package ranking

import (
	"context"
	_ "embed"
	"fmt"
	"time"
)

//go:embed scripts/limit.lua
var limitLua string

var limitScript = newScript(limitLua)

// Limit is the answer of a rate limit check.
type Limit struct {
	Allowed bool
	// RetryAfter is how long until the cost asked for would be allowed
	// (zero when allowed).
	RetryAfter time.Duration
}

// TakeRate charges cost events to the write budget of one API key: rate
// events per second, bursts of up to burst events, shared by every
// instance on this Redis and timed by Redis's clock. One round trip. A
// refused charge records nothing. The key is stored only as a SHA-256
// digest, so Redis never holds a usable API key.
func (s *Store) TakeRate(ctx context.Context, apiKey string, rate, burst, cost int) (Limit, error) {
	if rate <= 0 || burst <= 0 || cost <= 0 {
		return Limit{}, Errorf(EINTERNAL, "rate limit: rate %d, burst %d, cost %d must be positive", rate, burst, cost)
	}
	if cost > burst {
		// It would never pass; say so without asking Redis.
		return Limit{}, Errorf(EINVALID, "%d events exceed the burst of %d events per API key; send fewer at a time", cost, burst)
	}
	raw, err := limitScript.Run(ctx, s.rdb, []string{s.rateKey(apiKey)}, rate, burst, cost).Int64Slice()
	if err != nil {
		return Limit{}, wrapRedis(err)
	}
	if len(raw) != 2 {
		return Limit{}, fmt.Errorf("limit.lua: unexpected reply %v", raw)
	}
	if raw[0] == 1 {
		return Limit{Allowed: true}, nil
	}
	return Limit{RetryAfter: time.Duration(raw[1]) * time.Microsecond}, nil
}
