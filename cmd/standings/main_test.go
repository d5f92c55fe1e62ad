package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// MustRun starts the real wiring with args on a free port and stops it when
// the test ends.
func MustRun(t *testing.T, args ...string) *Main {
	t.Helper()
	m := NewMain()
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.ParseFlags(append([]string{"--addr", "127.0.0.1:0"}, args...)); err != nil {
		t.Fatal(err)
	}
	m.WriteKeys = []string{"test-key"}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

func call(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer test-key")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestWriteAndRead runs the binary's wiring on the embedded Redis, a real
// Redis and a Redis Cluster, and writes and reads a score through HTTP.
func TestWriteAndRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"embedded", func(t *testing.T) []string { return nil }},
		{"redis", func(t *testing.T) []string { return []string{"--redis", "redis://" + redistest.MustStandalone(t)} }},
		{"cluster", func(t *testing.T) []string {
			return []string{"--redis-cluster", strings.Join(redistest.MustCluster(t), ",")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := MustRun(t, tc.args(t)...)
			if tc.name == "embedded" && !m.Demo {
				t.Error("the embedded store turns the demo on")
			}
			member := "m-" + strings.ReplaceAll(t.Name(), "/", "-")
			if code, body := call(t, "POST", m.URL+"/api/v1/boards/points/scores", `{"member":"`+member+`","value":7}`); code != 200 {
				t.Fatalf("write: %d %s", code, body)
			}
			code, body := call(t, "GET", m.URL+"/api/v1/boards/points/all/members/"+member, "")
			if code != 200 || !strings.Contains(body, `"score":7`) {
				t.Fatalf("read: %d %s", code, body)
			}
			if code, _ := call(t, "GET", m.URL+"/readyz", ""); code != 200 {
				t.Errorf("readyz: %d", code)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	t.Setenv("STANDINGS_ADDR", "127.0.0.1:9999")
	t.Setenv("STANDINGS_WRITE_KEYS", " a, ,b ")
	m := NewMain()
	if err := m.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if m.Addr != "127.0.0.1:9999" || strings.Join(m.WriteKeys, "|") != "a|b" {
		t.Errorf("env twins: addr %q keys %q", m.Addr, m.WriteKeys)
	}
	m = NewMain()
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:1"}); err != nil || m.Addr != "127.0.0.1:1" {
		t.Errorf("flags win over env: %q %v", m.Addr, err)
	}
	for _, args := range [][]string{
		{"--redis", "redis://x", "--redis-cluster", "a:1"},
		{"extra"},
		{"--nope"},
	} {
		if err := NewMain().ParseFlags(args); err == nil {
			t.Errorf("%q: want an error", args)
		}
	}
	t.Setenv("STANDINGS_LIVE_TICK", "150ms")
	if m := NewMain(); m.ParseFlags(nil) != nil || m.LiveTick != 150*time.Millisecond {
		t.Errorf("live tick %v", m.LiveTick)
	}
	for _, bad := range []string{"50ms", "1s", "fast"} {
		t.Setenv("STANDINGS_LIVE_TICK", bad)
		if err := NewMain().ParseFlags(nil); err == nil {
			t.Errorf("STANDINGS_LIVE_TICK=%s: want an error", bad)
		}
	}
}

// TestBadRedisURL: a --redis URL that cannot be read stops start-up with
// an error that names the flag.
func TestBadRedisURL(t *testing.T) {
	for _, bad := range []string{"http://localhost", "redis://localhost/x", "redis://localhost/0?pool_size=many"} {
		m := NewMain()
		m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--redis", bad}); err != nil {
			t.Fatal(err)
		}
		err := m.Run(context.Background())
		m.Close()
		if err == nil || !strings.HasPrefix(err.Error(), "--redis: ") {
			t.Errorf("%s: want a --redis error, got %v", bad, err)
		}
	}
}

// TestBadConfigRefusesToStart: a boards file with problems stops start-up
// with every problem listed.
func TestBadConfigRefusesToStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "boards.yaml")
	os.WriteFile(path, []byte("boards: [{id: Bad}, {id: ok, views: [7d], update: best}]\n"), 0o600)
	m := NewMain()
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.ParseFlags([]string{"--config", path, "--addr", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	err := m.Run(context.Background())
	defer m.Close()
	ce, ok := err.(*ranking.ConfigError)
	if !ok || len(ce.Problems) != 2 {
		t.Fatalf("got %v, want two problems", err)
	}
}

// TestShutdownClosesLiveFeeds checks that Close tells websocket viewers
// 1012 (service restart) and that the program then stops.
func TestShutdownClosesLiveFeeds(t *testing.T) {
	m := NewMain()
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--demo=false"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(m.URL, "http")+"/ws/points/week?limit=5", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err != nil { // the snapshot
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	_, _, err = c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusServiceRestart {
		t.Errorf("close status %v (%v), want 1012", websocket.CloseStatus(err), err)
	}
	if err := <-closed; err != nil {
		t.Error(err)
	}
}

// TestBusyPortStartsNothing: on a port already in use, start-up reports
// the bind error and starts no demo traffic (nothing logs "demo traffic on"
// after the failure).
func TestBusyPortStartsNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var logs syncBuffer
	m := NewMain()
	m.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if err := m.ParseFlags([]string{"--addr", busy.Addr().String()}); err != nil {
		t.Fatal(err)
	}
	err = m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("Run on a busy port: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Error(err)
	}
	time.Sleep(50 * time.Millisecond) // a demo started anyway would log by now
	if strings.Contains(logs.String(), "demo traffic") {
		t.Errorf("demo traffic started on a busy port:\n%s", logs.String())
	}
}

// syncBuffer is a log sink safe for goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
