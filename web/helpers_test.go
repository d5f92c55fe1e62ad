package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/web"
)

const (
	writeKey = "write-key-0123456789"
	adminKey = "admin-key-0123456789"
)

// testNow is Redis's clock in every test: a Sunday, mid-morning UTC.
var testNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

const testBoards = `
timezone: UTC
boards:
  - id: points
    title: Points
    decimals: 1
    min_score: -1000
    max_score: 1000
    views: [day, week, all]
    lateness: 1h
  - id: lap
    title: Fastest lap
    order: asc
    update: best
    ties: shared
    decimals: 3
    max_score: 3600
    views: [week, all]
`

// fixture is a Server on a real ranking.Store on miniredis.
type fixture struct {
	mr      *miniredis.Miniredis
	store   *ranking.Store
	srv     *web.Server
	handler http.Handler
}

// MustFixture starts miniredis at testNow, a Store and a Server. Redis's
// clock stands still in these tests, so no write rate budget would ever
// refill: the fixture has no rate limit (MustFixtureWith sets one).
func MustFixture(tb testing.TB) *fixture {
	tb.Helper()
	return MustFixtureWith(tb, web.Options{WriteRate: -1})
}

// MustFixtureWith is MustFixture with the Options given; Store, Config and
// the keys are the fixture's.
func MustFixtureWith(tb testing.TB, opts web.Options) *fixture {
	tb.Helper()
	return MustFixtureOf(tb, testBoards, opts)
}

// MustFixtureOf is MustFixtureWith on the boards file given.
func MustFixtureOf(tb testing.TB, boards string, opts web.Options) *fixture {
	tb.Helper()
	cfg, err := ranking.ParseConfig([]byte(boards))
	if err != nil {
		tb.Fatal(err)
	}
	mr := miniredis.RunT(tb)
	mr.SetTime(testNow)
	mr.ClockTTL(true)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	tb.Cleanup(func() { rdb.Close() })
	store := rankingtest.MustStore(tb, rdb, cfg, ranking.Options{Prefix: ranking.DefaultPrefix, Clock: func() time.Time { return testNow }})
	opts.Store, opts.Feed, opts.Config = store, store, cfg
	opts.WriteKeys, opts.AdminKeys = []string{writeKey}, []string{adminKey}
	srv := web.NewServer(opts)
	tb.Cleanup(srv.Close)
	return &fixture{mr: mr, store: store, srv: srv, handler: srv.Handler()}
}

// response is a recorded answer.
type response struct {
	Status int
	Header http.Header
	Body   string
}

// JSON decodes the body into a generic value, failing the test on error.
func (r response) JSON(tb testing.TB) map[string]any {
	tb.Helper()
	var v map[string]any
	dec := json.NewDecoder(strings.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("body %q: %v", r.Body, err)
	}
	return v
}

// ErrorCode returns error.code of an error body.
func (r response) ErrorCode(tb testing.TB) string {
	tb.Helper()
	e, _ := r.JSON(tb)["error"].(map[string]any)
	code, _ := e["code"].(string)
	if msg, _ := e["message"].(string); msg == "" {
		tb.Errorf("error body without message: %s", r.Body)
	}
	return code
}

func (f *fixture) do(tb testing.TB, method, path, key, body string) response {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return f.serve(req)
}

func (f *fixture) serve(req *http.Request) response {
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	return response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.String()}
}

func (f *fixture) get(tb testing.TB, path string) response {
	tb.Helper()
	return f.do(tb, http.MethodGet, path, "", "")
}

// MustOK fails the test unless the answer is 200.
func MustOK(tb testing.TB, r response) response {
	tb.Helper()
	if r.Status != http.StatusOK {
		tb.Fatalf("status %d, body %s", r.Status, r.Body)
	}
	return r
}

// dump is every key and value in the fixture's Redis, to check that a
// refused request changed nothing.
func (f *fixture) dump() string { return f.mr.Dump() }

// MustUnchanged fails the test when Redis differs from before.
func (f *fixture) MustUnchanged(tb testing.TB, before string) {
	tb.Helper()
	if after := f.dump(); after != before {
		tb.Fatalf("Redis changed:\nbefore %s\nafter  %s", before, after)
	}
}
