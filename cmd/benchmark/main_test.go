package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/ranking/redistest"
)

// TestMain lets this test binary serve as the live suite's server child.
func TestMain(m *testing.M) {
	if liveChildMain() {
		return
	}
	os.Exit(m.Run())
}

// TestSuitesPrintEveryResult runs every suite with tiny parameters and checks
// that each expected result line is printed with a positive value.
func TestSuitesPrintEveryResult(t *testing.T) {
	if err := redistest.Available(); err != nil {
		if redistest.Required() {
			t.Fatal(err)
		}
		t.Skipf("skipping: %v", err)
	}
	// Every suite with tiny parameters takes about 20 s alone; the race
	// detector and a busy CI machine can make it several times that.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"-duration", "100ms", "-members", "2000", "-viewers", "10", "-live-rate", "100", "-live-duration", "500ms", "-ghosts", "100"}
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	got := parseResults(t, stdout.String())
	want := []string{
		"BENCH ingest_events_per_s", "BENCH ingest_call_p50_ms", "BENCH ingest_call_p99_ms",
		"BENCH raw_zincrby_events_per_s", "BENCH multi_events_per_s",
		"BENCH multi_pipelined_events_per_s", "BENCH cas_events_per_s",
		"RATIO ingest_vs_raw", "RATIO ingest_vs_multi", "RATIO ingest_vs_multi_pipelined", "RATIO ingest_vs_cas",
		"BENCH ingest_redis_us_per_event", "BENCH ingest_ranked_redis_us_per_event", "BENCH multi_pipelined_redis_us_per_event", "BENCH raw_zincrby_redis_us_per_event",
		"RATIO redis_cpu_ingest_vs_multi_pipelined", "RATIO redis_cpu_ingest_vs_raw",
		"BENCH single_write_redis_us_per_event", "BENCH single_write_solo_redis_us_per_event", "BENCH single_write_p99_ms",
		"RATIO redis_cpu_single_write_vs_solo",
		"BENCH exact_floor_events_per_s", "BENCH incr_floor_events_per_s", "RATIO ingest_vs_exact_floor",
		"RATIO redis_cpu_exact_floor_vs_multi_pipelined", "RATIO redis_cpu_incr_floor_vs_multi_pipelined", "RATIO redis_cpu_ingest_vs_exact_floor",
		"BENCH floor_0seg_redis_us_per_event", "BENCH floor_2seg_redis_us_per_event", "RATIO floor_2seg_vs_0seg",
		"BENCH segment_writes_floor_redis_us_per_event", "RATIO ingest_2seg_vs_0seg_ceiling",
		"BENCH ingest_0seg_events_per_s", "BENCH ingest_2seg_events_per_s", "RATIO ingest_2seg_vs_0seg",
		"BENCH ingest_0seg_redis_us_per_event", "BENCH ingest_2seg_redis_us_per_event", "RATIO redis_cpu_0seg_vs_2seg",
		"BENCH memory_bytes_per_member_view", "BENCH plain_zset_bytes_per_member_view",
		"RATIO memory_vs_plain", "RATIO memory_vs_plain_uncompacted",
		"BENCH memory_load_redis_us_per_member", "BENCH index_compact_redis_us_per_entry",
		"BENCH index_compact_scattered_redis_us_per_entry", "BENCH index_compact_call_max_us",
		"BENCH window_7d_events_per_s", "BENCH window_30d_events_per_s", "BENCH window_90d_events_per_s",
		"RATIO window_30d_vs_7d", "RATIO window_90d_vs_7d",
		"BENCH healthz_rps", "BENCH board_page_rps", "BENCH board_page_unshared_rps", "BENCH board_page_304_rps", "BENCH rank_card_rps",
		"BENCH rank_card_read_rps", "RATIO rank_card_read_vs_healthz", "BENCH rank_card_bytes_rps", "RATIO rank_card_bytes_vs_healthz", "BENCH rank_card_cold_redis_us_per_read", "BENCH rank_card_rows_floor_redis_us_per_read", "RATIO rank_card_kept_vs_rows_floor",
		"BENCH board_page_p99_ms", "BENCH rank_card_p99_ms",
		"RATIO board_page_vs_healthz", "RATIO board_page_unshared_vs_healthz", "RATIO rank_card_vs_healthz", "RATIO board_page_304_vs_healthz",
		"BENCH live_latency_p50_ms", "BENCH live_latency_p99_ms", "BENCH live_renders_per_s", "BENCH live_server_cpu_s",
		"BENCH naive_renders_per_s", "BENCH naive_server_cpu_s",
		"RATIO renders_naive_vs_hub", "RATIO cpu_naive_vs_hub",
		"BENCH ghosts_ghost_viewers", "BENCH ghosts_renders_per_s", "BENCH ghosts_frames_per_viewer_s",
		"BENCH live_bytes_per_viewer_s", "BENCH full_bytes_per_viewer_s", "RATIO live_bytes_full_vs_diff",
		"BENCH stream_events_per_s", "BENCH apply_events_per_s", "RATIO stream_vs_apply",
		"BENCH ingest_league_events_per_s", "BENCH ingest_plain_events_per_s",
		"BENCH ingest_league_redis_us_per_event", "BENCH ingest_plain_redis_us_per_event", "RATIO ingest_league_vs_plain",
		"BENCH league_close_longest_call_us", "BENCH league_close_calls",
		"BENCH league_close_recorder_longest_call_us", "BENCH league_close_next_round_longest_call_us",
		// The results suite names its period by -members: 2k here.
		"BENCH result_record_2k_max_block_us", "BENCH result_record_2k_top1000_max_block_us",
		"BENCH result_record_1k_max_block_us", "BENCH zrange_top10_2k_max_block_us", "BENCH zcard_2k_max_block_us",
		"RATIO result_record_block_vs_zrange_top10", "RATIO result_record_block_2k_vs_1k",
	}
	for _, k := range want {
		v, ok := got[k]
		if !ok {
			t.Errorf("missing %q in output:\n%s", k, stdout.String())
			continue
		}
		// CPU is counted in clock ticks (10 ms): a 1 s run this small can
		// honestly measure none, so CPU lines need only be present. So
		// need ZCARD's: SLOWLOG counts whole microseconds, and it takes less.
		// The segment ceiling is a difference of two such CPU figures. The
		// card's rows floor is Redis CPU over one -duration.
		if v <= 0 && !strings.Contains(k, "cpu") && !strings.Contains(k, "zcard") &&
			!strings.Contains(k, "ceiling") && !strings.Contains(k, "segment_writes_floor") &&
			!strings.Contains(k, "rows_floor") {
			t.Errorf("%s = %v, want > 0", k, v)
		}
	}
}

// parseResults maps "BENCH name" / "RATIO name" to the value and checks
// the line shapes.
func parseResults(t *testing.T, out string) map[string]float64 {
	t.Helper()
	res := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 4 && f[0] == "BENCH", len(f) == 3 && f[0] == "RATIO":
		default:
			t.Errorf("malformed result line %q", line)
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Errorf("line %q: %v", line, err)
			continue
		}
		res[f[0]+" "+f[1]] = v
	}
	return res
}

func TestSelectSuites(t *testing.T) {
	all, err := selectSuites("")
	if err != nil || len(all) != len(suites) {
		t.Fatalf("default: %d suites, %v", len(all), err)
	}
	one, err := selectSuites(" memory , memory")
	if err != nil || len(one) != 1 || one[0].name != "memory" {
		t.Fatalf("memory: %v, %v", one, err)
	}
	if _, err := selectSuites("ingest,nope"); err == nil {
		t.Fatal("unknown suite accepted")
	}
}

func TestParseFlagsRejectsBadValues(t *testing.T) {
	for _, args := range [][]string{
		{"-duration", "0s"}, {"-members", "0"}, {"-writers", "0"}, {"-suite", "x"}, {"extra"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{
		123456.4: "123456", 72.34: "72.3", 1.234: "1.23", 0.01234: "0.0123", 0: "0.00", 0.5: "0.500",
	} {
		if got := formatValue(v); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i))
	}
	if p := percentile(ds, 50); p != 50 {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(ds, 99); p != 99 {
		t.Errorf("p99 = %v", p)
	}
	if p := percentile(nil, 50); p != 0 {
		t.Errorf("empty p50 = %v", p)
	}
}
