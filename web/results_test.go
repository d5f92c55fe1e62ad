package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
)

// TestResultsRoutes: a recorded result is served byte for byte as stored,
// alone and in the list; 404 before it is recorded, for all and for an
// unknown board or view; 422 for a bad limit or before, changing nothing.
func TestResultsRoutes(t *testing.T) {
	f := MustFixture(t)
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"a<&>","value":12.5,"name":"Ann & <co>"}`))
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"bob","value":3}`))
	if r := f.get(t, "/api/v1/boards/points/day/results/2026-11-22"); r.Status != http.StatusNotFound {
		t.Fatalf("before recorded: %d %s", r.Status, r.Body)
	}
	// The day ends at midnight UTC and is final an hour later.
	f.mr.SetTime(time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC))
	cfg, err := ranking.ParseConfig([]byte(testBoards))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: f.mr.Addr()})
	defer rdb.Close()
	store := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: ranking.DefaultPrefix})
	ctx := context.Background()
	if ok, err := store.RecordResult(ctx, "points", "day", "2026-11-22"); !ok || err != nil {
		t.Fatalf("RecordResult: %v, %v", ok, err)
	}
	stored, err := f.mr.Get("standings:{points}:rs:day:2026-11-22")
	if err != nil {
		t.Fatal(err)
	}
	r := MustOK(t, f.get(t, "/api/v1/boards/points/day/results/2026-11-22"))
	if r.Body != stored {
		t.Fatalf("served\n%s\nstored\n%s", r.Body, stored)
	}
	for _, want := range []string{`"name":"Ann & <co>"`, `"member":"bob","name":null,"score":3}`, `"total":2`, `"start":"2026-11-22T00:00:00Z"`, `"digest":"sha256:`} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("result %s lacks %s", r.Body, want)
		}
	}
	list := MustOK(t, f.get(t, "/api/v1/boards/points/day/results?limit=5"))
	if got, want := strings.TrimSpace(list.Body), `{"results":[`+stored+`]}`; got != want {
		t.Fatalf("list\n got %s\nwant %s", got, want)
	}
	var empty struct{ Results []json.RawMessage }
	if err := json.Unmarshal([]byte(MustOK(t, f.get(t, "/api/v1/boards/points/day/results?before=2026-11-22")).Body), &empty); err != nil || empty.Results == nil || len(empty.Results) != 0 {
		t.Fatalf("before the only result: %v %v", empty.Results, err)
	}
	before := f.dump()
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/api/v1/boards/points/day/results?limit=0", 422},
		{"/api/v1/boards/points/day/results?limit=101", 422},
		{"/api/v1/boards/points/day/results?limit=x", 422},
		{"/api/v1/boards/points/day/results?before=yesterday", 422},
		{"/api/v1/boards/points/day/results/2026-13-01", 422},
		{"/api/v1/boards/points/day/results/2026-11-21", 404},
		{"/api/v1/boards/points/all/results", 404},
		{"/api/v1/boards/points/all/results/all", 404},
		{"/api/v1/boards/nope/day/results", 404},
		{"/api/v1/boards/points/hour/results", 404},
	} {
		if r := f.get(t, tc.path); r.Status != tc.status || r.ErrorCode(t) == "" {
			t.Errorf("%s: %d %s, want %d", tc.path, r.Status, r.Body, tc.status)
		}
	}
	f.MustUnchanged(t, before)
}
