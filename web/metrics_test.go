package web_test

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// families is a parsed /metrics answer.
type families map[string]*dto.MetricFamily

// MustMetrics reads GET /metrics, checks it is the Prometheus text format
// and parses it.
func MustMetrics(tb testing.TB, f *fixture) families {
	tb.Helper()
	r := MustOK(tb, f.get(tb, "/metrics"))
	ct := r.Header.Get("Content-Type")
	if expfmt.ResponseFormat(r.Header).FormatType() != expfmt.TypeTextPlain || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		tb.Fatalf("content type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(r.Body))
	if err != nil {
		tb.Fatalf("parsing /metrics: %v\n%s", err, r.Body)
	}
	return fams
}

// value returns the value of the series of name with exactly labels (for a
// histogram, its sample count), and whether there is one.
func (fs families) value(name string, labels map[string]string) (float64, bool) {
	fam, ok := fs[name]
	if !ok {
		return 0, false
	}
	for _, m := range fam.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, lp := range m.GetLabel() {
			if v, ok := labels[lp.GetName()]; !ok || v != lp.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// labelValues lists every value label takes in the series of name.
func (fs families) labelValues(name, label string) []string {
	var out []string
	for _, m := range fs[name].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label {
				out = append(out, lp.GetValue())
			}
		}
	}
	return out
}

func TestMetrics(t *testing.T) {
	f := MustFixture(t)
	const scores = "/api/v1/boards/points/scores"
	MustOK(t, f.do(t, "POST", scores, writeKey, `{"member":"alice","value":5,"id":"evt-1"}`))
	MustOK(t, f.do(t, "POST", scores, writeKey, `{"member":"alice","value":5,"id":"evt-1"}`)) // duplicate
	if r := f.do(t, "POST", scores, writeKey, `{"member":"alice","value":5000}`); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("over max_score: status %d", r.Status)
	}
	if r := f.do(t, "POST", scores, "", `{"member":"alice","value":1}`); r.Status != http.StatusUnauthorized {
		t.Fatalf("no key: status %d", r.Status)
	}
	MustOK(t, f.do(t, "POST", scores+"/batch", writeKey,
		`{"events":[{"member":"bob","value":2},{"member":"carol","value":"x"},{"member":"dave","value":-2000}]}`))
	if r := f.do(t, "POST", "/api/v1/boards/nope/scores", writeKey, `{"member":"alice","value":1}`); r.Status != http.StatusNotFound {
		t.Fatalf("unknown board: status %d", r.Status)
	}
	if r := f.get(t, "/no/such/route"); r.Status != http.StatusNotFound {
		t.Fatalf("unknown route: status %d", r.Status)
	}
	if r := f.do(t, "PUT", "/api/v1/boards", writeKey, ""); r.Status != http.StatusMethodNotAllowed {
		t.Fatalf("wrong method: status %d", r.Status)
	}
	MustOK(t, f.get(t, "/api/v1/boards/points/week"))

	fams := MustMetrics(t, f)
	const (
		scoresRoute = "/api/v1/boards/:board/scores"
		pageRoute   = "/api/v1/boards/:board/:view"
	)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"standings_http_requests_total", map[string]string{"route": scoresRoute, "method": "POST", "status": "200"}, 2},
		{"standings_http_requests_total", map[string]string{"route": scoresRoute, "method": "POST", "status": "422"}, 1},
		{"standings_http_requests_total", map[string]string{"route": scoresRoute, "method": "POST", "status": "401"}, 1},
		{"standings_http_requests_total", map[string]string{"route": scoresRoute, "method": "POST", "status": "404"}, 1},
		{"standings_http_requests_total", map[string]string{"route": scoresRoute + "/batch", "method": "POST", "status": "200"}, 1},
		{"standings_http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "status": "404"}, 1},
		{"standings_http_requests_total", map[string]string{"route": "unmatched", "method": "PUT", "status": "405"}, 1},
		{"standings_http_requests_total", map[string]string{"route": pageRoute, "method": "GET", "status": "200"}, 1},
		{"standings_http_request_duration_seconds", map[string]string{"route": pageRoute, "method": "GET"}, 1},
		{"standings_http_request_duration_seconds", map[string]string{"route": scoresRoute, "method": "POST"}, 5},
		{"standings_events_written_total", map[string]string{"board": "points"}, 2},
		{"standings_events_refused_total", map[string]string{"board": "points", "code": "invalid_argument"}, 3},
		{"standings_redis_errors_total", map[string]string{}, 0},
	} {
		t.Run(tc.name+" "+tc.labels["route"]+" "+tc.labels["status"]+tc.labels["board"], func(t *testing.T) {
			got, ok := fams.value(tc.name, tc.labels)
			if !ok || got != tc.want {
				t.Errorf("%s%v = %v (present %v), want %v", tc.name, tc.labels, got, ok, tc.want)
			}
		})
	}

	t.Run("bounded labels", func(t *testing.T) {
		for _, route := range fams.labelValues("standings_http_requests_total", "route") {
			if strings.Contains(route, "nope") || strings.Contains(route, "no/such") || strings.Contains(route, "points") {
				t.Errorf("raw URL in route label: %q", route)
			}
		}
		for _, name := range []string{"standings_events_written_total", "standings_events_refused_total"} {
			for _, b := range fams.labelValues(name, "board") {
				if b != "points" {
					t.Errorf("%s: board label %q", name, b)
				}
			}
		}
	})
	t.Run("runtime collectors", func(t *testing.T) {
		for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
			if _, ok := fams[name]; !ok {
				t.Errorf("no %s", name)
			}
		}
	})
}

// TestMetricsRedisDown: a request the store fails is counted as a Redis
// error, with the 503 the error funnel answered.
func TestMetricsRedisDown(t *testing.T) {
	t.Parallel() // waits on an outage or a slow client, on its own server
	f := MustFixture(t)
	f.mr.Close()
	if r := f.get(t, "/api/v1/boards/points/week"); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("status %d", r.Status)
	}
	fams := MustMetrics(t, f)
	if got, _ := fams.value("standings_redis_errors_total", map[string]string{}); got != 1 {
		t.Errorf("standings_redis_errors_total = %v, want 1", got)
	}
	labels := map[string]string{"route": "/api/v1/boards/:board/:view", "method": "GET", "status": "503"}
	if got, _ := fams.value("standings_http_requests_total", labels); got != 1 {
		t.Errorf("503 requests = %v, want 1", got)
	}
}

// TestMetricsPerServer: each Server counts on its own registry.
func TestMetricsPerServer(t *testing.T) {
	a, b := MustFixture(t), MustFixture(t)
	MustOK(t, a.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"alice","value":1}`))
	if got, ok := MustMetrics(t, b).value("standings_events_written_total", map[string]string{"board": "points"}); ok {
		t.Errorf("other server counted %v writes", got)
	}
}

// TestMetricsBounded: 1,000 anonymous requests with random methods and
// paths add a bounded number of series: unknown methods are "other",
// unknown routes "unmatched".
func TestMetricsBounded(t *testing.T) {
	f := MustFixture(t)
	rng := rand.New(rand.NewPCG(7, 7))
	word := func() string {
		const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		b := make([]byte, 1+rng.IntN(12))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	methods := []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "CONNECT", "TRACE", "PROPFIND"}
	paths := []string{"/", "/api/v1/boards", "/api/v1/boards/points/week", "/boards/points/day", "/metrics", "/healthz"}
	for range 1000 {
		method := methods[rng.IntN(len(methods))]
		if rng.IntN(2) == 0 {
			method = strings.ToUpper(word())
		}
		path := paths[rng.IntN(len(paths))]
		if rng.IntN(2) == 0 {
			path = "/" + word() + "/" + word()
		}
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Method = method
		f.serve(req)
	}
	fams := MustMetrics(t, f)
	known := map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true, "PATCH": true, "OPTIONS": true, "other": true}
	for _, m := range fams.labelValues("standings_http_requests_total", "method") {
		if !known[m] {
			t.Errorf("method label %q", m)
		}
	}
	for _, s := range fams.labelValues("standings_http_requests_total", "status") {
		if n, err := strconv.Atoi(s); s != "other" && (err != nil || http.StatusText(n) == "") {
			t.Errorf("status label %q", s)
		}
	}
	requests := len(fams["standings_http_requests_total"].GetMetric())
	durations := len(fams["standings_http_request_duration_seconds"].GetMetric())
	// Routes (about 20 with unmatched) × 8 methods × a few statuses is the
	// ceiling; 1,000 requests stay far below it.
	if requests > 200 || durations > 200 {
		t.Fatalf("%d request series, %d duration series after 1,000 random requests", requests, durations)
	}
	t.Logf("%d request series, %d duration series", requests, durations)
}
