package ranking_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
)

// mustBoardsFile parses a boards file that must be valid.
func mustBoardsFile(tb testing.TB, text string) *ranking.Config {
	tb.Helper()
	cfg, err := ranking.ParseConfig([]byte(text))
	if err != nil {
		tb.Fatalf("ParseConfig: %v", err)
	}
	return cfg
}

// mustConfigProblems parses a boards file that must be refused and returns
// its problems.
func mustConfigProblems(tb testing.TB, text string) []string {
	tb.Helper()
	cfg, err := ranking.ParseConfig([]byte(text))
	if err == nil {
		tb.Fatalf("accepted, with boards %v", boardIDs(cfg))
	}
	var ce *ranking.ConfigError
	if !errors.As(err, &ce) {
		tb.Fatalf("error %T %v, want a *ConfigError", err, err)
	}
	if len(ce.Problems) == 0 {
		tb.Fatal("a ConfigError without problems")
	}
	for _, p := range ce.Problems {
		if !strings.Contains(err.Error(), p) {
			tb.Errorf("Error() does not list %q", p)
		}
	}
	if cfg != nil {
		tb.Error("a refused file also returned a config")
	}
	return ce.Problems
}

func boardIDs(cfg *ranking.Config) []string {
	var ids []string
	for _, b := range cfg.Boards {
		ids = append(ids, b.ID)
	}
	return ids
}

func viewNames(b *ranking.Board) []string {
	var names []string
	for _, v := range b.Views {
		names = append(names, v.Name)
	}
	return names
}

func TestParseConfigDefaults(t *testing.T) {
	cfg := mustBoardsFile(t, "boards:\n  - id: points\n")
	if cfg.Timezone != "UTC" || cfg.Calendar.Location() != time.UTC {
		t.Errorf("timezone %q (%v), want UTC", cfg.Timezone, cfg.Calendar.Location())
	}
	if cfg.WeekStarts != time.Monday {
		t.Errorf("week starts %v, want monday", cfg.WeekStarts)
	}
	if len(cfg.Boards) != 1 {
		t.Fatalf("boards %v", boardIDs(cfg))
	}
	b := cfg.Boards[0]
	checks := []struct {
		field     string
		got, want any
	}{
		{"id", b.ID, "points"},
		{"title", b.Title, "points"},
		{"order", b.Order, ranking.Desc},
		{"update", b.Update, ranking.Increment},
		{"decimals", b.Decimals, 0},
		{"min_score", b.Min, int64(0)},
		{"max_score", b.Max, int64(1_000_000_000)},
		{"ties", b.Ties, ranking.TiesFirst},
		{"keep", b.Keep, 12},
		{"lateness", b.Lateness, time.Hour},
		{"stream", b.Stream, false},
		{"views", strings.Join(viewNames(b), ","), "day,week,month,all"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
		}
	}
	for view, want := range map[string]string{"day": "1s", "week": "1s", "month": "1s", "all": "1h"} {
		if got := b.TieResolution(view); got != want {
			t.Errorf("view %s: resolution %q, want %q", view, got, want)
		}
	}
	// Weeks start on Monday: 2026-11-22 is a Sunday.
	p := cfg.Calendar.PeriodAt(MustView(t, "week"), MustTime(t, "2026-11-22T12:00:00Z"))
	if p.ID != "2026-11-16" {
		t.Errorf("week of 2026-11-22 is %s", p.ID)
	}
}

// TestParseConfigContractExample parses the example of the contract.
func TestParseConfigContractExample(t *testing.T) {
	cfg := mustBoardsFile(t, `
timezone: Asia/Shanghai     # IANA zone for every period boundary (default UTC)
week_starts: monday         # monday | sunday
boards:
  - id: points              # [a-z0-9][a-z0-9-]{0,31}
    title: Points
    order: desc             # desc: higher ranks first | asc: lower ranks first
    update: increment       # increment (add) | best (keep the better) | latest (replace)
    decimals: 0             # 0..6 decimal places kept exactly
    min_score: 0
    max_score: 10000000
    ties: first
    views: [hour, day, week, month, all, 7d, 30d]
    keep: 12                # finished periods of each view kept readable
    lateness: 48h           # how far back an event's explicit at may reach
`)
	if cfg.Timezone != "Asia/Shanghai" || cfg.Calendar.Location().String() != "Asia/Shanghai" {
		t.Errorf("timezone %q", cfg.Timezone)
	}
	b, ok := cfg.Board("points")
	if !ok {
		t.Fatal("no board points")
	}
	if _, ok := cfg.Board("nope"); ok {
		t.Error("found a board that is not there")
	}
	if b.Title != "Points" || b.Order != ranking.Desc || b.Update != ranking.Increment || b.Decimals != 0 ||
		b.Min != 0 || b.Max != 10_000_000 || b.Ties != ranking.TiesFirst || b.Keep != 12 || b.Lateness != 48*time.Hour {
		t.Errorf("board %+v", b)
	}
	if got := strings.Join(viewNames(b), ","); got != "hour,day,week,month,all,7d,30d" {
		t.Errorf("views %s", got)
	}
	if v, ok := b.View("7d"); !ok || v.Kind != ranking.Window || v.Days != 7 {
		t.Errorf("view 7d = %+v, %v", v, ok)
	}
	if _, ok := b.View("year"); ok {
		t.Error("found a view that is not there")
	}
	for _, v := range b.Views {
		if b.TieResolution(v.Name) == "" {
			t.Errorf("view %s has no tie resolution", v.Name)
		}
	}
}

func TestParseConfigFields(t *testing.T) {
	cfg := mustBoardsFile(t, `
timezone: America/New_York
week_starts: sunday
boards:
  - id: fastest-lap
    title: "Fastest lap: Monza"
    order: asc
    update: best
    decimals: 3
    min_score: "0.5"
    max_score: 3600
    ties: shared
    views: [day, all]
    keep: 0
    lateness: 90s
  - id: "0"
    update: latest
  - id: abcdefghijklmnopqrstuvwxyz012345
    views: [hour, 1d, 400d]
`)
	if cfg.WeekStarts != time.Sunday {
		t.Errorf("week starts %v", cfg.WeekStarts)
	}
	if p := cfg.Calendar.PeriodAt(MustView(t, "week"), MustTime(t, "2026-11-22T12:00:00Z")); p.ID != "2026-11-22" {
		t.Errorf("week of 2026-11-22 is %s", p.ID)
	}
	if got := strings.Join(boardIDs(cfg), ","); got != "fastest-lap,0,abcdefghijklmnopqrstuvwxyz012345" {
		t.Fatalf("boards %s", got)
	}
	b := cfg.Boards[0]
	if b.Title != "Fastest lap: Monza" || b.Order != ranking.Asc || b.Update != ranking.Best || b.Decimals != 3 ||
		b.Min != 500 || b.Max != 3_600_000 || b.Ties != ranking.TiesShared || b.Keep != 0 || b.Lateness != 90*time.Second {
		t.Errorf("board %+v", b)
	}
	if b.FormatScore(b.Min) != "0.5" || b.FormatScore(b.Max) != "3600" {
		t.Errorf("bounds format as %s, %s", b.FormatScore(b.Min), b.FormatScore(b.Max))
	}
	if cfg.Boards[1].Update != ranking.Latest || cfg.Boards[1].Title != "0" {
		t.Errorf("board 0: %+v", cfg.Boards[1])
	}
	if got := strings.Join(viewNames(cfg.Boards[2]), ","); got != "hour,1d,400d" {
		t.Errorf("views %s", got)
	}
}

// TestParseConfigBoundsWithDecimals: bounds are read with the board's
// decimals, wherever the decimals key appears.
func TestParseConfigBoundsWithDecimals(t *testing.T) {
	tests := []struct {
		name, board string
		min, max    int64
	}{
		{"half with one decimal", "min_score: 0.5\n    max_score: 99.5\n    decimals: 1", 5, 995},
		{"decimals given first", "decimals: 1\n    min_score: -0.5\n    max_score: 12.50", -5, 125},
		{"exponent", "decimals: 2\n    max_score: 1e3", 0, 100_000},
		{"six decimals", "decimals: 6\n    min_score: -1\n    max_score: 0.000001\n    views: [hour]", -1_000_000, 1},
		{"quoted", "decimals: 1\n    min_score: \"0.5\"\n    max_score: '1.5'", 5, 15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustBoardsFile(t, "boards:\n  - id: points\n    "+tc.board+"\n")
			b := cfg.Boards[0]
			if b.Min != tc.min || b.Max != tc.max {
				t.Errorf("bounds [%d, %d], want [%d, %d]", b.Min, b.Max, tc.min, tc.max)
			}
		})
	}
}

func TestParseConfigRejects(t *testing.T) {
	const pts = `board "points"`
	tests := []struct {
		name string
		file string
		want []string // every one must appear in one problem
	}{
		{"invalid yaml", "boards: [", []string{"not valid YAML"}},
		{"empty file", "", []string{"not valid YAML"}},
		{"not a mapping", "- id: points\n", []string{"must be a YAML mapping"}},
		{"unknown top-level key", "colour: red\nboards: [{id: points}]\n", []string{`unknown key "colour"`, "line 1"}},
		{"top-level key twice", "timezone: UTC\ntimezone: Asia/Shanghai\nboards: [{id: points}]\n", []string{`field "timezone"`, "twice", "line 2", "line 1"}},
		{"boards twice", "boards: [{id: points}]\nboards: [{id: other}]\n", []string{`field "boards"`, "twice"}},
		{"no boards", "timezone: UTC\n", []string{`field "boards"`}},
		{"bad unit", "boards: [{id: points, unit: \"3 <b>\"}]\n", []string{`field "unit"`, "letters"}},
		{"bad format", "boards: [{id: points, format: money}]\n", []string{`field "format"`, "number", "duration"}},
		{"empty boards", "boards: []\n", []string{`field "boards"`}},
		{"boards not a list", "boards: {id: points}\n", []string{`field "boards"`}},
		{"zone does not load", "timezone: Mars/Olympus_Mons\nboards: [{id: points}]\n", []string{`field "timezone"`, "Mars/Olympus_Mons", "does not load"}},
		{"empty zone", "timezone: \"\"\nboards: [{id: points}]\n", []string{`field "timezone"`}},
		{"server's local zone", "timezone: Local\nboards: [{id: points}]\n", []string{`field "timezone"`, `"Local"`}},
		{"zone not a string", "timezone: [UTC]\nboards: [{id: points}]\n", []string{`field "timezone"`}},
		{"capitalised week start", "week_starts: Monday\nboards: [{id: points}]\n", []string{`field "week_starts"`, `"Monday"`}},
		{"saturday", "week_starts: saturday\nboards: [{id: points}]\n", []string{`field "week_starts"`, `"saturday"`}},
		{"board not a mapping", "boards: [points]\n", []string{"boards[0]"}},
		{"missing id", "boards:\n  - title: Points\n", []string{"boards[0]", `field "id" is required`}},
		{"uppercase id", "boards: [{id: Points}]\n", []string{`board "Points"`, `field "id"`}},
		{"id of 33 characters", "boards: [{id: abcdefghijklmnopqrstuvwxyz0123456}]\n", []string{`board "abcdefghijklmnopqrstuvwxyz0123456"`, `field "id"`}},
		{"leading dash", "boards: [{id: -points}]\n", []string{`board "-points"`, `field "id"`}},
		{"underscore in id", "boards: [{id: my_points}]\n", []string{`board "my_points"`, `field "id"`}},
		{"empty id", "boards: [{id: \"\"}]\n", []string{`field "id"`}},
		{"id with a newline", "boards: [{id: \"points\\n\"}]\n", []string{`field "id"`}},
		{"id not a string", "boards: [{id: [points]}]\n", []string{"boards[0]", `field "id"`}},
		{"duplicate id", "boards:\n  - id: points\n  - id: other\n  - id: points\n", []string{pts, "duplicate id", "line 4", "line 2"}},
		{"unknown board key", "boards:\n  - id: points\n    colour: red\n", []string{pts, `field "colour"`, "unknown key"}},
		{"board key twice", "boards:\n  - id: points\n    views: [day]\n    views: [week]\n", []string{pts, `field "views"`, "twice"}},
		{"title not a string", "boards:\n  - id: points\n    title: [a, b]\n", []string{pts, `field "title"`}},
		{"bad order", "boards:\n  - id: points\n    order: up\n", []string{pts, `field "order"`, `"up"`}},
		{"bad update", "boards:\n  - id: points\n    update: max\n", []string{pts, `field "update"`, `"max"`}},
		{"bad ties", "boards:\n  - id: points\n    ties: random\n", []string{pts, `field "ties"`, `"random"`}},
		{"decimals 7", "boards:\n  - id: points\n    decimals: 7\n", []string{pts, `field "decimals"`, `"7"`}},
		{"negative decimals", "boards:\n  - id: points\n    decimals: -1\n", []string{pts, `field "decimals"`}},
		{"fractional decimals", "boards:\n  - id: points\n    decimals: 1.5\n", []string{pts, `field "decimals"`}},
		{"min equals max", "boards:\n  - id: points\n    min_score: 10\n    max_score: 10\n", []string{pts, `field "min_score"`, "below max_score"}},
		{"min above max", "boards:\n  - id: points\n    min_score: 11\n    max_score: 10\n", []string{pts, `field "min_score"`}},
		{"min above default max", "boards:\n  - id: points\n    min_score: 2000000000\n", []string{pts, `field "min_score"`}},
		{"max below default min", "boards:\n  - id: points\n    max_score: -1\n", []string{pts, `field "min_score"`}},
		{"min not a number", "boards:\n  - id: points\n    min_score: zero\n", []string{pts, `field "min_score"`, "not a number"}},
		{"max with too many decimals", "boards:\n  - id: points\n    decimals: 1\n    max_score: 0.55\n", []string{pts, `field "max_score"`, "decimal places"}},
		{"max with decimals but none allowed", "boards:\n  - id: points\n    max_score: 99.5\n", []string{pts, `field "max_score"`}},
		{"max at 2^53", "boards:\n  - id: points\n    max_score: 9007199254740992\n", []string{pts, `field "max_score"`, "out of range"}},
		{"max infinite", "boards:\n  - id: points\n    max_score: .inf\n", []string{pts, `field "max_score"`}},
		{"rolling window with best", "boards:\n  - id: points\n    update: best\n    views: [day, 7d]\n", []string{pts, `field "views"`, `"7d"`, "increment"}},
		{"rolling window with latest", "boards:\n  - id: points\n    update: latest\n    views: [30d]\n", []string{pts, `field "views"`, `"30d"`, "increment"}},
		{"view listed twice", "boards:\n  - id: points\n    views: [day, week, day]\n", []string{pts, `field "views"`, `"day" is listed twice`}},
		{"unknown view", "boards:\n  - id: points\n    views: [day, weekly]\n", []string{pts, `field "views"`, `"weekly"`}},
		{"window too long", "boards:\n  - id: points\n    views: [401d]\n", []string{pts, `field "views"`, `"401d"`}},
		{"empty views", "boards:\n  - id: points\n    views: []\n", []string{pts, `field "views"`}},
		{"views not a list", "boards:\n  - id: points\n    views: day\n", []string{pts, `field "views"`}},
		{"negative keep", "boards:\n  - id: points\n    keep: -1\n", []string{pts, `field "keep"`}},
		{"keep not a number", "boards:\n  - id: points\n    keep: many\n", []string{pts, `field "keep"`}},
		{"lateness in days", "boards:\n  - id: points\n    lateness: 2d\n", []string{pts, `field "lateness"`}},
		{"negative lateness", "boards:\n  - id: points\n    lateness: -1h\n", []string{pts, `field "lateness"`}},
		{"stream not a bool", "boards:\n  - id: points\n    stream: maybe\n", []string{pts, `field "stream"`, "true or false"}},
		{"stream a list", "boards:\n  - id: points\n    stream: [true]\n", []string{pts, `field "stream"`}},
		{"max_step zero", "boards:\n  - id: points\n    max_step: 0\n", []string{pts, `field "max_step"`, "above 0"}},
		{"max_step negative", "boards:\n  - id: points\n    max_step: -5\n", []string{pts, `field "max_step"`, "above 0"}},
		{"max_step beyond the range", "boards:\n  - id: points\n    min_score: -10\n    max_score: 10\n    max_step: 21\n", []string{pts, `field "max_step"`, "max_score - min_score"}},
		{"max_step with too many decimals", "boards:\n  - id: points\n    max_step: 1.5\n", []string{pts, `field "max_step"`, "decimal places"}},
		{"max_step on a best board", "boards:\n  - id: points\n    update: best\n    max_step: 5\n", []string{pts, `field "max_step"`, "increment", "best"}},
		{"max_step on a latest board", "boards:\n  - id: points\n    update: latest\n    max_step: 5\n", []string{pts, `field "max_step"`, "latest"}},
		{"window sums do not fit", "boards:\n  - id: points\n    max_score: 100000000000000\n    views: [day, 400d]\n", []string{pts, `field "views"`, `"400d"`, "day totals", "1h"}},
		{"encoding does not fit", "boards:\n  - id: points\n    decimals: 6\n    max_score: 1000000000\n", []string{pts, `field "views"`, `view "day"`, "1h"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems := mustConfigProblems(t, tc.file)
			for _, w := range tc.want {
				if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, w) }) {
					t.Errorf("no problem mentions %s:\n  %s", w, strings.Join(problems, "\n  "))
				}
			}
			// A problem of a named board names it.
			for _, p := range problems {
				if strings.Contains(tc.file, "id: points") && strings.Contains(p, "field") &&
					!strings.HasPrefix(p, "field") && !strings.HasPrefix(p, pts) {
					t.Errorf("problem %q does not start with %s", p, pts)
				}
			}
		})
	}
}

// TestParseConfigReportsEveryProblem: one run lists every problem of the
// file, each once.
func TestParseConfigReportsEveryProblem(t *testing.T) {
	problems := mustConfigProblems(t, `
timezone: Nowhere/Special
week_starts: friday
colour: red
boards:
  - id: points
    order: up
    decimals: 6
    max_score: 1000000000
    views: [day]
  - id: Bad
  - id: laps
    update: best
    views: [day, 7d, 7d]
    keep: -3
  - id: laps
  - title: nameless
`)
	want := [][]string{
		{`field "timezone"`, "Nowhere/Special"},
		{`field "week_starts"`, "friday"},
		{`unknown key "colour"`},
		{`board "points"`, `field "order"`},
		// The order problem does not hide the encoding one.
		{`board "points"`, `field "views"`, `view "day"`},
		{`board "Bad"`, `field "id"`},
		{`board "laps"`, `field "views"`, `rolling view "7d"`},
		{`board "laps"`, `field "views"`, `"7d" is listed twice`},
		{`board "laps"`, `field "keep"`},
		{`board "laps"`, "duplicate id"},
		{"boards[4]", `field "id" is required`},
	}
	for _, w := range want {
		if !slices.ContainsFunc(problems, func(p string) bool {
			for _, part := range w {
				if !strings.Contains(p, part) {
					return false
				}
			}
			return true
		}) {
			t.Errorf("no problem mentions all of %q", w)
		}
	}
	if len(problems) != len(want) {
		t.Errorf("%d problems, want %d:\n  %s", len(problems), len(want), strings.Join(problems, "\n  "))
	}
}

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "boards.yaml")
	if err := os.WriteFile(good, []byte("boards:\n  - id: points\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := ranking.LoadConfigFile(good)
	if err != nil || len(cfg.Boards) != 1 {
		t.Fatalf("LoadConfigFile: %v", err)
	}
	if _, err := ranking.LoadConfigFile(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("a missing file loaded")
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("boards: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *ranking.ConfigError
	if _, err := ranking.LoadConfigFile(bad); !errors.As(err, &ce) {
		t.Errorf("invalid file: %v, want a *ConfigError", err)
	}
}

// TestParseConfigMaxStep: max_step is read with the board's decimals and
// defaults to no limit.
func TestParseConfigMaxStep(t *testing.T) {
	cfg := mustBoardsFile(t, "boards:\n  - {id: a, max_step: 2.5, decimals: 1, min_score: -10, max_score: 10}\n  - {id: b}\n  - {id: c, max_step: 20, min_score: -10, max_score: 10}\n")
	if got := cfg.Boards[0].MaxStep; got != 25 {
		t.Errorf("max_step 2.5 with 1 decimal is %d, want 25", got)
	}
	if got := cfg.Boards[1].MaxStep; got != 0 {
		t.Errorf("default max_step %d, want 0 (none)", got)
	}
	if got := cfg.Boards[2].MaxStep; got != 20 {
		t.Errorf("max_step at the full range is %d, want 20", got)
	}
}

// TestConfigResultsFields: results_top and results_keep default to 10 and
// 100, take their whole range, and refuse anything else by name.
func TestConfigResultsFields(t *testing.T) {
	cfg := MustConfig(t, "boards: [{id: a, views: [week]}, {id: b, views: [week], results_top: 1000, results_keep: 0}, {id: c, views: [week], results_top: 1, results_keep: 10000}]\n")
	for i, want := range [][2]int{{10, 100}, {1000, 0}, {1, 10000}} {
		if b := cfg.Boards[i]; b.ResultsTop != want[0] || b.ResultsKeep != want[1] {
			t.Errorf("board %s: results_top %d, results_keep %d; want %v", b.ID, b.ResultsTop, b.ResultsKeep, want)
		}
	}
	for _, tc := range []struct{ field, value, want string }{
		{"results_top", "0", `field "results_top" (line 1): "0" must be a whole number from 1 to 1000`},
		{"results_top", "1001", `"1001" must be a whole number from 1 to 1000`},
		{"results_top", "ten", `"ten" must be a whole number from 1 to 1000`},
		{"results_keep", "-1", `field "results_keep" (line 1): "-1" must be a whole number from 0 to 10000`},
		{"results_keep", "10001", `"10001" must be a whole number from 0 to 10000`},
		{"results_keep", "[1]", `field "results_keep" (line 1): must be a single value`},
	} {
		probs := mustConfigProblems(t, "boards: [{id: a, views: [week], "+tc.field+": "+tc.value+"}]\n")
		if len(probs) != 1 || !strings.Contains(probs[0], tc.want) {
			t.Errorf("%s: %s: problems %q, want one containing %q", tc.field, tc.value, probs, tc.want)
		}
	}
}

// TestStreamField checks the board field stream turns the ingest stream on.
func TestStreamField(t *testing.T) {
	cfg := mustBoardsFile(t, "boards:\n  - id: points\n    stream: true\n  - id: other\n    stream: false\n")
	if !cfg.Boards[0].Stream || cfg.Boards[1].Stream {
		t.Errorf("stream = %v, %v; want true, false", cfg.Boards[0].Stream, cfg.Boards[1].Stream)
	}
}

// TestParseConfigKeysAsWritten: each mapping's keys are checked as
// written: an alias is not a single value, a repeated unknown key is
// reported as repeated, and in an action entry the last of a repeated key
// counts.
func TestParseConfigKeysAsWritten(t *testing.T) {
	problems := mustConfigProblems(t, "x: &p points\nboards:\n  - {id: *p, colour: red, colour: blue}\n")
	for _, want := range []string{
		`unknown key "x" (line 1)`,
		`boards[0]: field "id" (line 3): must be a single value`,
		`boards[0]: field "colour" (line 3): unknown key`,
		`boards[0]: field "colour" (line 3): given twice, first on line 3`,
	} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, want) }) {
			t.Errorf("no problem starts with %s:\n  %s", want, strings.Join(problems, "\n  "))
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems, want 4:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	cfg := mustBoardsFile(t, "boards: [{id: a}, {id: b}]\nactions:\n  x: [{board: a, board: b, value: 1, value: 5}]\n")
	if a, _ := cfg.Action("x"); len(a.Targets) != 1 || a.Targets[0] != (ranking.ActionTarget{Board: "b", Value: 5}) {
		t.Errorf("action x %+v, want the last board and value", a)
	}
}

// FuzzParseConfig: any boards file is refused with a message or parsed
// into boards whose calendar views hold each instant in one period that
// Next and Prev step to and from (go test -fuzz FuzzParseConfig ./ranking).
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"boards: [{id: points, views: [hour, day, week, month, all]}]\n",
		"timezone: Asia/Shanghai\nweek_starts: sunday\nboards: [{id: p, segments: [country, team], views: [day, 7d, 30d], zones: [{title: G, top: 3}], lateness: 48h, keep: 2}]\n",
		"boards:\n  - id: lg\n    views: [day, all]\n    league: {cycle: day, tiers: [bronze, silver, {id: gold, title: Gold}], cohort_size: 5, promote: 2, demote: 2}\n",
		"timezone: America/St_Johns\nboards: [{id: lap, order: asc, update: best, ties: shared, decimals: 3, max_score: 3600, min_score: -5, views: [week, all]}]\n",
		"boards: [{id: s, shards: 3, views: [day, all]}]\nwebhooks: [{url: 'http://127.0.0.1:1/x', secret_env: HOOK_SECRET, events: [period.final]}]\n",
	} {
		f.Add(s)
	}
	at := []time.Time{
		time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC), // a DST change in Europe
		time.Date(2025, 12, 31, 23, 59, 59, 0, time.UTC),
	}
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := ranking.ParseConfig([]byte(text))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("refused without a message")
			}
			return
		}
		for _, b := range cfg.Boards {
			for _, v := range b.Views {
				if v.Kind == ranking.All || v.Kind == ranking.Window {
					continue
				}
				for _, now := range at {
					p := cfg.Calendar.PeriodAt(v, now)
					if now.Before(p.Start) || !now.Before(p.End) {
						t.Fatalf("%s at %v: period %v", v.Name, now, p)
					}
					if n := cfg.Calendar.Next(v, p); !n.Start.Equal(p.End) || cfg.Calendar.Prev(v, n).ID != p.ID {
						t.Fatalf("%s: %v follows %v", v.Name, n, p)
					}
				}
			}
		}
	})
}
