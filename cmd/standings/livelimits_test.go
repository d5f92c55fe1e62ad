package main

import (
	"fmt"
	"strings"
	"testing"

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
