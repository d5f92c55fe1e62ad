package main

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking/redistest"
)

func TestSizeTag(t *testing.T) {
	for n, want := range map[int]string{
		1_000_000: "1m", 2_000_000: "2m", 1000: "1k", 2000: "2k", 1_500_000: "1500k", 1500: "1500", 7: "7",
	} {
		if got := sizeTag(n); got != want {
			t.Errorf("sizeTag(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestResultsRestoresSlowlog runs the results suite on a small period and
// checks that the slowlog settings it changes are put back.
func TestResultsRestoresSlowlog(t *testing.T) {
	if err := redistest.Available(); err != nil {
		if redistest.Required() {
			t.Fatal(err)
		}
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, err := redistest.StartServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rdb := newClient(srv.Addr, 2)
	defer rdb.Close()
	want := map[string]string{"slowlog-log-slower-than": "12345", "slowlog-max-len": "77"}
	for k, v := range want {
		if err := rdb.ConfigSet(ctx, k, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var stdout bytes.Buffer
	e := &env{opts: options{members: 1500, writers: 2}, rdb: rdb, out: newReporter(&stdout), log: io.Discard}
	if err := runResults(ctx, e); err != nil {
		t.Fatalf("runResults: %v", err)
	}
	got := parseResults(t, stdout.String())
	for _, k := range []string{"BENCH result_record_1500_max_block_us", "BENCH result_record_1500_top1000_max_block_us",
		"BENCH result_record_1k_max_block_us", "RATIO result_record_block_1500_vs_1k"} {
		if got[k] <= 0 {
			t.Errorf("%s = %v, want > 0; output:\n%s", k, got[k], stdout.String())
		}
	}
	for k, v := range want {
		if got := mustConfig(t, rdb, k); got != v {
			t.Errorf("%s = %s after the suite, want %s", k, got, v)
		}
	}
}

func mustConfig(tb testing.TB, rdb *redis.Client, param string) string {
	tb.Helper()
	m, err := rdb.ConfigGet(context.Background(), param).Result()
	if err != nil {
		tb.Fatal(err)
	}
	return m[param]
}
