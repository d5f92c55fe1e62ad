package ranking

import "github.com/redis/go-redis/v9"

// StoreOnClient is a Store on a client of the test's own, for tests that
// watch or alter the store's own commands with hooks on rdb; every other
// test opens its store with rankingtest.MustStore.
func StoreOnClient(rdb redis.UniversalClient, cfg *Config, opts Options) *Store {
	return newStore(rdb, cfg, opts)
}
