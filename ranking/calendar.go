package ranking

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Calendar computes period boundaries and ids in one time zone. All
// arithmetic is done on whole Unix seconds and the zone's offset segments, so
// that days of 23 or 25 hours, midnights that do not exist, and local hours
// that happen twice are all handled by one mechanism rather than by special
// cases.
type Calendar struct {
	loc       *time.Location
	weekStart time.Weekday
	// segs covers the supported years with the zone's offset segments, so
	// lookups are a binary search instead of a tzdata rule evaluation.
	segs []segment
}

// NewCalendar returns a calendar for loc with weeks starting on weekStart.
func NewCalendar(loc *time.Location, weekStart time.Weekday) *Calendar {
	return &Calendar{loc: loc, weekStart: weekStart, segs: zoneSegments(loc)}
}

// Location returns the calendar's zone.
func (c *Calendar) Location() *time.Location { return c.loc }

// Supported instants: periods and events live in [2000-01-01, 2100-01-01) UTC.
var (
	minInstant = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxInstant = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Period is one period of a view: its canonical id and its [Start, End)
// instants in the board's zone. The all view has zero Start and End.
type Period struct {
	ID    string
	Start time.Time
	End   time.Time
}

// IsAll reports whether p is the single period of the all view.
func (p Period) IsAll() bool { return p.ID == AllPeriodID }

// AllPeriodID is the id of the all view's only period.
const AllPeriodID = "all"

var allPeriod = Period{ID: AllPeriodID}

// reach is how far (in seconds) a period holding an instant of the
// supported years can extend beyond them: a 400-day window, plus a day.
const reach = 401 * 86400

// zoneSegments lists the offset segments of loc over the supported years and
// reach on either side, so that a window ending early in 2000 still sees the
// changes of 1999 (extended to the past and future with the first and last
// offsets). It probes offsets every 6 hours and bisects each change to the
// second, rather than trusting Time.ZoneBounds, which returns bounds that do
// not contain the instant for some rule-based years (for example the end of
// 2040 in America/New_York).
func zoneSegments(loc *time.Location) []segment {
	offAt := func(u int64) int64 {
		_, off := time.Unix(u, 0).In(loc).Zone()
		return int64(off)
	}
	const step = 6 * 3600
	lo, hi := minInstant.Unix()-reach, maxInstant.Unix()+reach
	segs := []segment{{start: math.MinInt64 / 2, off: offAt(lo)}}
	prev := segs[0].off
	for u := lo + step; u < hi; u += step {
		off := offAt(u)
		if off == prev {
			continue
		}
		// the change happened in (u-step, u]: bisect to the first second
		a, b := u-step, u
		for b-a > 1 {
			m := a + (b-a)/2
			if offAt(m) == prev {
				a = m
			} else {
				b = m
			}
		}
		segs[len(segs)-1].end = b
		segs = append(segs, segment{start: b, off: off})
		prev = off
	}
	segs[len(segs)-1].end = math.MaxInt64 / 2
	return segs
}

// segment is a stretch of time [start, end) with one UTC offset (seconds).
type segment struct {
	start, end int64
	off        int64
}

func (c *Calendar) segmentAt(u int64) segment {
	i := sort.Search(len(c.segs), func(i int) bool { return c.segs[i].end > u })
	return c.segs[i]
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// wall returns the local wall clock of u, as seconds since the epoch as if
// the wall clock were UTC.
func (c *Calendar) wall(u int64) int64 { return u + c.segmentAt(u).off }

// hourFloor returns the latest hour boundary <= u. A boundary is an instant
// whose wall clock shows HH:00:00.
func (c *Calendar) hourFloor(u int64) int64 {
	for {
		seg := c.segmentAt(u)
		b := u - floorMod(u+seg.off, 3600)
		if b >= seg.start {
			return b
		}
		u = seg.start - 1
	}
}

// hourCeil returns the earliest hour boundary >= u.
func (c *Calendar) hourCeil(u int64) int64 {
	for {
		seg := c.segmentAt(u)
		r := floorMod(u+seg.off, 3600)
		b := u
		if r != 0 {
			b = u + 3600 - r
		}
		if b < seg.end {
			return b
		}
		u = seg.end
	}
}

// wallInstants returns, in order, every instant whose wall clock is exactly
// w: none inside a gap, two (or more) inside a repeated stretch.
func (c *Calendar) wallInstants(w int64) []int64 {
	var out []int64
	seg := c.segmentAt(w - 30*3600)
	for seg.start <= w+30*3600 {
		if u := w - seg.off; u >= seg.start && u < seg.end {
			out = append(out, u)
		}
		if seg.end >= math.MaxInt64/2 {
			break
		}
		seg = c.segmentAt(seg.end)
	}
	return out
}

// wallStart returns the earliest instant at which the wall clock has reached
// w: the instant showing w, or, when w falls into a gap, the transition that
// jumps over it.
func (c *Calendar) wallStart(w int64) int64 {
	seg := c.segmentAt(w - 30*3600)
	for {
		if seg.start+seg.off > w {
			return seg.start
		}
		if u := w - seg.off; u >= seg.start && u < seg.end {
			return u
		}
		seg = c.segmentAt(seg.end)
	}
}

// civil days: day numbers since 1970-01-01 and their wall seconds.
func dayWall(day int64) int64 { return day * 86400 }

func dayOf(wall int64) int64 { return floorDiv(wall, 86400) }

func dayDate(day int64) time.Time { return time.Unix(day*86400, 0).UTC() }

func dateDay(y int, m time.Month, d int) int64 {
	return dayOf(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix())
}

// dayStart is the instant the local date day begins.
func (c *Calendar) dayStart(day int64) int64 { return c.wallStart(dayWall(day)) }

// dayAt returns the local date whose [start, next start) contains u.
func (c *Calendar) dayAt(u int64) int64 {
	d := dayOf(c.wall(u))
	for c.dayStart(d+1) <= u {
		d++
	}
	for c.dayStart(d) > u {
		d--
	}
	return d
}

func (c *Calendar) weekFirstDay(day int64) int64 {
	wd := int64(dayDate(day).Weekday())
	return day - floorMod(wd-int64(c.weekStart), 7)
}

func monthFirstDay(day int64) int64 {
	t := dayDate(day)
	return dateDay(t.Year(), t.Month(), 1)
}

func nextMonthFirstDay(day int64) int64 {
	t := dayDate(day)
	return dateDay(t.Year(), t.Month()+1, 1)
}

func (c *Calendar) instant(u int64) time.Time { return time.Unix(u, 0).In(c.loc) }

// PeriodAt returns the period of view v that contains t.
func (c *Calendar) PeriodAt(v View, t time.Time) Period {
	u := floorDiv(t.UnixMilli(), 1000)
	switch v.Kind {
	case Hour:
		return c.hourPeriod(c.hourFloor(u))
	case Day:
		return c.dayPeriod(c.dayAt(u))
	case Week:
		return c.weekPeriod(c.weekFirstDay(c.dayAt(u)))
	case Month:
		return c.monthPeriod(monthFirstDay(c.dayAt(u)))
	case Window:
		return c.windowPeriod(v.Days, c.dayAt(u))
	default:
		return allPeriod
	}
}

func (c *Calendar) hourPeriod(start int64) Period {
	end := c.hourCeil(start + 1)
	w := c.wall(start)
	id := time.Unix(w, 0).UTC().Format("2006-01-02T15")
	// A repeated local hour: the later occurrences carry their UTC offset so
	// that ids stay unique.
	for _, u := range c.wallInstants(w) {
		if u < start {
			_, off := c.instant(start).Zone()
			id += formatOffset(off)
			break
		}
	}
	return Period{ID: id, Start: c.instant(start), End: c.instant(end)}
}

func formatOffset(off int) string {
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%c%02d:%02d", sign, off/3600, off/60%60)
}

func (c *Calendar) dayPeriod(day int64) Period {
	return Period{ID: dayDate(day).Format("2006-01-02"), Start: c.instant(c.dayStart(day)), End: c.instant(c.dayStart(day + 1))}
}

func (c *Calendar) weekPeriod(first int64) Period {
	return Period{ID: dayDate(first).Format("2006-01-02"), Start: c.instant(c.dayStart(first)), End: c.instant(c.dayStart(first + 7))}
}

func (c *Calendar) monthPeriod(first int64) Period {
	return Period{ID: dayDate(first).Format("2006-01"), Start: c.instant(c.dayStart(first)), End: c.instant(c.dayStart(nextMonthFirstDay(first)))}
}

// windowPeriod is the rolling window of n days whose last day is last.
func (c *Calendar) windowPeriod(n int, last int64) Period {
	return Period{ID: dayDate(last).Format("2006-01-02"), Start: c.instant(c.dayStart(last - int64(n) + 1)), End: c.instant(c.dayStart(last + 1))}
}

// Next returns the period of v that follows p (p itself for all).
func (c *Calendar) Next(v View, p Period) Period {
	if v.Kind == All {
		return p
	}
	return c.PeriodAt(v, p.End)
}

// Prev returns the period of v that precedes p (p itself for all).
func (c *Calendar) Prev(v View, p Period) Period {
	if v.Kind == All {
		return p
	}
	if v.Kind == Window {
		// The window ending on the day before p's last day: the day that
		// holds the last instant before that day begins (a day that a zone
		// skips entirely, like 2011-12-30 in Pacific/Apia, ends no window).
		last := c.dayAt(p.End.Unix() - 1)
		return c.PeriodAt(v, time.Unix(c.dayStart(last)-1, 0))
	}
	return c.PeriodAt(v, p.Start.Add(-time.Second))
}

// Shift returns the period n steps after p (before it when n < 0).
func (c *Calendar) Shift(v View, p Period, n int) Period {
	for ; n > 0; n-- {
		p = c.Next(v, p)
	}
	for ; n < 0; n++ {
		p = c.Prev(v, p)
	}
	return p
}

// Within reports whether period p of v is cur, one of the n periods
// before it (Shift(v, cur, -n) and on), or later: whether p is retained
// when a board keeps n periods. It walks forward from p, at most n
// periods: a period near cur costs a step or two however many periods
// the board keeps.
func (c *Calendar) Within(v View, p, cur Period, n int) bool {
	for range n {
		if !p.End.Before(cur.End) {
			return true
		}
		p = c.Next(v, p)
	}
	return !p.End.Before(cur.End)
}

// granularity of a period parameter, finest first.
type granularity int

const (
	gInstant granularity = iota
	gHour
	gDay
	gMonth
	gAll
)

// ParsePeriod resolves a period parameter for view v: a date (YYYY-MM-DD), a
// month (YYYY-MM), a local hour (YYYY-MM-DDTHH, optionally followed by the UTC
// offset that names the later occurrence of a repeated hour), an RFC 3339
// instant, or "all". A value coarser than the view is an EINVALID error. The
// empty string is not accepted here: "now" needs Redis's clock.
func (c *Calendar) ParsePeriod(v View, s string) (Period, error) {
	u, g, err := c.parsePeriodValue(s)
	if err != nil {
		return Period{}, err
	}
	if v.Kind == All {
		return allPeriod, nil
	}
	if g > v.finestParam() {
		return Period{}, Errorf(EINVALID, "period %q is coarser than the %s view; give a %s", s, v.Name, v.finestParam().example())
	}
	return c.PeriodAt(v, time.Unix(u, 0)), nil
}

// ParseInstant parses an RFC 3339 instant, whose "T" and "Z" may also be
// written in lower case (RFC 3339, section 5.6).
func ParseInstant(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, strings.ToUpper(s))
}

// CheckPeriodValue checks that s is a period parameter of some view (a
// month, date, local hour, RFC 3339 instant or "all"), before the view is
// known: whether it names one period of a given view is ParsePeriod's.
func (c *Calendar) CheckPeriodValue(s string) error {
	_, _, err := c.parsePeriodValue(s)
	return err
}

// finestParam is the coarsest parameter form that still names one period.
func (v View) finestParam() granularity {
	switch v.Kind {
	case Hour:
		return gHour
	case Day, Week, Window:
		return gDay
	case Month:
		return gMonth
	default:
		return gAll
	}
}

func (g granularity) example() string {
	switch g {
	case gHour:
		return "local hour like 2026-11-22T13, or an RFC 3339 instant"
	case gDay:
		return "date like 2026-11-22, a local hour, or an RFC 3339 instant"
	default:
		return "month like 2026-11, a date, a local hour, or an RFC 3339 instant"
	}
}

func (c *Calendar) parsePeriodValue(s string) (int64, granularity, error) {
	bad := func(why string) (int64, granularity, error) {
		return 0, 0, Errorf(EINVALID, "invalid period %q: %s", s, why)
	}
	if s == AllPeriodID {
		return 0, gAll, nil
	}
	// A '+' in a query string arrives as a space.
	s = strings.ReplaceAll(s, " ", "+")
	var u int64
	var g granularity
	year := 0 // the local year of a date, month or hour
	switch {
	case len(s) == 7:
		t, err := time.Parse("2006-01", s)
		if err != nil {
			return bad("want YYYY-MM, YYYY-MM-DD, YYYY-MM-DDTHH or an RFC 3339 instant")
		}
		u, g, year = c.dayStart(dateDay(t.Year(), t.Month(), 1)), gMonth, t.Year()
	case len(s) == 10:
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return bad("want YYYY-MM, YYYY-MM-DD, YYYY-MM-DDTHH or an RFC 3339 instant")
		}
		u, g, year = c.dayStart(dateDay(t.Year(), t.Month(), t.Day())), gDay, t.Year()
	case len(s) == 13 || (len(s) == 19 && (s[13] == '+' || s[13] == '-')):
		t, err := time.Parse("2006-01-02T15", s[:13])
		if err != nil {
			return bad("want YYYY-MM, YYYY-MM-DD, YYYY-MM-DDTHH or an RFC 3339 instant")
		}
		w := t.Unix()
		at := c.wallInstants(w)
		if len(s) == 19 {
			off, ok := parseOffset(s[13:])
			if !ok {
				return bad("the suffix after the hour must be a UTC offset like -05:00")
			}
			var match []int64
			for _, x := range at {
				if _, o := c.instant(x).Zone(); o == off {
					match = append(match, x)
				}
			}
			at = match
		} else if len(at) == 0 {
			// A shift of less than an hour can skip only the start of an
			// hour (02:00 to 02:30 at Lord Howe Island): the rest of it lies
			// in the period of the hour before, and names that period.
			if st := c.wallStart(w); c.wall(st) < w+3600 {
				at = []int64{st}
			}
		}
		if len(at) == 0 {
			return bad(fmt.Sprintf("that local hour does not exist in %s", c.loc))
		}
		u, g, year = at[0], gHour, t.Year()
	default:
		t, err := ParseInstant(s)
		if err != nil {
			return bad("want YYYY-MM, YYYY-MM-DD, YYYY-MM-DDTHH or an RFC 3339 instant")
		}
		u, g = floorDiv(t.UnixMilli(), 1000), gInstant
	}
	// A date, month or hour is checked by its local year, so that the
	// first day of 2000 east of UTC (which begins in 1999 UTC) is accepted;
	// an instant is checked as an instant.
	if year != 0 && (year < minInstant.Year() || year >= maxInstant.Year()) ||
		year == 0 && (u < minInstant.Unix() || u >= maxInstant.Unix()) {
		return bad("outside the supported years 2000 to 2099")
	}
	return u, g, nil
}

func parseOffset(s string) (int, bool) {
	if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' || !isDigits(s[1:3]) || !isDigits(s[4:6]) {
		return 0, false
	}
	h, err1 := strconv.Atoi(s[1:3])
	m, err2 := strconv.Atoi(s[4:6])
	if err1 != nil || err2 != nil || h > 23 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// maxPeriodLength returns the longest period of view v in this zone that
// holds an instant between 2000 and 2100 (the all view spans the whole
// range). Periods that contain no offset change have their nominal length;
// the others are measured.
func (c *Calendar) maxPeriodLength(v View) time.Duration {
	var nominal time.Duration
	switch v.Kind {
	case Hour:
		nominal = time.Hour
	case Day:
		nominal = 24 * time.Hour
	case Week:
		nominal = 7 * 24 * time.Hour
	case Month:
		nominal = 31 * 24 * time.Hour
	case Window:
		nominal = time.Duration(v.Days) * 24 * time.Hour
	default:
		return maxInstant.Sub(minInstant)
	}
	lo, hi := minInstant.Unix(), maxInstant.Unix()
	longest := nominal
	measure := func(p Period) {
		if d := p.End.Sub(p.Start); d > longest {
			longest = d
		}
	}
	if v.Kind == Window {
		// The first window of the range may hold changes from before it.
		measure(c.windowPeriod(v.Days, c.dayAt(lo)))
	}
	// c.segs holds every change from reach before the range to reach after
	// it, as far as a period holding an instant of the range can extend.
	for _, seg := range c.segs[:len(c.segs)-1] {
		for _, x := range []int64{seg.end - 1, seg.end} {
			if v.Kind != Window {
				if p := c.PeriodAt(v, time.Unix(x, 0)); p.Start.Unix() < hi && p.End.Unix() > lo {
					measure(p)
				}
				continue
			}
			// Windows overlap, so one window can hold several changes. As a
			// window slides by a day it loses its first day and gains a new
			// last one; the longest windows therefore either end on a day
			// that holds a change, begin on the day after one, or are the
			// first of the range.
			d := c.dayAt(x)
			for _, last := range []int64{d, d + int64(v.Days)} {
				if c.dayStart(last) < hi && c.dayStart(last+1) > lo {
					measure(c.windowPeriod(v.Days, last))
				}
			}
		}
	}
	return longest
}
