package ranking_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
)

const actionBoards = `
boards:
  - {id: reads, views: [day, all]}
  - {id: points, decimals: 1, views: [week, all]}
  - {id: lap, update: best, order: asc, min_score: 1, max_score: 100, views: [all]}
actions:
  article.read:
    - {board: reads}
    - {board: points, value: 2.5}
  lap-done:
    - {board: lap, value: 42}
`

// TestActionConfig: actions are validated at start-up: names, known
// boards, values the board takes (decimals, bounds, max_step), default 1.
func TestActionConfig(t *testing.T) {
	cfg := MustConfig(t, actionBoards)
	a, ok := cfg.Action("article.read")
	if !ok || len(a.Targets) != 2 || a.Targets[0] != (ranking.ActionTarget{Board: "reads", Value: 1}) || a.Targets[1] != (ranking.ActionTarget{Board: "points", Value: 25}) {
		t.Fatalf("action %+v", a)
	}
	base := "boards:\n  - {id: g, max_step: 10}\n  - {id: b, update: best, min_score: 5, max_score: 9}\n  - {id: d, decimals: 2}\nactions:\n"
	for _, c := range []struct{ yaml, want string }{
		{"  Bad: [{board: g}]\n", "the name must match"},
		{"  a: [{board: nosuch}]\n", `board "nosuch" is not a board of this file`},
		{"  a: [{board: g, value: 11}]\n", "max_step"},
		{"  a: [{board: b}]\n", "is outside [5, 9]"},
		{"  a: [{board: d, value: 0.001}]\n", `board "d" would refuse it`},
		{"  a: [{board: g, value: \"3\"}]\n", "value must be a number"},
		{"  a: [{board: g}, {board: g}]\n", "listed twice"},
		{"  a: []\n", "must be a list of 1 to 32"},
		{"  a: [{board: g, weight: 2}]\n", `unknown key "weight"`},
		{"  a: [{value: 2}]\n", `field "board" is required`},
	} {
		_, err := ranking.ParseConfig([]byte(base + c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", strings.TrimSpace(c.yaml), err, c.want)
		}
	}
}

// TestActionRetryCompletesIt: on every backend, an action whose second
// board fails once is retried with the same id: the first board counts it
// once (a duplicate), the second applies it; every board ends up counted
// once. An event a board would refuse writes nothing anywhere.
func TestActionRetryCompletesIt(t *testing.T) {
	ranking.GuardKeys(t)
	for _, be := range backends() {
		t.Run(be.Name, func(t *testing.T) {
			ctx := context.Background()
			s := newStore(t, be.Client(t), MustConfig(t, actionBoards), nil)
			failed := 0
			s.SetBeforeActionBoard(func(board string) error {
				if board == "points" && failed == 0 {
					failed++
					return ranking.Errorf(ranking.EUNAVAILABLE, "injected")
				}
				return nil
			})
			ev := ranking.Event{Member: "ann", Name: "Ann", ID: "read-1"}
			res, err := s.Act(ctx, "article.read", ev)
			if err != nil || len(res) != 2 || res[0].Err != nil || res[1].Err == nil {
				t.Fatalf("first try: %+v %v", res, err)
			}
			res, err = s.Act(ctx, "article.read", ev)
			if err != nil || res[0].Err != nil || !res[0].Result.Duplicate || res[1].Err != nil || res[1].Result.Duplicate {
				t.Fatalf("retry: %+v %v", res, err)
			}
			res, err = s.Act(ctx, "article.read", ev)
			if err != nil || !res[0].Result.Duplicate || !res[1].Result.Duplicate {
				t.Fatalf("third: %+v %v", res, err)
			}
			if _, err := s.Act(ctx, "article.read", ranking.Event{Member: "bob"}); err != nil {
				t.Fatal(err)
			}
			for board, want := range map[string]int64{"reads": 1, "points": 25} {
				c, err := s.Member(ctx, board, "all", "ann", ranking.MemberQuery{})
				if err != nil || c.Score != want {
					t.Errorf("%s: ann %+v %v, want %d", board, c, err, want)
				}
			}
			if _, err := s.Act(ctx, "nosuch", ev); ranking.ErrorCode(err) != ranking.ENOTFOUND {
				t.Errorf("unknown action: %v", err)
			}
			_, err = s.Act(ctx, "article.read", ranking.Event{Member: "bad\x01"})
			if ranking.ErrorCode(err) != ranking.EINVALID {
				t.Errorf("bad member: %v", err)
			}
			if _, err := s.Member(ctx, "reads", "all", "bad\x01", ranking.MemberQuery{}); err == nil {
				t.Errorf("a refused action wrote something")
			}
		})
	}
}

// TestActionSegments: each board of an action takes the event's segments
// it has; a segment no board of the action has is refused, writing nothing.
func TestActionSegments(t *testing.T) {
	ctx := context.Background()
	_, rdb := MustMiniredis(t, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	s := newStore(t, rdb, MustConfig(t, `
boards:
  - {id: reads, segments: [country], views: [day, all]}
  - {id: points, views: [all]}
actions:
  read: [{board: reads}, {board: points, value: 3}]
`), nil)
	res, err := s.Act(ctx, "read", ranking.Event{Member: "ann", Segments: map[string]string{"country": "FR"}})
	if err != nil || res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("%+v %v", res, err)
	}
	pg, err := s.Page(ctx, "reads", "all", ranking.PageQuery{Segment: ranking.Segment{Name: "country", Value: "FR"}, Limit: 10})
	if err != nil || pg.Total != 1 || pg.Entries[0].Member != "ann" {
		t.Fatalf("segment FR: %+v %v", pg, err)
	}
	if _, err := s.Act(ctx, "read", ranking.Event{Member: "bob", Segments: map[string]string{"team": "red"}}); ranking.ErrorCode(err) != ranking.EINVALID {
		t.Fatalf("unknown segment: %v", err)
	}
	if _, err := s.Act(ctx, "read", ranking.Event{Member: "bob", Segments: map[string]string{"country": "bad value!"}}); ranking.ErrorCode(err) != ranking.EINVALID {
		t.Fatalf("bad value: %v", err)
	}
	if pg, _ := s.Page(ctx, "points", "all", ranking.PageQuery{Limit: 10}); pg.Total != 1 {
		t.Fatalf("refused actions wrote to points: total %d", pg.Total)
	}
}
