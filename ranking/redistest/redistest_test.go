package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/standings/standings/ranking/redistest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(runChild())
	}
	os.Exit(redistest.Main(m))
}

// needRedis skips tests that start their own servers when Redis is missing;
// Main has already failed the run if Redis is required.
func needRedis(t *testing.T) {
	t.Helper()
	if err := redistest.Available(); err != nil {
		t.Skipf("Redis not available: %v", err)
	}
}

func TestServerSetGet(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	s, err := redistest.StartServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Fatalf("Addr = %q, want 127.0.0.1:port", s.Addr)
	}

	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	if err := rdb.Set(ctx, "greeting", "hello", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := rdb.Get(ctx, "greeting").Result(); err != nil || got != "hello" {
		t.Fatalf("GET greeting = %q, %v; want hello", got, err)
	}

	// No persistence, loopback only.
	for param, want := range map[string]string{"save": "", "appendonly": "no", "bind": "127.0.0.1", "protected-mode": "no"} {
		got, err := rdb.ConfigGet(ctx, param).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got[param] != want {
			t.Errorf("CONFIG GET %s = %q, want %q", param, got[param], want)
		}
	}

	pid, dir := s.PID(), s.Dir()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	assertGone(t, pid)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("server dir %s still there after Close (stat: %v)", dir, err)
	}
}

func TestServerExtraArgs(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	s, err := redistest.StartServer(ctx, "--maxmemory", "5mb", "--maxmemory-policy", "noeviction")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	got, err := rdb.ConfigGet(ctx, "maxmemory").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got["maxmemory"] != strconv.Itoa(5<<20) {
		t.Errorf("maxmemory = %q, want %d", got["maxmemory"], 5<<20)
	}
}

func TestServerStartFailureShowsLog(t *testing.T) {
	needRedis(t)
	start := time.Now()
	s, err := redistest.StartServer(t.Context(), "--no-such-directive", "yes")
	if err == nil {
		s.Close()
		t.Fatal("StartServer with a bad directive succeeded")
	}
	if !strings.Contains(err.Error(), "no-such-directive") {
		t.Errorf("error does not include the server's complaint:\n%v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("failing start took %v; it should not retry or wait for a dead process", d)
	}
}

func TestCluster(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	start := time.Now()
	c, err := redistest.StartCluster(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	t.Logf("3-master cluster ready in %v", time.Since(start).Round(time.Millisecond))

	if len(c.Addrs) != 3 || len(c.Nodes) != 3 {
		t.Fatalf("got %d addrs and %d nodes, want 3 each", len(c.Addrs), len(c.Nodes))
	}

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	defer cc.Close()

	const n = 100
	for i := range n {
		if err := cc.Set(ctx, fmt.Sprintf("key:%d", i), i, 0).Err(); err != nil {
			t.Fatalf("SET key:%d: %v", i, err)
		}
	}
	for i := range n {
		got, err := cc.Get(ctx, fmt.Sprintf("key:%d", i)).Int()
		if err != nil || got != i {
			t.Fatalf("GET key:%d = %d, %v; want %d", i, got, err, i)
		}
	}

	// The keys must really be spread over every master.
	for _, addr := range c.Addrs {
		node := redis.NewClient(&redis.Options{Addr: addr})
		size, err := node.DBSize(ctx).Result()
		node.Close()
		if err != nil {
			t.Fatal(err)
		}
		if size == 0 {
			t.Errorf("master %s holds no keys; slots not spread", addr)
		}
	}

	// A script touching two keys in one slot thanks to a hash tag.
	script := `redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]); redis.call('SET', KEYS[2], ARGV[2]); return redis.call('ZSCORE', KEYS[1], redis.call('GET', KEYS[2]))`
	got, err := cc.Eval(ctx, script, []string{"{board:1}:scores", "{board:1}:last"}, 42, "alice").Text()
	if err != nil {
		t.Fatalf("EVAL: %v", err)
	}
	if got != "42" {
		t.Fatalf("EVAL returned %q, want 42", got)
	}

	var pids []int
	for _, node := range c.Nodes {
		pids = append(pids, node.PID())
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		assertGone(t, pid)
	}
}

func TestClusterNeedsThreeMasters(t *testing.T) {
	needRedis(t)
	if c, err := redistest.StartCluster(t.Context(), 2); err == nil {
		c.Close()
		t.Fatal("StartCluster with 2 masters succeeded")
	}
}

func TestSharedServers(t *testing.T) {
	ctx := t.Context()

	rdb := redistest.Client(t)
	if redistest.MustStandalone(t) != rdb.Options().Addr {
		t.Errorf("MustStandalone and Client disagree")
	}
	ns := redistest.Namespace(t)
	if ns == redistest.Namespace(t) || strings.ContainsAny(ns, "{}") {
		t.Errorf("Namespace %q is not unique or contains braces", ns)
	}
	if err := rdb.Set(ctx, ns+":k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}

	cc := redistest.ClusterClient(t)
	if got := len(redistest.MustCluster(t)); got != redistest.ClusterMasters {
		t.Errorf("MustCluster returned %d addresses, want %d", got, redistest.ClusterMasters)
	}
	key := "{" + ns + "}:k"
	if err := cc.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := cc.Get(ctx, key).Result(); err != nil || got != "v" {
		t.Fatalf("GET %s = %q, %v", key, got, err)
	}
}

const childEnv = "REDISTEST_DIES_WITH_PARENT_CHILD"

// runChild starts a server and a program of its own with StartChild,
// reports their pids and waits to be killed.
func runChild() int {
	s, err := redistest.StartServer(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close() // never reached: the parent kills this process
	sleep := exec.Command("sleep", "60")
	if err := redistest.StartChild(sleep); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("pid %d %d\n", s.PID(), sleep.Process.Pid)
	time.Sleep(time.Minute)
	return 1
}

// assertGone waits briefly for pid to disappear. A zombie counts as gone: it
// no longer runs, and reaping it is up to whoever inherited it.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Errorf("process %d still running", pid)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// TestServersRunUnderLocale: the shared standalone server and every cluster
// node compare strings in Lua by Locale's collation ("Zed" after "alice"),
// not by bytes, so tests of byte order see what a production server under
// that locale does.
func TestServersRunUnderLocale(t *testing.T) {
	if err := redistest.LocaleAvailable(); err != nil {
		t.Skipf("%v", err) // Main has already failed the run if Redis is required
	}
	const script = "return tostring('Zed' < 'alice')"
	clients := map[string]*redis.Client{"standalone": redistest.Client(t)}
	for i, addr := range redistest.MustCluster(t) {
		c := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { c.Close() })
		clients[fmt.Sprintf("cluster node %d", i)] = c
	}
	for name, c := range clients {
		got, err := c.Eval(t.Context(), script, nil).Text()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != "false" {
			t.Errorf("%s: Lua says 'Zed' < 'alice' is %s, want false under %s", name, got, redistest.Locale)
		}
	}
}
