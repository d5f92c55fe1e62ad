package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/standings/standings/internal/browsertest"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

func TestParseFlagsLiveLimits(t *testing.T) {
	m := NewMain()
	if err := m.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if m.LiveMaxConns != web.DefaultLiveMaxConns || m.LiveMaxPerClient != web.DefaultLiveMaxPerClient || len(m.TrustedProxies) != 0 {
		t.Errorf("defaults: %d %d %v", m.LiveMaxConns, m.LiveMaxPerClient, m.TrustedProxies)
	}

	t.Setenv("STANDINGS_LIVE_MAX_CONNS", "500")
	t.Setenv("STANDINGS_LIVE_MAX_PER_CLIENT", "5")
	t.Setenv("STANDINGS_TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.7 ,2001:db8::1")
	m = NewMain()
	if err := m.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if m.LiveMaxConns != 500 || m.LiveMaxPerClient != 5 || fmt.Sprint(m.TrustedProxies) != "[10.0.0.0/8 192.0.2.7/32 2001:db8::1/128]" {
		t.Errorf("env: %d %d %v", m.LiveMaxConns, m.LiveMaxPerClient, m.TrustedProxies)
	}
	m = NewMain()
	if err := m.ParseFlags([]string{"--live-max-conns", "7", "--live-max-per-client", "2", "--trusted-proxies", ""}); err != nil {
		t.Fatal(err)
	}
	if m.LiveMaxConns != 7 || m.LiveMaxPerClient != 2 || len(m.TrustedProxies) != 0 {
		t.Errorf("flags win: %d %d %v", m.LiveMaxConns, m.LiveMaxPerClient, m.TrustedProxies)
	}

	for _, args := range [][]string{
		{"--live-max-conns", "0"},
		{"--live-max-conns", "many"},
		{"--live-max-per-client", "-1"},
		{"--trusted-proxies", "10.0.0.0/33"},
		{"--trusted-proxies", "proxy.example"},
	} {
		err := NewMain().ParseFlags(args)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%q: %v, want an error naming the flag", args, err)
		}
	}
}

// TestLiveLimitInBrowser: a page over the per-address limit is told so by
// the server (1013 with a reason) and says that live updates are paused,
// rather than reconnecting as it does after a slow-client drop.
func TestLiveLimitInBrowser(t *testing.T) {
	browser := mustBrowser(t)
	path := filepath.Join(t.TempDir(), "boards.yaml")
	if err := os.WriteFile(path, []byte(liveBoards), 0o600); err != nil {
		t.Fatal(err)
	}
	m := MustRun(t, "--config", path, "--redis", "redis://"+mustOwnRedis(t).Addr, "--live-max-per-client", "1")
	mustWrite(t, m, "points", map[string]any{"member": "alice", "value": 5})
	first := browsertest.NewTab(t, browser)
	open(t, first, m.URL+"/boards/points/all")
	waitLive(t, first)

	second := browsertest.NewTab(t, browser)
	open(t, second, m.URL+"/boards/points/all")
	status := jsString(views.IDLiveStatus)
	browsertest.WaitJS(t, second, liveWait, "the second page says live updates are paused",
		fmt.Sprintf(`(e => !!e && e.dataset.state === "reconnecting" && e.textContent.includes("paused"))(document.getElementById(%s))`, status))
	if got := attrOf(t, first, "#"+views.IDLiveStatus, "data-state"); got != "live" {
		t.Errorf("the first page is %q, want still live", got)
	}
}
