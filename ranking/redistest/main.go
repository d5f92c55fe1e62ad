package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequireEnv names the environment variable that, when set to "1", turns a
// missing redis-server into a failure instead of skipped tests.
const RequireEnv = "STANDINGS_REQUIRE_REDIS"

// ClusterMasters is the number of masters in the cluster that Main provides.
const ClusterMasters = 3

// sharedStartTimeout bounds the start of a shared server or cluster.
const sharedStartTimeout = 90 * time.Second

// Available reports why redis-server and redis-cli cannot be used, or nil when
// both are on PATH.
func Available() error {
	var missing []string
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s not found on PATH (Debian: apt-get install redis-server)", strings.Join(missing, " and "))
	}
	return nil
}

// Required reports whether RequireEnv is set to "1".
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// shared holds the servers that Main provides to a test binary.
var shared struct {
	active      atomic.Bool
	unavailable error // set by Main when Redis is missing and not required

	standalone lazy[*Server]
	cluster    lazy[*Cluster]
}

// lazy starts a value on first use and remembers the result, error included.
type lazy[T interface{ Close() error }] struct {
	mu      sync.Mutex
	started bool
	val     T
	err     error
}

func (l *lazy[T]) get(start func(context.Context) (T, error)) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started {
		l.started = true
		ctx, cancel := context.WithTimeout(context.Background(), sharedStartTimeout)
		defer cancel()
		l.val, l.err = start(ctx)
	}
	return l.val, l.err
}

func (l *lazy[T]) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started || l.err != nil {
		return nil
	}
	return l.val.Close()
}

// Main runs the tests of a package that uses the shared servers and returns
// the exit code; call it as os.Exit(redistest.Main(m)) from TestMain.
//
// The shared standalone server and the shared 3-master cluster are started on
// first use by MustStandalone, MustCluster, Client or ClusterClient, and
// stopped after m.Run. When redis-server or redis-cli is missing, Main returns
// 1 without running any test if RequireEnv is "1", and otherwise lets the tests
// run so that the helpers skip them.
func Main(m *testing.M) int {
	if err := Available(); err != nil {
		if Required() {
			fmt.Fprintf(os.Stderr, "redistest: %s=1 but %v\n", RequireEnv, err)
			return 1
		}
		shared.unavailable = err
	}
	if err := LocaleAvailable(); err != nil && Required() {
		fmt.Fprintf(os.Stderr, "redistest: %s=1 but %v; the Redis tests run their servers under it\n", RequireEnv, err)
		return 1
	}
	shared.active.Store(true)
	code := m.Run()
	shared.active.Store(false)
	if err := errors.Join(shared.standalone.close(), shared.cluster.close()); err != nil {
		fmt.Fprintf(os.Stderr, "redistest: stopping shared servers: %v\n", err)
	}
	return code
}

// MustStandalone returns the address of the shared standalone server, starting
// it on first use; it skips tb when Redis is unavailable and not required.
func MustStandalone(tb testing.TB) string {
	tb.Helper()
	checkShared(tb, "MustStandalone")
	s, err := shared.standalone.get(func(ctx context.Context) (*Server, error) {
		return StartServer(ctx)
	})
	if err != nil {
		tb.Fatalf("redistest: shared standalone server: %v", err)
	}
	return s.Addr
}

// MustCluster returns the master addresses of the shared 3-master cluster,
// starting it on first use; it skips tb when Redis is unavailable and not
// required.
func MustCluster(tb testing.TB) []string {
	tb.Helper()
	checkShared(tb, "MustCluster")
	c, err := shared.cluster.get(func(ctx context.Context) (*Cluster, error) {
		return StartCluster(ctx, ClusterMasters)
	})
	if err != nil {
		tb.Fatalf("redistest: shared cluster: %v", err)
	}
	return append([]string(nil), c.Addrs...)
}

func checkShared(tb testing.TB, name string) {
	tb.Helper()
	if !shared.active.Load() {
		tb.Fatalf("redistest: %s needs the package's TestMain to call os.Exit(redistest.Main(m))", name)
	}
	if shared.unavailable != nil {
		tb.Skipf("redistest: skipping, Redis is not available: %v (set %s=1 to fail instead)", shared.unavailable, RequireEnv)
	}
}

// Client returns a go-redis client for the shared standalone server that is
// closed when tb finishes.
func Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: MustStandalone(tb)})
	tb.Cleanup(func() { c.Close() })
	return c
}

// ClusterClient returns a go-redis cluster client for the shared cluster that
// is closed when tb finishes.
func ClusterClient(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: MustCluster(tb)})
	tb.Cleanup(func() { c.Close() })
	return c
}

// Backend is a Redis flavour a test runs against: Client returns a client
// for it that is closed when the test finishes.
type Backend struct {
	Name   string
	Client func(t *testing.T) redis.UniversalClient
}

// Backends lists the flavours a store test runs on, in this order:
// miniredis (made by mini, so each package sets its clock as it needs),
// the shared standalone Redis and the shared cluster.
func Backends(mini func(t *testing.T) redis.UniversalClient) []Backend {
	return []Backend{
		{"miniredis", mini},
		{"redis", func(t *testing.T) redis.UniversalClient { return Client(t) }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return ClusterClient(t) }},
	}
}

var namespaceSeq atomic.Uint64

// Namespace returns a string unique within the test binary, derived from
// tb.Name(), for prefixing keys so tests sharing a server do not collide. It
// contains no braces, so callers can wrap it in a hash tag themselves.
func Namespace(tb testing.TB) string {
	tb.Helper()
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '/':
			return r
		default:
			return '_'
		}
	}, tb.Name())
	return fmt.Sprintf("%s#%d", name, namespaceSeq.Add(1))
}
