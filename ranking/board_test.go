package ranking_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/standings/standings/ranking"
)

func TestParseView(t *testing.T) {
	good := []struct {
		name string
		kind ranking.ViewKind
		days int
	}{
		{"hour", ranking.Hour, 0},
		{"day", ranking.Day, 0},
		{"week", ranking.Week, 0},
		{"month", ranking.Month, 0},
		{"all", ranking.All, 0},
		{"1d", ranking.Window, 1},
		{"7d", ranking.Window, 7},
		{"30d", ranking.Window, 30},
		{"100d", ranking.Window, 100},
		{"400d", ranking.Window, 400},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ranking.ParseView(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if v.Name != tc.name || v.Kind != tc.kind || v.Days != tc.days {
				t.Errorf("got %+v, want kind %v, days %d", v, tc.kind, tc.days)
			}
		})
	}
	bad := []string{
		"", "0d", "401d", "1000d", "07d", "00d", "d", "7D", "+7d", "-1d", "-0d", "weekly",
		"Day", "HOUR", " day", "day ", "7 d", " 7d", "7d ", "7dd", "1.5d", "1e2d", "0x7d",
		"hours", "days", "7w", "7", "dd", "99999999999999999999d", "all-time", "7\u0000d",
	}
	for _, name := range bad {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			v, err := ranking.ParseView(name)
			if err == nil {
				t.Fatalf("accepted as %+v", v)
			}
			if code := ranking.ErrorCode(err); code != ranking.EINVALID {
				t.Errorf("error code %q, want %q", code, ranking.EINVALID)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
				t.Errorf("error %q does not quote the view", err)
			}
		})
	}
}

const (
	max53    = 1<<53 - 1 // the largest scaled value accepted
	max53Str = "9007199254740991"
)

func TestParseScaled(t *testing.T) {
	tests := []struct {
		in       string
		decimals int
		want     int64
		errHas   string // non-empty: an error mentioning this is expected
	}{
		{"0", 0, 0, ""},
		{"-0", 0, 0, ""},
		{"0.0", 0, 0, ""},
		{"12", 0, 12, ""},
		{"-12", 0, -12, ""},
		{"12", 3, 12000, ""},
		{"12.5", 1, 125, ""},
		{"12.50", 1, 125, ""},
		{"12.500000", 1, 125, ""},
		{"-12.5", 1, -125, ""},
		{"12.0", 0, 12, ""},
		{"12.000000", 0, 12, ""},
		{"12.55", 1, 0, "decimal places"},
		{"12.5", 0, 0, "decimal places"},
		{"0.05", 1, 0, "decimal places"},
		{"123.456789", 6, 123456789, ""},
		{"0.1", 6, 100000, ""},
		{"0.000001", 6, 1, ""},
		{"-0.000001", 6, -1, ""},
		{"0.0000001", 6, 0, "decimal places"},
		{"0.0000000", 6, 0, ""},
		{"0.0000000", 0, 0, ""},
		// Exponents.
		{"1e3", 0, 1000, ""},
		{"1E3", 0, 1000, ""},
		{"1e+3", 0, 1000, ""},
		{"1.5E+2", 0, 150, ""},
		{"1.5e2", 1, 1500, ""},
		{"1.25e1", 1, 125, ""},
		{"1.25e1", 2, 1250, ""},
		{"1.25e1", 0, 0, "decimal places"},
		{"15e-1", 1, 15, ""},
		{"15e-1", 0, 0, "decimal places"},
		{"150e-2", 1, 15, ""},
		{"1e-6", 6, 1, ""},
		{"-1e-6", 6, -1, ""},
		{"1e-7", 6, 0, "decimal places"},
		{"1e0", 0, 1, ""},
		{"1e-0", 0, 1, ""},
		{"1e007", 0, 10000000, ""},
		{"0e1000", 0, 0, ""},
		{"0e99999999999999999999", 0, 0, ""},
		{"0e-1000", 6, 0, ""},
		{"0.000e5", 0, 0, ""},
		{"1e1000", 0, 0, "out of range"},
		{"1e99999999999999999999", 0, 0, "out of range"},
		{"1e-1000", 6, 0, "decimal places"},
		{"1e-99999999999999999999", 6, 0, "decimal places"},
		// The exact range: |scaled| < 2^53.
		{max53Str, 0, max53, ""},
		{"-" + max53Str, 0, -max53, ""},
		{"9007199254740992", 0, 0, "out of range"},
		{"-9007199254740992", 0, 0, "out of range"},
		{"9007199254740993", 0, 0, "out of range"},
		{"18446744073709551616", 0, 0, "out of range"},
		{"100000000000000000000000000000", 0, 0, "out of range"},
		{"9007199254.740991", 6, max53, ""},
		{"-9007199254.740991", 6, -max53, ""},
		{"9007199254.740992", 6, 0, "out of range"},
		{"9.007199254740991e15", 0, max53, ""},
		{"9.007199254740992e15", 0, 0, "out of range"},
		{"9007199254740991e-6", 6, max53, ""},
		{"1e15", 0, 1_000_000_000_000_000, ""},
		{"1e16", 0, 0, "out of range"},
		{"1e9", 6, 1_000_000_000_000_000, ""},
		{"1e10", 6, 0, "out of range"},
		{"0000000000000000000000000000001", 0, 1, ""},
		{"1.0000000000000000000000000000", 0, 1, ""},
		// Not numbers.
		{"", 0, 0, "empty"},
		{"-", 0, 0, "not a number"},
		{"+1", 0, 0, "not a number"},
		{".", 0, 0, "not a number"},
		{"-.", 0, 0, "not a number"},
		{"1..2", 1, 0, "not a number"},
		{"1.2.3", 1, 0, "not a number"},
		{"e3", 0, 0, "not a number"},
		{".e3", 0, 0, "not a number"},
		{"1e", 0, 0, "not a number"},
		{"1e+", 0, 0, "not a number"},
		{"1e-", 0, 0, "not a number"},
		{"1e++3", 0, 0, "not a number"},
		{"1e+-3", 0, 0, "not a number"},
		{"1e--3", 0, 0, "not a number"},
		{"1e3.5", 0, 0, "not a number"},
		{"1e3e3", 0, 0, "not a number"},
		{"1e 3", 0, 0, "not a number"},
		{"1e_3", 0, 0, "not a number"},
		{"0x10", 0, 0, "not a number"},
		{"Infinity", 0, 0, "not a number"},
		{"-Infinity", 0, 0, "not a number"},
		{"NaN", 0, 0, "not a number"},
		{"1,000", 0, 0, "not a number"},
		{"1_000", 0, 0, "not a number"},
		{" 1", 0, 0, "not a number"},
		{"1 ", 0, 0, "not a number"},
		{"--1", 0, 0, "not a number"},
		{"- 1", 0, 0, "not a number"},
		{"1-", 0, 0, "not a number"},
		{"\u0661", 0, 0, "not a number"}, // ARABIC-INDIC DIGIT ONE
		{"1e\u0663", 0, 0, "not a number"},
		{"\"1\"", 0, 0, "not a number"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q/%d", tc.in, tc.decimals), func(t *testing.T) {
			got, err := ranking.ParseScaled(tc.in, tc.decimals)
			if tc.errHas != "" {
				if err == nil {
					t.Fatalf("got %d, want an error", got)
				}
				if code := ranking.ErrorCode(err); code != ranking.EINVALID {
					t.Errorf("error code %q, want %q", code, ranking.EINVALID)
				}
				if !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("error %q does not mention %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestFormatScaled(t *testing.T) {
	tests := []struct {
		v        int64
		decimals int
		want     string
	}{
		{0, 0, "0"},
		{0, 6, "0"},
		{12, 0, "12"},
		{-12, 0, "-12"},
		{125, 1, "12.5"},
		{120, 1, "12"},
		{-125, 1, "-12.5"},
		{-5, 1, "-0.5"},
		{5, 2, "0.05"},
		{1230, 3, "1.23"},
		{123456789, 3, "123456.789"},
		{1, 6, "0.000001"},
		{-1, 6, "-0.000001"},
		{100000, 6, "0.1"},
		{1000000, 6, "1"},
		{max53, 0, max53Str},
		{-max53, 0, "-" + max53Str},
		{max53, 6, "9007199254.740991"},
		{-max53, 2, "-90071992547409.91"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d/%d", tc.v, tc.decimals), func(t *testing.T) {
			if got := ranking.FormatScaled(tc.v, tc.decimals); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestScaledRoundTrip formats and parses back values across the whole exact
// range, for every number of decimals.
func TestScaledRoundTrip(t *testing.T) {
	values := []int64{0, 1, -1, 5, 9, 10, 11, 99, 100, 101, 125, 999999, 1000000, 1000001,
		123456789, 1_000_000_000, 1_000_000_000_000_000, max53 - 1, max53}
	for d := 0; d <= 6; d++ {
		t.Run(fmt.Sprintf("decimals %d", d), func(t *testing.T) {
			for _, v := range values {
				for _, v := range []int64{v, -v} {
					s := ranking.FormatScaled(v, d)
					got, err := ranking.ParseScaled(s, d)
					if err != nil || got != v {
						t.Errorf("%d -> %q -> %d, %v", v, s, got, err)
					}
					if strings.Contains(s, "e") || (strings.Contains(s, ".") && strings.HasSuffix(s, "0")) {
						t.Errorf("%d formats as %q, not the shortest plain decimal", v, s)
					}
				}
			}
		})
	}
}

// TestBoardScore checks the board's own ParseScore and FormatScore, which use
// its decimals.
func TestBoardScore(t *testing.T) {
	cfg := mustBoardsFile(t, `
boards:
  - id: times
    decimals: 3
    order: asc
    min_score: 0
    max_score: 3600
`)
	b, _ := cfg.Board("times")
	v, err := b.ParseScore("12.5")
	if err != nil || v != 12500 {
		t.Errorf("ParseScore(12.5) = %d, %v", v, err)
	}
	if s := b.FormatScore(12500); s != "12.5" {
		t.Errorf("FormatScore(12500) = %q", s)
	}
	if _, err := b.ParseScore("12.3456"); err == nil {
		t.Error("ParseScore(12.3456) accepted four decimals")
	}
}

// FuzzParseScaled checks that whatever parses formats back to text that
// parses to the same value, never reaches 2^53, and, for text that is a JSON
// number, equals the exact rational value of the text.
func FuzzParseScaled(f *testing.F) {
	for _, s := range []string{"0", "-0", "12.5", "12.50", "12.55", "1e3", "1.5E+2", "-0.000001", "1e-7",
		max53Str, "9007199254740992", "9007199254.740991", "0e1000", "1e1000", "1e-1000", "", "-", ".5",
		"5.", "007", "1e+-3", "0.0000000", "123456789012345678901234567890e-20"} {
		for d := range uint8(7) {
			f.Add(s, d)
		}
	}
	f.Fuzz(func(t *testing.T, s string, d uint8) {
		decimals := int(d % 7)
		v, err := ranking.ParseScaled(s, decimals)
		exact, isNumber := jsonNumberValue(s, decimals)
		if err != nil {
			if code := ranking.ErrorCode(err); code != ranking.EINVALID {
				t.Fatalf("ParseScaled(%q, %d): error code %q", s, decimals, code)
			}
			if isNumber && exact != nil && exact.IsInt64() && exact.Int64() < 1<<53 && exact.Int64() > -(1<<53) {
				t.Fatalf("ParseScaled(%q, %d) refused %v: %v", s, decimals, exact, err)
			}
			return
		}
		if v >= 1<<53 || v <= -(1<<53) {
			t.Fatalf("ParseScaled(%q, %d) = %d, beyond 2^53", s, decimals, v)
		}
		if isNumber && (exact == nil || !exact.IsInt64() || exact.Int64() != v) {
			t.Fatalf("ParseScaled(%q, %d) = %d, want %v", s, decimals, v, exact)
		}
		out := ranking.FormatScaled(v, decimals)
		back, err := ranking.ParseScaled(out, decimals)
		if err != nil || back != v {
			t.Fatalf("ParseScaled(%q, %d) = %d formats as %q, which parses to %d, %v", s, decimals, v, out, back, err)
		}
	})
}

// jsonNumberValue reports whether s is a JSON number and, if so, its value
// times 10^decimals when that is a whole number (nil otherwise).
func jsonNumberValue(s string, decimals int) (*big.Int, bool) {
	if s == "" || !json.Valid([]byte(s)) || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return nil, false
	}
	// Exponents far beyond any exact value would make big.Rat slow; they are
	// out of range or have too many decimals unless the number is zero.
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if e := strings.TrimLeft(s[i+1:], "+-"); len(strings.TrimLeft(e, "0")) > 4 {
			if strings.Trim(s[:i], "-0.") == "" {
				return new(big.Int), true // zero
			}
			return nil, true
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, false
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	if !r.IsInt() {
		return nil, true
	}
	return r.Num(), true
}

// TestCodecTieResolution checks the tie resolution each view gets: the
// finest of 1ms, 1s, 1min and 1h such that
// (max-min+1) × 10^decimals × (floor(longest period / unit) + 2) <= 2^53.
func TestCodecTieResolution(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		board string
		want  map[string]string
	}{
		{
			// 1e9+1 values: an hour holds 3,600,002 ms (3.6e15 codes, fits);
			// a day needs seconds (86,402 × 1e9); a month of 31 days 2.7e15
			// at 1s; 2000 to 2100 is 876,602 hours (8.8e14) but 52,596,002
			// minutes.
			name: "default bounds",
			file: `
boards:
  - id: points
    views: [hour, day, week, month, all, 1d, 7d, 30d, 104d, 105d, 400d]
`,
			board: "points",
			// A window of N days holds sums within ±N·1e9 (2N·1e9+1
			// values): 7d fits 604,802 s (8.5e15), 30d needs minutes
			// (43,202 × 6e10 = 2.6e15), 104d no longer fits minutes
			// (149,762 × 2.08e11) and takes hours, as do 105d and 400d
			// (9,602 × 8e11 = 7.7e15).
			want: map[string]string{"hour": "1ms", "day": "1s", "week": "1s", "month": "1s", "all": "1h",
				"1d": "1s", "7d": "1s", "30d": "1min", "104d": "1h", "105d": "1h", "400d": "1h"},
		},
		{
			// 2^53 / 86,402 = 104,247,578,235.x values fit a 24-hour day at
			// 1s, but not New York's 25-hour day (90,002 units).
			name: "largest range for a 1s day in Shanghai",
			file: `
timezone: Asia/Shanghai
boards:
  - id: points
    max_score: 104247578234
    views: [day]
`,
			board: "points",
			want:  map[string]string{"day": "1s"},
		},
		{
			name: "the same range in New York, where a day can last 25 hours",
			file: `
timezone: America/New_York
boards:
  - id: points
    max_score: 104247578234
    views: [day]
`,
			board: "points",
			want:  map[string]string{"day": "1min"},
		},
		{
			name: "one value more than fits a 1s day",
			file: `
boards:
  - id: points
    max_score: 104247578235
    views: [day]
`,
			board: "points",
			want:  map[string]string{"day": "1min"},
		},
		{
			// Lord Howe Island's 90-minute hour: 2e9+1 values fit 3,600,002
			// units (7.2e15) but not 5,400,002 (1.08e16).
			name: "two billion values in UTC",
			file: `
boards:
  - id: points
    max_score: 2000000000
    views: [hour]
`,
			board: "points",
			want:  map[string]string{"hour": "1ms"},
		},
		{
			name: "two billion values at Lord Howe Island",
			file: `
timezone: Australia/Lord_Howe
boards:
  - id: points
    max_score: 2000000000
    views: [hour]
`,
			board: "points",
			want:  map[string]string{"hour": "1s"},
		},
		{
			// 3,155,760,002,000 ms × 1,001 values = 3.2e15.
			name: "a small range keeps milliseconds for all time",
			file: `
boards:
  - id: small
    min_score: 0
    max_score: 1000
    views: [day, month, all]
`,
			board: "small",
			want:  map[string]string{"day": "1ms", "month": "1ms", "all": "1ms"},
		},
		{
			// Decimals count: 0..1e6 with 3 decimals is 1e9+1 values.
			name: "decimals widen the range",
			file: `
boards:
  - id: points
    decimals: 3
    max_score: 1000000
    views: [hour, day, all]
`,
			board: "points",
			want:  map[string]string{"hour": "1ms", "day": "1s", "all": "1h"},
		},
		{
			// A negative minimum counts too: -5e8..5e8 is 1e9+1 values.
			name: "negative minimum",
			file: `
boards:
  - id: points
    min_score: -500000000
    max_score: 500000000
    views: [hour, day, all]
`,
			board: "points",
			want:  map[string]string{"hour": "1ms", "day": "1s", "all": "1h"},
		},
		{
			// 1e15+1 values: an hour needs 3 units, which fit only at 1h.
			name: "six decimals up to a billion, hour view",
			file: `
boards:
  - id: precise
    decimals: 6
    max_score: 1000000000
    views: [hour]
`,
			board: "precise",
			want:  map[string]string{"hour": "1h"},
		},
		{
			// 2^53 / 876,602 = 10,275,129,710.x values fit all time at 1h.
			name: "largest range for all time",
			file: `
boards:
  - id: points
    max_score: 10275129709
    views: [all]
`,
			board: "points",
			want:  map[string]string{"all": "1h"},
		},
		{
			name: "ties shared reports no resolution",
			file: `
boards:
  - id: shared
    ties: shared
    views: [hour, day, week, month, all, 7d]
`,
			board: "shared",
			want:  map[string]string{"hour": "", "day": "", "week": "", "month": "", "all": "", "7d": ""},
		},
		{
			// Without time, the whole exact range is available.
			name: "ties shared with the widest range",
			file: `
boards:
  - id: shared
    ties: shared
    min_score: -4503599627370495
    max_score: 4503599627370496
    views: [all]
`,
			board: "shared",
			want:  map[string]string{"all": ""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustBoardsFile(t, tc.file)
			b, ok := cfg.Board(tc.board)
			if !ok {
				t.Fatalf("no board %q", tc.board)
			}
			for view, want := range tc.want {
				if got := b.TieResolution(view); got != want {
					t.Errorf("view %s: resolution %q, want %q", view, got, want)
				}
			}
			if got := b.TieResolution("nope"); got != "" {
				t.Errorf("unknown view: resolution %q", got)
			}
		})
	}
}

// TestCodecRefused checks the boards whose encoding cannot be exact: the
// message names the board, the views field and the view.
func TestCodecRefused(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string
	}{
		{
			// 1e15+1 values × 26 hour units (a day at 1h) > 2^53.
			name: "six decimals up to a billion",
			file: `
boards:
  - id: precise
    decimals: 6
    max_score: 1000000000
`,
			want: []string{`board "precise"`, `field "views"`, `view "day"`, `view "week"`, `view "month"`, `view "all"`, "1h"},
		},
		{
			name: "one value more than fits all time",
			file: `
boards:
  - id: points
    max_score: 10275129710
    views: [month, all]
`,
			want: []string{`board "points"`, `field "views"`, `view "all"`},
		},
		{
			name: "the whole exact range with ties first",
			file: `
boards:
  - id: wide
    max_score: 9007199254740991
    views: [hour]
`,
			want: []string{`board "wide"`, `field "views"`, `view "hour"`},
		},
		{
			// 2^53 + 1 values do not fit even without time.
			name: "ties shared beyond 2^53 values",
			file: `
boards:
  - id: shared
    ties: shared
    min_score: -4503599627370496
    max_score: 4503599627370496
    views: [all]
`,
			want: []string{`board "shared"`, `field "views"`, `view "all"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems := mustConfigProblems(t, tc.file)
			text := strings.Join(problems, "\n")
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("problems do not mention %s:\n%s", w, text)
				}
			}
		})
	}
}
