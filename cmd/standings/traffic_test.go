package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/ranking/rankingtest"
)

// TestDemoEventsAreValid draws many events for boards of every shape and
// checks each against the board's rules.
func TestDemoEventsAreValid(t *testing.T) {
	cfg, err := ranking.ParseConfig([]byte(`
boards:
  - id: inc
  - id: inc-dec
    decimals: 6
    min_score: -1
    max_score: 1
  - id: best-asc
    order: asc
    update: best
    decimals: 3
    max_score: 3600
  - id: best-desc
    update: best
    min_score: 10
    max_score: 12
  - id: latest
    update: latest
    ties: shared
    decimals: 2
    min_score: -50
    max_score: 50
`))
	if err != nil {
		t.Fatal(err)
	}
	d := newDemo(nil, cfg, slog.New(slog.DiscardHandler), 1)
	for _, b := range cfg.Boards {
		for range 20000 {
			ev := d.event(b)
			if err := ranking.ValidateMember(ev.Member); err != nil {
				t.Fatalf("%s: member %q: %v", b.ID, ev.Member, err)
			}
			if err := ranking.ValidateName(ev.Name); err != nil {
				t.Fatalf("%s: name %q: %v", b.ID, ev.Name, err)
			}
			if ev.Value < b.Min || ev.Value > b.Max {
				t.Fatalf("%s: value %d outside [%d, %d]", b.ID, ev.Value, b.Min, b.Max)
			}
			if b.Update == ranking.Increment && ev.Value <= 0 {
				t.Fatalf("%s: increment %d", b.ID, ev.Value)
			}
		}
	}
}

// TestDemoTraffic runs the generator on the demo boards until it has
// backfilled and written live events, then checks what a newcomer sees:
// every board has entries now, and earlier periods have history.
func TestDemoTraffic(t *testing.T) {
	cfg, err := ranking.ParseConfig(demoConfig)
	if err != nil {
		t.Fatal(err)
	}
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	store := rankingtest.MustStore(t, rdb, cfg, ranking.Options{Prefix: ranking.DefaultPrefix})
	d := newDemo(store, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), 2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	deadline := time.Now().Add(60 * time.Second)
	for _, b := range cfg.Boards {
		for _, v := range b.Views {
			for {
				pg, err := store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Limit: 1})
				if err == nil && pg.Total > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s %s: still empty (%v)", b.ID, v.Name, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	// The backfill reaches into the previous hour and day.
	now, _ := store.Now(ctx)
	for _, c := range []struct{ board, view string }{{"points", "hour"}, {"points", "day"}, {"reads", "day"}, {"speedrun", "day"}} {
		b, _ := cfg.Board(c.board)
		v, _ := b.View(c.view)
		prev := cfg.Calendar.Prev(v, cfg.Calendar.PeriodAt(v, now))
		pg, err := store.Page(ctx, c.board, c.view, ranking.PageQuery{Period: prev.ID, Limit: 10})
		if err != nil || pg.Total == 0 {
			t.Errorf("%s %s %s: no history (%v)", c.board, c.view, prev.ID, err)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the generator did not stop")
	}
}

// TestDemoHistory starts the binary as `make run` does (embedded Redis,
// demo on) and checks what a newcomer sees in the first minute: last
// week's podium, results of every view, and 7-day movement.
func TestDemoHistory(t *testing.T) {
	m := MustRun(t)
	get := func(path string, into any) {
		t.Helper()
		// The embedded store is busy with the demo's traffic (slow under
		// -race): a 503 says "try again shortly", and so the test does.
		code, body := call(t, "GET", m.URL+path, "")
		for try := 0; code == 503 && try < 10; try++ {
			time.Sleep(500 * time.Millisecond)
			code, body = call(t, "GET", m.URL+path, "")
		}
		if code != 200 {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		if err := json.Unmarshal([]byte(body), into); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	type results struct {
		Results []struct {
			Period  string            `json:"period"`
			Total   int64             `json:"total"`
			Entries []json.RawMessage `json:"entries"`
		} `json:"results"`
	}
	now, err := m.Store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Config.Board("points")
	week, _ := b.View("week")
	cal := m.Config.Calendar
	// The week before last is final whatever the weekday (lateness 26 h).
	final := cal.Shift(week, cal.PeriodAt(week, now), -2)
	var r results
	get("/api/v1/boards/points/week/results?limit=3", &r)
	if len(r.Results) == 0 || r.Results[0].Period < final.ID || len(r.Results[0].Entries) < 3 {
		t.Fatalf("points week: want a podium for %s or later, got %+v", final.ID, r.Results)
	}
	for _, c := range []struct{ board, view string }{{"points", "hour"}, {"points", "day"}, {"points", "month"}, {"points", "7d"}, {"reads", "30d"}, {"speedrun", "week"}, {"rating", "week"}} {
		var r results
		get("/api/v1/boards/"+c.board+"/"+c.view+"/results?limit=1", &r)
		if len(r.Results) == 0 || r.Results[0].Total == 0 {
			t.Errorf("%s %s: no finished period with scores: %+v", c.board, c.view, r.Results)
		}
	}
	var page struct {
		Entries []struct {
			PreviousRank *int64 `json:"previous_rank"`
		} `json:"entries"`
	}
	get("/api/v1/boards/points/7d?limit=20", &page)
	moved := 0
	for _, e := range page.Entries {
		if e.PreviousRank != nil {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("points 7d: no row has a previous rank (%d rows)", len(page.Entries))
	}
	// Yesterday's league round is decided, with promotions and demotions.
	quiz, _ := m.Config.Board("quiz")
	yesterday := cal.Shift(quiz.League.Cycle, cal.PeriodAt(quiz.League.Cycle, now), -1).ID
	var league struct {
		Tiers []struct {
			Tier    string `json:"tier"`
			Cohorts []struct {
				Cohort int `json:"cohort"`
			} `json:"cohorts"`
		} `json:"tiers"`
	}
	get("/api/v1/boards/quiz/league?round="+yesterday, &league)
	outcomes := map[string]int{}
	for _, tier := range league.Tiers {
		for _, co := range tier.Cohorts {
			var cohort struct {
				Entries []struct {
					Outcome *string `json:"outcome"`
				} `json:"entries"`
			}
			get(fmt.Sprintf("/api/v1/boards/quiz/league/%s/%d?round=%s", tier.Tier, co.Cohort, yesterday), &cohort)
			for _, e := range cohort.Entries {
				if e.Outcome != nil {
					outcomes[*e.Outcome]++
				}
			}
		}
	}
	if outcomes["promoted"] == 0 || outcomes["demoted"] == 0 {
		t.Errorf("quiz round %s: outcomes %v, want promotions and demotions", yesterday, outcomes)
	}
}
