package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
	"github.com/standings/standings/web"
)

const leagueTestBoards = `
timezone: UTC
boards:
  - id: points
    decimals: 1
    max_score: 1000
    views: [day, all]
` + leagueTestBoard

// leagueTestBoard is the league board lg, as a boards file's list entry.
const leagueTestBoard = `  - id: lg
    title: Daily league
    decimals: 1
    max_score: 1000
    views: [day, all]
    lateness: 3h
    league: {cycle: day, tiers: [bronze, silver, {id: gold, title: Gold league}], cohort_size: 5, promote: 2, demote: 2}
`

// leagueFixture is a fixture whose clock (the app's and Redis's) moves.
type leagueFixture struct {
	*fixture
	now atomic.Pointer[time.Time]
}

// mustLeagueFixture starts a fixture on boards at testNow whose clock
// at() moves.
func mustLeagueFixture(tb testing.TB, boards string) *leagueFixture {
	tb.Helper()
	cfg, err := ranking.ParseConfig([]byte(boards))
	if err != nil {
		tb.Fatal(err)
	}
	lf := &leagueFixture{}
	start := testNow
	lf.now.Store(&start)
	mr := miniredis.RunT(tb)
	mr.SetTime(testNow)
	mr.ClockTTL(true)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	tb.Cleanup(func() { rdb.Close() })
	store := rankingtest.MustStore(tb, rdb, cfg, ranking.Options{Prefix: ranking.DefaultPrefix, Clock: func() time.Time { return *lf.now.Load() }})
	srv := web.NewServer(web.Options{WriteRate: -1, Store: store, Feed: store, Config: cfg,
		WriteKeys: []string{writeKey}, AdminKeys: []string{adminKey}, PageTick: -1})
	tb.Cleanup(srv.Close)
	lf.fixture = &fixture{mr: mr, store: store, srv: srv, handler: srv.Handler()}
	return lf
}

// at moves both clocks to t.
func (lf *leagueFixture) at(t time.Time) {
	lf.now.Store(&t)
	lf.mr.SetTime(t)
}

// write posts score events as "member=value" pairs.
func (lf *leagueFixture) write(tb testing.TB, board string, pairs ...string) {
	tb.Helper()
	for _, p := range pairs {
		m, v, _ := strings.Cut(p, "=")
		MustOK(tb, lf.do(tb, "POST", "/api/v1/boards/"+board+"/scores", writeKey, fmt.Sprintf(`{"member":%q,"value":%s,"name":%q}`, m, v, strings.ToUpper(m))))
	}
}

// leagueDay is a round of lg: seven members, five in bronze 1 and two in
// bronze 2.
func leagueDay(tb testing.TB, lf *leagueFixture) {
	tb.Helper()
	lf.write(tb, "lg", "m1=9", "m2=8", "m3=7", "m4=6", "m5=5", "m6=4", "m7=3.5")
}

func TestLeagueAPI(t *testing.T) {
	lf := mustLeagueFixture(t, leagueTestBoards)
	leagueDay(t, lf)

	ov := MustOK(t, lf.get(t, "/api/v1/boards/lg/league")).Body
	want := `{"board":"lg","round":"2026-11-22","start":"2026-11-22T00:00:00Z","end":"2026-11-23T00:00:00Z","closed":false,"tiers":[` +
		`{"tier":"bronze","title":"Bronze","members":7,"cohort_count":2,"cohorts":[{"cohort":1,"members":5,"decided":false},{"cohort":2,"members":2,"decided":false}]},` +
		`{"tier":"silver","title":"Silver","members":0,"cohort_count":0,"cohorts":[]},` +
		`{"tier":"gold","title":"Gold league","members":0,"cohort_count":0,"cohorts":[]}]}`
	if got := strings.TrimSpace(ov); got != want {
		t.Fatalf("overview\n got %s\nwant %s", got, want)
	}

	co := MustOK(t, lf.get(t, "/api/v1/boards/lg/league/bronze/1")).Body
	want = `{"board":"lg","round":"2026-11-22","start":"2026-11-22T00:00:00Z","end":"2026-11-23T00:00:00Z","closed":false,"decided":false,` +
		`"tier":"bronze","title":"Bronze","cohort":1,"promote":2,"demote":0,"entries":[` +
		`{"rank":1,"member":"m1","name":"M1","score":9,"zone":"promotion","outcome":null},` +
		`{"rank":2,"member":"m2","name":"M2","score":8,"zone":"promotion","outcome":null},` +
		`{"rank":3,"member":"m3","name":"M3","score":7,"zone":"safe","outcome":null},` +
		`{"rank":4,"member":"m4","name":"M4","score":6,"zone":"safe","outcome":null},` +
		`{"rank":5,"member":"m5","name":"M5","score":5,"zone":"safe","outcome":null}]}`
	if got := strings.TrimSpace(co); got != want {
		t.Fatalf("cohort\n got %s\nwant %s", got, want)
	}

	m := MustOK(t, lf.get(t, "/api/v1/boards/lg/league/members/m7")).Body
	want = `{"board":"lg","round":"2026-11-22","start":"2026-11-22T00:00:00Z","end":"2026-11-23T00:00:00Z","closed":false,` +
		`"member":"m7","name":"M7","tier":"bronze","cohort":2,"rank":2,"score":3.5,"cohort_size":2,"zone":"safe","outcome":null,"next_tier":"bronze"}`
	if got := strings.TrimSpace(m); got != want {
		t.Fatalf("member\n got %s\nwant %s", got, want)
	}

	// The next day: m1's first event decides bronze 1 and places m1 in
	// silver; the recorder decides bronze 2.
	lf.at(testNow.Add(24 * time.Hour))
	lf.write(t, "lg", "m1=1", "m4=2")
	if _, err := lf.store.DecideLeagues(context.Background()); err != nil {
		t.Fatal(err)
	}
	old := MustOK(t, lf.get(t, "/api/v1/boards/lg/league/bronze/1?round=2026-11-22")).JSON(t)
	if old["closed"] != true || old["decided"] != true {
		t.Errorf("yesterday's cohort %v", old)
	}
	var outcomes []string
	for _, e := range old["entries"].([]any) {
		outcomes = append(outcomes, e.(map[string]any)["outcome"].(string))
	}
	if got := strings.Join(outcomes, " "); got != "promoted promoted stayed stayed stayed" {
		t.Errorf("outcomes %s", got)
	}
	// Any period form names a round: a day inside it.
	m2 := MustOK(t, lf.get(t, "/api/v1/boards/lg/league/members/m2?round=2026-11-22T18:00:00Z")).JSON(t)
	if m2["outcome"] != "promoted" || m2["next_tier"] != "silver" || m2["zone"] != "promotion" || m2["round"] != "2026-11-22" {
		t.Errorf("m2 yesterday %v", m2)
	}
	m1 := MustOK(t, lf.get(t, "/api/v1/boards/lg/league/members/m1")).JSON(t)
	if m1["tier"] != "silver" || m1["cohort"] != json.Number("1") || m1["round"] != "2026-11-23" || m1["outcome"] != nil {
		t.Errorf("m1 today %v", m1)
	}
	ov2 := MustOK(t, lf.get(t, "/api/v1/boards/lg/league?round=2026-11-22")).JSON(t)
	if ov2["closed"] != true {
		t.Errorf("yesterday's overview %v", ov2)
	}
}

func TestLeagueAPIBadInput(t *testing.T) {
	lf := mustLeagueFixture(t, leagueTestBoards)
	leagueDay(t, lf)
	before := lf.dump()
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/api/v1/boards/points/league", http.StatusNotFound},
		{"/api/v1/boards/nosuch/league", http.StatusNotFound},
		{"/api/v1/boards/points/league/bronze/1", http.StatusNotFound},
		{"/api/v1/boards/lg/league/platinum/1", http.StatusNotFound},
		{"/api/v1/boards/lg/league/bronze/3", http.StatusNotFound},
		{"/api/v1/boards/lg/league/silver/1", http.StatusNotFound},
		{"/api/v1/boards/lg/league/bronze/1?round=2026-11-20", http.StatusNotFound},
		{"/api/v1/boards/lg/league/members/nobody", http.StatusNotFound},
		{"/api/v1/boards/lg/league/members/m1?round=2026-11-21", http.StatusNotFound},
		{"/api/v1/boards/lg/league?round=yesterday", http.StatusUnprocessableEntity},
		{"/api/v1/boards/lg/league/bronze/1?round=2026-13-01", http.StatusUnprocessableEntity},
		{"/api/v1/boards/lg/league/bronze/0", http.StatusUnprocessableEntity},
		{"/api/v1/boards/lg/league/bronze/x1", http.StatusUnprocessableEntity},
		{"/api/v1/boards/lg/league/bronze/1.csv", http.StatusUnprocessableEntity},
		{"/api/v1/boards/lg/league/bronze/99999999999", http.StatusUnprocessableEntity},
		{"/api/v1/boards/lg/league/bronze/+1", http.StatusUnprocessableEntity},
		{"/api/v1/boards/lg/league/members/m1?round=nope", http.StatusUnprocessableEntity},
	} {
		r := lf.get(t, c.path)
		if r.Status != c.status {
			t.Errorf("%s: %d %s, want %d", c.path, r.Status, r.Body, c.status)
			continue
		}
		r.ErrorCode(t)
	}
	lf.MustUnchanged(t, before)
}
