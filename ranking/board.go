package ranking

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ViewKind is the shape of a view's periods.
type ViewKind int

// View kinds.
const (
	Hour ViewKind = iota
	Day
	Week
	Month
	All
	Window // rolling "last N days", today included
)

// View is one way of slicing a board in time: a calendar period, all time,
// or a rolling window of Days days.
type View struct {
	Name string
	Kind ViewKind
	Days int // window length for Window views
}

// ParseView parses a view name: hour, day, week, month, all, or Nd with
// 1 <= N <= 400.
func ParseView(name string) (View, error) {
	switch name {
	case "hour":
		return View{Name: name, Kind: Hour}, nil
	case "day":
		return View{Name: name, Kind: Day}, nil
	case "week":
		return View{Name: name, Kind: Week}, nil
	case "month":
		return View{Name: name, Kind: Month}, nil
	case "all":
		return View{Name: name, Kind: All}, nil
	}
	if n, ok := strings.CutSuffix(name, "d"); ok && n != "" && n[0] != '0' && n[0] != '+' {
		if days, err := strconv.Atoi(n); err == nil && days >= 1 && days <= 400 {
			return View{Name: name, Kind: Window, Days: days}, nil
		}
		return View{}, Errorf(EINVALID, "view %q: a rolling window is Nd with N from 1 to 400", name)
	}
	return View{}, Errorf(EINVALID, "unknown view %q: want hour, day, week, month, all or Nd (1 <= N <= 400)", name)
}

// Order says which scores rank first.
type Order string

// Orders.
const (
	Desc Order = "desc" // higher scores rank first
	Asc  Order = "asc"  // lower scores rank first
)

// Update is how an event's value combines with the stored score.
type Update string

// Update policies.
const (
	Increment Update = "increment" // add
	Best      Update = "best"      // keep the better
	Latest    Update = "latest"    // replace with the newest by event time
)

// Ties is how equal scores rank.
type Ties string

// Tie policies.
const (
	TiesFirst  Ties = "first"  // who reached the score first ranks higher
	TiesShared Ties = "shared" // equal scores share a rank
)

// Board is one configured leaderboard. Scores are carried as integers in
// units of 10^-Decimals ("scaled"), so that every value is exact.
type Board struct {
	ID    string
	Title string
	// Unit names what scores count on pages ("reads", "km"); Format is how
	// pages show them: "number" (default) or "duration" (a score in
	// seconds shown as 1:02.250). The API and CSV keep plain numbers.
	Unit     string
	Format   string
	Order    Order
	Update   Update
	Ties     Ties
	Decimals int
	Min, Max int64 // bounds, scaled
	MaxStep  int64 // largest |value| of one increment event, scaled; 0 = no limit
	Views    []View
	Keep     int
	Lateness time.Duration
	// Stream makes the board also take events from its ingest stream
	// (see RunStreamConsumer).
	Stream bool
	// Segments are the names an event may tag itself with (country,
	// team); each (name, value) is a segment board (see Segment).
	Segments []string

	// Zones are named lines after ranks (contract 16), drawn by pages.
	Zones []Zone
	// League, when set, splits each round into cohorts per tier (see
	// league.go).
	League *League

	// Shards spreads the board's members over this many hash tags (1..64,
	// see shard.go); 1 keeps every key under the board's own tag.
	Shards int

	ResultsTop  int // entries in a recorded result (1..1000)
	ResultsKeep int // recorded results kept per view; 0 records none

	codecs map[string]codec // by view name, derived at load
	tags   []string         // the shards' hash tags, derived at load (shard.go)
}

// View returns the board's view with the given name.
func (b *Board) View(name string) (View, bool) {
	for _, v := range b.Views {
		if v.Name == name {
			return v, true
		}
	}
	return View{}, false
}

// TieResolution returns the view's tie-break unit ("1ms", "1s", "1min",
// "1h"), or "" for ties: shared.
func (b *Board) TieResolution(view string) string {
	cd, ok := b.codecs[view]
	if !ok || b.Ties == TiesShared {
		return ""
	}
	return cd.unit.name
}

// FormatScore renders a scaled score as the shortest exact decimal.
func (b *Board) FormatScore(v int64) string { return formatScaled(v, b.Decimals) }

// ParseScore parses a decimal number (JSON number syntax, exponent allowed)
// into a scaled score, refusing more than Decimals decimal places.
func (b *Board) ParseScore(s string) (int64, error) { return parseScaled(s, b.Decimals) }

var pow10 = [...]int64{1, 10, 100, 1000, 10000, 100000, 1000000}

func formatScaled(v int64, decimals int) string {
	if decimals == 0 {
		return strconv.FormatInt(v, 10)
	}
	neg := v < 0
	var u uint64
	if neg {
		u = uint64(-v)
	} else {
		u = uint64(v)
	}
	p := uint64(pow10[decimals])
	ip, fp := u/p, u%p
	s := strconv.FormatUint(ip, 10)
	if fp != 0 {
		f := fmt.Sprintf("%0*d", decimals, fp)
		s += "." + strings.TrimRight(f, "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// maxScaled bounds every scaled value so that sums and codes stay exact in
// a double.
const maxScaled = 1 << 53

// parseScaled parses JSON-number text exactly: no float ever touches it.
func parseScaled(s string, decimals int) (int64, error) {
	bad := func(why string) (int64, error) { return 0, Errorf(EINVALID, "value %s: %s", s, why) }
	if s == "" {
		return bad("empty")
	}
	i := 0
	neg := false
	if s[0] == '-' {
		neg, i = true, 1
	}
	var digits []byte
	exp := 0
	seenDigit, seenDot := false, false
	for ; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= '0' && ch <= '9':
			seenDigit = true
			digits = append(digits, ch)
			if seenDot {
				exp--
			}
		case ch == '.' && !seenDot:
			seenDot = true
		case (ch == 'e' || ch == 'E') && seenDigit:
			e, ok := parseExponent(s[i+1:])
			if !ok {
				return bad("not a number")
			}
			exp += e
			i = len(s)
		default:
			return bad("not a number")
		}
	}
	if !seenDigit {
		return bad("not a number")
	}
	// value = digits × 10^exp; scaled = digits × 10^(exp+decimals)
	shift := exp + decimals
	for shift < 0 {
		if len(digits) == 0 || digits[len(digits)-1] != '0' {
			if allZero(digits) {
				return 0, nil
			}
			return bad(fmt.Sprintf("more than %d decimal places", decimals))
		}
		digits = digits[:len(digits)-1]
		shift++
	}
	digits = []byte(strings.TrimLeft(string(digits), "0"))
	if len(digits) == 0 {
		return 0, nil // zero, whatever its exponent
	}
	if len(digits)+shift > 16 {
		return bad("out of range")
	}
	var v int64
	for _, d := range digits {
		v = v*10 + int64(d-'0')
	}
	for ; shift > 0; shift-- {
		v *= 10
	}
	if v >= maxScaled {
		return bad("out of range")
	}
	if neg {
		v = -v
	}
	return v, nil
}

// parseExponent reads the exponent of a JSON number: an optional sign and at
// least one digit. Its magnitude is capped (far beyond any exact value) so
// that it cannot overflow.
func parseExponent(s string) (int, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "" {
		return 0, false
	}
	e := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		if e < 1_000_000 {
			e = e*10 + int(s[i]-'0')
		}
	}
	if neg {
		e = -e
	}
	return e, true
}

func allZero(d []byte) bool {
	for _, c := range d {
		if c != '0' {
			return false
		}
	}
	return true
}

// tieUnit is one tie-break resolution.
type tieUnit struct {
	name string
	ms   int64
}

var tieUnits = []tieUnit{{"1ms", 1}, {"1s", 1000}, {"1min", 60_000}, {"1h", 3_600_000}}

// codec maps (score, tie time) to a Redis sorted-set score and back, for
// one view. Codes sort ascending in rank order, so ZRANGE lists a view best
// first and equal codes fall back to member id ascending (Redis compares
// members bytewise), exactly the contract's last tie-break.
//
//	code = rankValue × span + (tieUnit − base)
//
// where rankValue = hi − v (desc) or v − lo (asc) over the view's value
// range [lo, hi], the time part counts tie units from the period's start,
// and span is the number of units the longest period can hold. Every code
// is below 2^53, so it is exact in a double. With ties: shared the time
// part is absent (span = 1).
//
// Calendar views hold [Min, Max]. A rolling window of N days is the sum of
// N day totals, each within ±S (see dayBound), so it holds [−N·S, N·S]:
// every sum it can reach reads back exactly, also one that drifted out of
// [Min, Max] when a negative day left it.
type codec struct {
	unit   tieUnit
	span   int64 // time units per value step; 1 for ties: shared
	lo, hi int64 // the value range the codes hold, scaled
}

// dayBound is S, the bound of every member's day total (its net change on
// one local day) on a board with rolling windows: the largest of |Min|,
// |Max| and Max − Min. Any score within [Min, Max] can be reached from any
// other in one day, and no more, so windows need room for N·S each way.
func (b *Board) dayBound() int64 {
	return max(b.Max-b.Min, b.Max, -b.Max, b.Min, -b.Min)
}

// valueRange is the range of values the codes of view v hold.
func (b *Board) valueRange(v View) (lo, hi int64) {
	switch {
	case v == dayTotals:
		return -b.dayBound(), b.dayBound()
	case v.Kind == Window:
		return -int64(v.Days) * b.dayBound(), int64(v.Days) * b.dayBound()
	}
	return b.Min, b.Max
}

// newCodec picks the finest unit that fits the view's value range and its
// longest period into 53 bits.
func newCodec(b *Board, v View, maxLen time.Duration) (codec, bool) {
	lo, hi := b.valueRange(v)
	values := uint64(hi-lo) + 1
	if b.Ties == TiesShared {
		return codec{span: 1, lo: lo, hi: hi}, values <= maxScaled
	}
	for _, u := range tieUnits {
		// +2: a period need not start on a unit boundary, so it can touch
		// one more unit at each end.
		span := uint64(maxLen.Milliseconds()/u.ms) + 2
		if span <= maxScaled && values <= maxScaled/span {
			return codec{unit: u, span: int64(span), lo: lo, hi: hi}, true
		}
	}
	return codec{}, false
}

// valueOf is the score rankValue steps from the best end of the codec's
// range.
func (b *Board) valueOf(cd codec, rankValue int64) int64 {
	if b.Order == Desc {
		return cd.hi - rankValue
	}
	return cd.lo + rankValue
}

// decode splits a code into the scaled score and the time part. Floor
// division, as in lib.lua's split, so no code reads back one off.
func (b *Board) decode(view string, code float64) (v int64, t int64) {
	cd := b.codecs[view]
	c := int64(code)
	q := floorDiv(c, cd.span)
	return b.valueOf(cd, q), c - q*cd.span
}
