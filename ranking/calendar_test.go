package ranking_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
)

// MustLocation loads an IANA zone or stops the test.
func MustLocation(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatalf("load zone %s: %v", name, err)
	}
	return loc
}

// MustView parses a view name or stops the test.
func MustView(tb testing.TB, name string) ranking.View {
	tb.Helper()
	v, err := ranking.ParseView(name)
	if err != nil {
		tb.Fatalf("view %q: %v", name, err)
	}
	return v
}

// MustCalendar returns a calendar for the named zone.
func MustCalendar(tb testing.TB, zone string, weekStart time.Weekday) *ranking.Calendar {
	tb.Helper()
	return ranking.NewCalendar(MustLocation(tb, zone), weekStart)
}

// MustTime parses an RFC 3339 instant.
func MustTime(tb testing.TB, s string) time.Time {
	tb.Helper()
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		tb.Fatalf("instant %q: %v", s, err)
	}
	return t
}

func samePeriod(a, b ranking.Period) bool {
	return a.ID == b.ID && a.Start.Equal(b.Start) && a.End.Equal(b.End)
}

func showPeriod(p ranking.Period) string {
	if p.Start.IsZero() && p.End.IsZero() {
		return p.ID
	}
	return fmt.Sprintf("%s [%s, %s)", p.ID, p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339))
}

// checkPeriod compares p with an id and RFC 3339 bounds ("" for the zero
// instants of the all period).
func checkPeriod(tb testing.TB, p ranking.Period, id, start, end string) {
	tb.Helper()
	want := ranking.Period{ID: id}
	if start != "" {
		want.Start = MustTime(tb, start)
	}
	if end != "" {
		want.End = MustTime(tb, end)
	}
	if !samePeriod(p, want) {
		tb.Errorf("got %s, want %s", showPeriod(p), showPeriod(want))
	}
	if start != "" && p.Start.Location().String() != p.End.Location().String() {
		tb.Errorf("start and end in different zones: %v, %v", p.Start.Location(), p.End.Location())
	}
}

var weekStarts = []time.Weekday{time.Monday, time.Sunday}

// calendarZones are the zones every calendar property is checked in: DST in
// both hemispheres, a zone without DST, a half-hour shift, a zone whose clocks
// change at midnight, and a zone with a -hh:30 offset.
var calendarZones = []string{
	"UTC",
	"America/New_York",
	"Europe/London",
	"Asia/Shanghai",
	"Australia/Sydney",
	"Australia/Lord_Howe",
	"America/Santiago",
	"America/St_Johns",
}

func TestCalendarPeriodAt(t *testing.T) {
	t.Parallel() // pure computation
	tests := []struct {
		zone       string
		week       time.Weekday
		view       string
		at         string
		id         string
		start, end string
	}{
		// New York in November: standard time, the month began in daylight time.
		{"America/New_York", time.Monday, "hour", "2026-11-22T13:30:00-05:00", "2026-11-22T13", "2026-11-22T13:00:00-05:00", "2026-11-22T14:00:00-05:00"},
		{"America/New_York", time.Monday, "day", "2026-11-22T13:30:00-05:00", "2026-11-22", "2026-11-22T00:00:00-05:00", "2026-11-23T00:00:00-05:00"},
		{"America/New_York", time.Monday, "week", "2026-11-22T13:30:00-05:00", "2026-11-16", "2026-11-16T00:00:00-05:00", "2026-11-23T00:00:00-05:00"},
		{"America/New_York", time.Sunday, "week", "2026-11-22T13:30:00-05:00", "2026-11-22", "2026-11-22T00:00:00-05:00", "2026-11-29T00:00:00-05:00"},
		{"America/New_York", time.Monday, "month", "2026-11-22T13:30:00-05:00", "2026-11", "2026-11-01T00:00:00-04:00", "2026-12-01T00:00:00-05:00"},
		{"America/New_York", time.Monday, "all", "2026-11-22T13:30:00-05:00", "all", "", ""},
		{"America/New_York", time.Monday, "1d", "2026-11-22T13:30:00-05:00", "2026-11-22", "2026-11-22T00:00:00-05:00", "2026-11-23T00:00:00-05:00"},
		{"America/New_York", time.Monday, "7d", "2026-11-22T13:30:00-05:00", "2026-11-22", "2026-11-16T00:00:00-05:00", "2026-11-23T00:00:00-05:00"},
		{"America/New_York", time.Monday, "30d", "2026-11-22T13:30:00-05:00", "2026-11-22", "2026-10-24T00:00:00-04:00", "2026-11-23T00:00:00-05:00"},
		// The same UTC instant is a different local day in New York and Shanghai.
		{"America/New_York", time.Monday, "hour", "2026-11-22T02:00:00Z", "2026-11-21T21", "2026-11-21T21:00:00-05:00", "2026-11-21T22:00:00-05:00"},
		{"America/New_York", time.Monday, "day", "2026-11-22T02:00:00Z", "2026-11-21", "2026-11-21T00:00:00-05:00", "2026-11-22T00:00:00-05:00"},
		{"America/New_York", time.Sunday, "week", "2026-11-22T02:00:00Z", "2026-11-15", "2026-11-15T00:00:00-05:00", "2026-11-22T00:00:00-05:00"},
		{"Asia/Shanghai", time.Monday, "hour", "2026-11-22T02:00:00Z", "2026-11-22T10", "2026-11-22T10:00:00+08:00", "2026-11-22T11:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "day", "2026-11-22T02:00:00Z", "2026-11-22", "2026-11-22T00:00:00+08:00", "2026-11-23T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "week", "2026-11-22T02:00:00Z", "2026-11-16", "2026-11-16T00:00:00+08:00", "2026-11-23T00:00:00+08:00"},
		{"Asia/Shanghai", time.Sunday, "week", "2026-11-22T02:00:00Z", "2026-11-22", "2026-11-22T00:00:00+08:00", "2026-11-29T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "month", "2026-11-22T02:00:00Z", "2026-11", "2026-11-01T00:00:00+08:00", "2026-12-01T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "7d", "2026-11-22T02:00:00Z", "2026-11-22", "2026-11-16T00:00:00+08:00", "2026-11-23T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "all", "2026-11-22T02:00:00Z", "all", "", ""},
		// London in summer, just after local midnight (still June in UTC).
		{"Europe/London", time.Monday, "hour", "2026-07-01T00:30:00+01:00", "2026-07-01T00", "2026-07-01T00:00:00+01:00", "2026-07-01T01:00:00+01:00"},
		{"Europe/London", time.Monday, "day", "2026-07-01T00:30:00+01:00", "2026-07-01", "2026-07-01T00:00:00+01:00", "2026-07-02T00:00:00+01:00"},
		{"Europe/London", time.Monday, "week", "2026-07-01T00:30:00+01:00", "2026-06-29", "2026-06-29T00:00:00+01:00", "2026-07-06T00:00:00+01:00"},
		{"Europe/London", time.Sunday, "week", "2026-07-01T00:30:00+01:00", "2026-06-28", "2026-06-28T00:00:00+01:00", "2026-07-05T00:00:00+01:00"},
		{"Europe/London", time.Monday, "month", "2026-07-01T00:30:00+01:00", "2026-07", "2026-07-01T00:00:00+01:00", "2026-08-01T00:00:00+01:00"},
		{"Europe/London", time.Monday, "7d", "2026-07-01T00:30:00+01:00", "2026-07-01", "2026-06-25T00:00:00+01:00", "2026-07-02T00:00:00+01:00"},
		{"Europe/London", time.Monday, "400d", "2026-07-01T00:30:00+01:00", "2026-07-01", "2025-05-28T00:00:00+01:00", "2026-07-02T00:00:00+01:00"},
		// Bounds: a period's start belongs to it, its end to the next one.
		{"America/New_York", time.Monday, "day", "2026-11-23T00:00:00-05:00", "2026-11-23", "2026-11-23T00:00:00-05:00", "2026-11-24T00:00:00-05:00"},
		{"America/New_York", time.Monday, "day", "2026-11-22T23:59:59.999999999-05:00", "2026-11-22", "2026-11-22T00:00:00-05:00", "2026-11-23T00:00:00-05:00"},
		{"America/New_York", time.Monday, "hour", "2026-11-22T13:00:00-05:00", "2026-11-22T13", "2026-11-22T13:00:00-05:00", "2026-11-22T14:00:00-05:00"},
		// Month ends: 30 and 31 days, February, the leap day, the year end.
		{"Asia/Shanghai", time.Monday, "month", "2026-04-30T23:59:59+08:00", "2026-04", "2026-04-01T00:00:00+08:00", "2026-05-01T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "month", "2026-05-31T23:59:59+08:00", "2026-05", "2026-05-01T00:00:00+08:00", "2026-06-01T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "month", "2026-02-28T12:00:00+08:00", "2026-02", "2026-02-01T00:00:00+08:00", "2026-03-01T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "month", "2028-02-29T12:00:00+08:00", "2028-02", "2028-02-01T00:00:00+08:00", "2028-03-01T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "day", "2028-02-29T12:00:00+08:00", "2028-02-29", "2028-02-29T00:00:00+08:00", "2028-03-01T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "7d", "2028-03-03T12:00:00+08:00", "2028-03-03", "2028-02-26T00:00:00+08:00", "2028-03-04T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "month", "2026-12-31T23:59:59+08:00", "2026-12", "2026-12-01T00:00:00+08:00", "2027-01-01T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "hour", "2026-12-31T23:59:59+08:00", "2026-12-31T23", "2026-12-31T23:00:00+08:00", "2027-01-01T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "day", "2027-01-01T00:00:00+08:00", "2027-01-01", "2027-01-01T00:00:00+08:00", "2027-01-02T00:00:00+08:00"},
		// Weeks crossing a month and a year.
		{"Asia/Shanghai", time.Monday, "week", "2026-10-02T12:00:00+08:00", "2026-09-28", "2026-09-28T00:00:00+08:00", "2026-10-05T00:00:00+08:00"},
		{"Asia/Shanghai", time.Sunday, "week", "2026-10-02T12:00:00+08:00", "2026-09-27", "2026-09-27T00:00:00+08:00", "2026-10-04T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "week", "2027-01-01T12:00:00+08:00", "2026-12-28", "2026-12-28T00:00:00+08:00", "2027-01-04T00:00:00+08:00"},
		{"Asia/Shanghai", time.Sunday, "week", "2027-01-01T12:00:00+08:00", "2026-12-27", "2026-12-27T00:00:00+08:00", "2027-01-03T00:00:00+08:00"},
		{"Asia/Shanghai", time.Sunday, "week", "2027-01-03T00:00:00+08:00", "2027-01-03", "2027-01-03T00:00:00+08:00", "2027-01-10T00:00:00+08:00"},
		{"Asia/Shanghai", time.Monday, "7d", "2027-01-02T12:00:00+08:00", "2027-01-02", "2026-12-27T00:00:00+08:00", "2027-01-03T00:00:00+08:00"},
		// A week that holds the change to daylight time is an hour short.
		{"America/New_York", time.Sunday, "week", "2026-03-10T12:00:00-04:00", "2026-03-08", "2026-03-08T00:00:00-05:00", "2026-03-15T00:00:00-04:00"},
		{"America/New_York", time.Monday, "week", "2026-03-08T12:00:00-04:00", "2026-03-02", "2026-03-02T00:00:00-05:00", "2026-03-09T00:00:00-04:00"},
		{"America/New_York", time.Monday, "month", "2026-03-15T12:00:00-04:00", "2026-03", "2026-03-01T00:00:00-05:00", "2026-04-01T00:00:00-04:00"},
		// Santiago moves its clocks at midnight: that day starts at 01:00.
		{"America/Santiago", time.Monday, "day", "2026-09-06T12:00:00-03:00", "2026-09-06", "2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00"},
		{"America/Santiago", time.Sunday, "week", "2026-09-06T12:00:00-03:00", "2026-09-06", "2026-09-06T01:00:00-03:00", "2026-09-13T00:00:00-03:00"},
		{"America/Santiago", time.Monday, "day", "2026-04-04T23:30:00-04:00", "2026-04-04", "2026-04-04T00:00:00-03:00", "2026-04-05T00:00:00-04:00"},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%s/%s/%s/%s", tc.zone, tc.week, tc.view, tc.at)
		t.Run(name, func(t *testing.T) {
			cal := MustCalendar(t, tc.zone, tc.week)
			p := cal.PeriodAt(MustView(t, tc.view), MustTime(t, tc.at))
			checkPeriod(t, p, tc.id, tc.start, tc.end)
			if tc.start != "" && p.Start.Location().String() != tc.zone {
				t.Errorf("start in zone %v, want %s", p.Start.Location(), tc.zone)
			}
		})
	}
}

func TestCalendarAllPeriod(t *testing.T) {
	cal := MustCalendar(t, "America/New_York", time.Monday)
	all := MustView(t, "all")
	p := cal.PeriodAt(all, MustTime(t, "2026-11-22T13:30:00-05:00"))
	if !p.IsAll() || p.ID != ranking.AllPeriodID || !p.Start.IsZero() || !p.End.IsZero() {
		t.Fatalf("all period = %s", showPeriod(p))
	}
	if n := cal.Next(all, p); !samePeriod(n, p) {
		t.Errorf("Next(all) = %s", showPeriod(n))
	}
	if n := cal.Prev(all, p); !samePeriod(n, p) {
		t.Errorf("Prev(all) = %s", showPeriod(n))
	}
	if n := cal.Shift(all, p, -5); !samePeriod(n, p) {
		t.Errorf("Shift(all, -5) = %s", showPeriod(n))
	}
}

// TestCalendarDSTDays checks the days of 23 and 25 hours, and the half-hour
// shifts at Lord Howe Island.
func TestCalendarDSTDays(t *testing.T) {
	tests := []struct {
		zone, date string
		start, end string
		length     time.Duration
	}{
		{"America/New_York", "2026-03-08", "2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00", 23 * time.Hour},
		{"America/New_York", "2026-11-01", "2026-11-01T00:00:00-04:00", "2026-11-02T00:00:00-05:00", 25 * time.Hour},
		{"America/New_York", "2026-11-02", "2026-11-02T00:00:00-05:00", "2026-11-03T00:00:00-05:00", 24 * time.Hour},
		{"Europe/London", "2026-03-29", "2026-03-29T00:00:00Z", "2026-03-30T00:00:00+01:00", 23 * time.Hour},
		{"Europe/London", "2026-10-25", "2026-10-25T00:00:00+01:00", "2026-10-26T00:00:00Z", 25 * time.Hour},
		{"Australia/Sydney", "2026-04-05", "2026-04-05T00:00:00+11:00", "2026-04-06T00:00:00+10:00", 25 * time.Hour},
		{"Australia/Sydney", "2026-10-04", "2026-10-04T00:00:00+10:00", "2026-10-05T00:00:00+11:00", 23 * time.Hour},
		{"Australia/Lord_Howe", "2026-04-05", "2026-04-05T00:00:00+11:00", "2026-04-06T00:00:00+10:30", 24*time.Hour + 30*time.Minute},
		{"Australia/Lord_Howe", "2026-10-04", "2026-10-04T00:00:00+10:30", "2026-10-05T00:00:00+11:00", 23*time.Hour + 30*time.Minute},
		{"America/Santiago", "2026-09-06", "2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00", 23 * time.Hour},
		{"America/Santiago", "2026-04-04", "2026-04-04T00:00:00-03:00", "2026-04-05T00:00:00-04:00", 25 * time.Hour},
		{"Asia/Shanghai", "2026-03-08", "2026-03-08T00:00:00+08:00", "2026-03-09T00:00:00+08:00", 24 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.zone+"/"+tc.date, func(t *testing.T) {
			cal := MustCalendar(t, tc.zone, time.Monday)
			day := MustView(t, "day")
			p, err := cal.ParsePeriod(day, tc.date)
			if err != nil {
				t.Fatal(err)
			}
			checkPeriod(t, p, tc.date, tc.start, tc.end)
			if d := p.End.Sub(p.Start); d != tc.length {
				t.Errorf("length %v, want %v", d, tc.length)
			}
			// Every instant of the day, minute by minute, is in it.
			for at := p.Start; at.Before(p.End); at = at.Add(time.Minute) {
				if q := cal.PeriodAt(day, at); !samePeriod(q, p) {
					t.Fatalf("PeriodAt(%s) = %s", at.Format(time.RFC3339), showPeriod(q))
				}
			}
			// The 1d window is the day.
			if q := cal.PeriodAt(MustView(t, "1d"), p.Start); !samePeriod(q, p) {
				t.Errorf("1d window = %s", showPeriod(q))
			}
		})
	}
}

// TestCalendarDSTHours walks the hour periods across each change: the
// skipped hour has no period, the repeated one has two with distinct ids,
// the later carrying its UTC offset.
func TestCalendarDSTHours(t *testing.T) {
	type hour struct{ id, start, end string }
	tests := []struct {
		name, zone string
		hours      []hour
	}{
		{"new york spring forward", "America/New_York", []hour{
			{"2026-03-08T00", "2026-03-08T05:00:00Z", "2026-03-08T06:00:00Z"},
			{"2026-03-08T01", "2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z"},
			{"2026-03-08T03", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"},
			{"2026-03-08T04", "2026-03-08T08:00:00Z", "2026-03-08T09:00:00Z"},
		}},
		{"new york fall back", "America/New_York", []hour{
			{"2026-11-01T00", "2026-11-01T04:00:00Z", "2026-11-01T05:00:00Z"},
			{"2026-11-01T01", "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z"},
			{"2026-11-01T01-05:00", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"},
			{"2026-11-01T02", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z"},
		}},
		{"london spring forward", "Europe/London", []hour{
			{"2026-03-29T00", "2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z"},
			{"2026-03-29T02", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"},
			{"2026-03-29T03", "2026-03-29T02:00:00Z", "2026-03-29T03:00:00Z"},
		}},
		{"london fall back", "Europe/London", []hour{
			{"2026-10-25T00", "2026-10-24T23:00:00Z", "2026-10-25T00:00:00Z"},
			{"2026-10-25T01", "2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z"},
			{"2026-10-25T01+00:00", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"},
			{"2026-10-25T02", "2026-10-25T02:00:00Z", "2026-10-25T03:00:00Z"},
		}},
		{"sydney fall back", "Australia/Sydney", []hour{
			{"2026-04-05T01", "2026-04-04T14:00:00Z", "2026-04-04T15:00:00Z"},
			{"2026-04-05T02", "2026-04-04T15:00:00Z", "2026-04-04T16:00:00Z"},
			{"2026-04-05T02+10:00", "2026-04-04T16:00:00Z", "2026-04-04T17:00:00Z"},
			{"2026-04-05T03", "2026-04-04T17:00:00Z", "2026-04-04T18:00:00Z"},
		}},
		{"sydney spring forward", "Australia/Sydney", []hour{
			{"2026-10-04T01", "2026-10-03T15:00:00Z", "2026-10-03T16:00:00Z"},
			{"2026-10-04T03", "2026-10-03T16:00:00Z", "2026-10-03T17:00:00Z"},
			{"2026-10-04T04", "2026-10-03T17:00:00Z", "2026-10-03T18:00:00Z"},
		}},
		// Lord Howe Island moves by 30 minutes: the hour holding the change
		// is 90 minutes long and no id repeats.
		{"lord howe fall back", "Australia/Lord_Howe", []hour{
			{"2026-04-05T00", "2026-04-04T13:00:00Z", "2026-04-04T14:00:00Z"},
			{"2026-04-05T01", "2026-04-04T14:00:00Z", "2026-04-04T15:30:00Z"},
			{"2026-04-05T02", "2026-04-04T15:30:00Z", "2026-04-04T16:30:00Z"},
		}},
		{"lord howe spring forward", "Australia/Lord_Howe", []hour{
			{"2026-10-04T00", "2026-10-03T13:30:00Z", "2026-10-03T14:30:00Z"},
			{"2026-10-04T01", "2026-10-03T14:30:00Z", "2026-10-03T16:00:00Z"},
			{"2026-10-04T03", "2026-10-03T16:00:00Z", "2026-10-03T17:00:00Z"},
		}},
		{"santiago spring forward at midnight", "America/Santiago", []hour{
			{"2026-09-05T23", "2026-09-06T03:00:00Z", "2026-09-06T04:00:00Z"},
			{"2026-09-06T01", "2026-09-06T04:00:00Z", "2026-09-06T05:00:00Z"},
		}},
		{"santiago fall back at midnight", "America/Santiago", []hour{
			{"2026-04-04T23", "2026-04-05T02:00:00Z", "2026-04-05T03:00:00Z"},
			{"2026-04-04T23-04:00", "2026-04-05T03:00:00Z", "2026-04-05T04:00:00Z"},
			{"2026-04-05T00", "2026-04-05T04:00:00Z", "2026-04-05T05:00:00Z"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cal := MustCalendar(t, tc.zone, time.Monday)
			hv := MustView(t, "hour")
			p := cal.PeriodAt(hv, MustTime(t, tc.hours[0].start))
			var walked []ranking.Period
			for i, h := range tc.hours {
				if i > 0 {
					p = cal.Next(hv, p)
				}
				walked = append(walked, p)
				checkPeriod(t, p, h.id, h.start, h.end)
				// The id names the period back.
				q, err := cal.ParsePeriod(hv, h.id)
				if err != nil {
					t.Errorf("ParsePeriod(%q): %v", h.id, err)
				} else if !samePeriod(q, p) {
					t.Errorf("ParsePeriod(%q) = %s, want %s", h.id, showPeriod(q), showPeriod(p))
				}
			}
			for i := len(walked) - 1; i > 0; i-- {
				if q := cal.Prev(hv, walked[i]); !samePeriod(q, walked[i-1]) {
					t.Errorf("Prev(%s) = %s, want %s", walked[i].ID, showPeriod(q), showPeriod(walked[i-1]))
				}
			}
			if q := cal.Shift(hv, walked[0], len(walked)-1); !samePeriod(q, walked[len(walked)-1]) {
				t.Errorf("Shift(%d) = %s", len(walked)-1, showPeriod(q))
			}
			if q := cal.Shift(hv, walked[len(walked)-1], 1-len(walked)); !samePeriod(q, walked[0]) {
				t.Errorf("Shift(%d) = %s", 1-len(walked), showPeriod(q))
			}
		})
	}
}

// TestCalendarWithin holds Within to its definition (p is cur, later, or
// one of Shift(v, cur, -1) ... Shift(v, cur, -n)) for periods before, at
// and after cur, in every zone (and Pacific/Apia, which skipped a day),
// across DST changes.
func TestCalendarWithin(t *testing.T) {
	t.Parallel() // pure computation
	rng := rand.New(rand.NewPCG(3, 14))
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for _, zone := range append(calendarZones, "Pacific/Apia") {
		cal := MustCalendar(t, zone, time.Monday)
		for _, vn := range []string{"hour", "day", "week", "month", "7d", "30d", "all"} {
			v := MustView(t, vn)
			for range 20 {
				cur := cal.PeriodAt(v, time.Unix(from+rng.Int64N(366*86400), 0))
				if zone == "Pacific/Apia" {
					cur = cal.PeriodAt(v, time.Date(2012, 1, 1+rng.IntN(5), rng.IntN(24), 0, 0, 0, time.UTC))
				}
				n := []int{0, 1, 2, 5, 12, 30}[rng.IntN(6)]
				for d := -n - 3; d <= 2; d++ {
					p := cal.Shift(v, cur, d)
					want := !p.End.Before(cur.End)
					for j := 1; j <= n && !want; j++ {
						want = samePeriod(p, cal.Shift(v, cur, -j))
					}
					if got := cal.Within(v, p, cur, n); got != want {
						t.Fatalf("%s %s: Within(%s, cur %s, %d) = %v, want %v", zone, vn, showPeriod(p), showPeriod(cur), n, got, want)
					}
				}
			}
		}
	}
}

// TestCalendarTiling walks every view through 2026 in every zone: each
// period is non-empty and contains its own bounds, consecutive periods
// meet without gap or overlap, Prev undoes Next, and ids never repeat.
func TestCalendarTiling(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)
	for _, zone := range calendarZones {
		for _, ws := range weekStarts {
			for _, vn := range []string{"hour", "day", "week", "month"} {
				if ws == time.Sunday && vn != "week" {
					continue // only weeks depend on the first weekday
				}
				t.Run(fmt.Sprintf("%s/%s/%s", zone, ws, vn), func(t *testing.T) {
					cal := MustCalendar(t, zone, ws)
					v := MustView(t, vn)
					seen := map[string]bool{}
					for p := cal.PeriodAt(v, from); p.Start.Before(to); {
						if !p.End.After(p.Start) {
							t.Fatalf("empty period %s", showPeriod(p))
						}
						if seen[p.ID] {
							t.Fatalf("id %s repeats", p.ID)
						}
						seen[p.ID] = true
						if q := cal.PeriodAt(v, p.Start); !samePeriod(q, p) {
							t.Fatalf("PeriodAt(start of %s) = %s", showPeriod(p), showPeriod(q))
						}
						if q := cal.PeriodAt(v, p.End.Add(-time.Millisecond)); !samePeriod(q, p) {
							t.Fatalf("PeriodAt(end-1ms of %s) = %s", showPeriod(p), showPeriod(q))
						}
						n := cal.Next(v, p)
						if !n.Start.Equal(p.End) {
							t.Fatalf("after %s comes %s", showPeriod(p), showPeriod(n))
						}
						if q := cal.Prev(v, n); !samePeriod(q, p) {
							t.Fatalf("Prev(%s) = %s, want %s", showPeriod(n), showPeriod(q), showPeriod(p))
						}
						p = n
					}
				})
			}
		}
	}
}

// TestCalendarWindowTiling checks rolling windows through 2026: the window
// named by a day covers that day and the N-1 before it, and windows advance
// one day at a time.
func TestCalendarWindowTiling(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)
	for _, zone := range calendarZones {
		for _, n := range []int{1, 7, 30, 400} {
			t.Run(fmt.Sprintf("%s/%dd", zone, n), func(t *testing.T) {
				cal := MustCalendar(t, zone, time.Monday)
				v := MustView(t, fmt.Sprintf("%dd", n))
				day := MustView(t, "day")
				for p := cal.PeriodAt(v, from); p.Start.Before(to); {
					last, err := cal.ParsePeriod(day, p.ID)
					if err != nil {
						t.Fatalf("window id %q is not a day: %v", p.ID, err)
					}
					lastDate, err := time.Parse(time.DateOnly, p.ID)
					if err != nil {
						t.Fatal(err)
					}
					first, err := cal.ParsePeriod(day, lastDate.AddDate(0, 0, 1-n).Format(time.DateOnly))
					if err != nil {
						t.Fatal(err)
					}
					if !p.Start.Equal(first.Start) || !p.End.Equal(last.End) {
						t.Fatalf("window %s, want [%s, %s)", showPeriod(p), first.Start.Format(time.RFC3339), last.End.Format(time.RFC3339))
					}
					next := cal.Next(v, p)
					if want := cal.Next(day, last).ID; next.ID != want {
						t.Fatalf("after window %s comes %s, want %s", p.ID, next.ID, want)
					}
					if q := cal.Prev(v, next); !samePeriod(q, p) {
						t.Fatalf("Prev(%s) = %s, want %s", showPeriod(next), showPeriod(q), showPeriod(p))
					}
					if q := cal.PeriodAt(v, last.Start); !samePeriod(q, p) {
						t.Fatalf("PeriodAt(start of its last day) = %s, want %s", showPeriod(q), showPeriod(p))
					}
					p = next
				}
			})
		}
	}
}

// TestCalendarSkippedDay: Samoa skipped 2011-12-30 entirely. No period is
// empty, and Prev and Next agree around the gap.
func TestCalendarSkippedDay(t *testing.T) {
	cal := MustCalendar(t, "Pacific/Apia", time.Monday)
	for _, vn := range []string{"day", "7d", "week", "hour"} {
		t.Run(vn, func(t *testing.T) {
			v := MustView(t, vn)
			p := cal.PeriodAt(v, MustTime(t, "2011-12-27T00:00:00Z"))
			for p.Start.Before(MustTime(t, "2012-01-03T00:00:00Z")) {
				if !p.End.After(p.Start) {
					t.Fatalf("empty period %s", showPeriod(p))
				}
				if p.ID == "2011-12-30" {
					t.Errorf("a period is named after the skipped day: %s", showPeriod(p))
				}
				n := cal.Next(v, p)
				if q := cal.Prev(v, n); !samePeriod(q, p) {
					t.Fatalf("Prev(%s) = %s, want %s", showPeriod(n), showPeriod(q), showPeriod(p))
				}
				p = n
			}
		})
	}
	day := MustView(t, "day")
	p, err := cal.ParsePeriod(day, "2011-12-29")
	if err != nil {
		t.Fatal(err)
	}
	if n := cal.Next(day, p); n.ID != "2011-12-31" || !n.Start.Equal(p.End) {
		t.Errorf("the day after 2011-12-29 is %s", showPeriod(n))
	}
}

// TestCalendarCentury walks days and months from 2000 to 2100 in every zone.
func TestCalendarCentury(t *testing.T) {
	if testing.Short() {
		t.Skip("walks a hundred years")
	}
	from := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, zone := range calendarZones {
		for _, vn := range []string{"day", "month"} {
			t.Run(zone+"/"+vn, func(t *testing.T) {
				cal := MustCalendar(t, zone, time.Monday)
				v := MustView(t, vn)
				for p := cal.PeriodAt(v, from); p.Start.Before(to); {
					n := cal.Next(v, p)
					if !p.End.After(p.Start) || !n.Start.Equal(p.End) || n.ID <= p.ID {
						t.Fatalf("%s then %s", showPeriod(p), showPeriod(n))
					}
					p = n
				}
			})
		}
	}
}

func TestParsePeriod(t *testing.T) {
	t.Parallel() // pure computation
	const coarser = "coarser"
	tests := []struct {
		zone, view, in string
		id             string // "" when an error is expected
		errHas         string // part of the error message
	}{
		// Day view: a date, an hour, instants; not a month or "all".
		{"America/New_York", "day", "2026-11-22", "2026-11-22", ""},
		{"America/New_York", "day", "2026-11-22T13", "2026-11-22", ""},
		{"America/New_York", "day", "2026-11-22T03:00:00Z", "2026-11-21", ""},
		{"America/New_York", "day", "2026-11-22T05:00:00Z", "2026-11-22", ""},
		{"America/New_York", "day", "2026-11-22T03:00:00+08:00", "2026-11-21", ""},
		{"America/New_York", "day", "2026-11-22T10:00:00.123456789-05:00", "2026-11-22", ""},
		{"America/New_York", "day", "2026-11-22t03:00:00z", "2026-11-21", ""}, // RFC 3339 5.6: t and z too
		{"America/New_York", "day", "2026-11", "", coarser},
		{"America/New_York", "day", "all", "", coarser},
		// Week view.
		{"America/New_York", "week", "2026-11-22", "2026-11-16", ""},
		{"America/New_York", "week", "2026-11-16", "2026-11-16", ""},
		{"America/New_York", "week", "2026-11-22T23", "2026-11-16", ""},
		{"America/New_York", "week", "2026-11-23T04:59:59Z", "2026-11-16", ""},
		{"America/New_York", "week", "2026-11-23T05:00:00Z", "2026-11-23", ""},
		{"America/New_York", "week", "2026-11", "", coarser},
		{"America/New_York", "week", "all", "", coarser},
		// Month view.
		{"America/New_York", "month", "2026-11", "2026-11", ""},
		{"America/New_York", "month", "2026-11-30", "2026-11", ""},
		{"America/New_York", "month", "2026-11-30T23", "2026-11", ""},
		{"America/New_York", "month", "2026-12-01T04:59:59Z", "2026-11", ""},
		{"America/New_York", "month", "2026-12-01T05:00:00Z", "2026-12", ""},
		{"America/New_York", "month", "all", "", coarser},
		// Hour view: only an hour or an instant.
		{"America/New_York", "hour", "2026-11-22T13", "2026-11-22T13", ""},
		{"America/New_York", "hour", "2026-11-22T13:59:59-05:00", "2026-11-22T13", ""},
		{"America/New_York", "hour", "2026-11-22T18:00:00Z", "2026-11-22T13", ""},
		{"America/New_York", "hour", "2026-11-22", "", coarser},
		{"America/New_York", "hour", "2026-11", "", coarser},
		{"America/New_York", "hour", "all", "", coarser},
		// The repeated hour: plain is the first, the offset picks one.
		{"America/New_York", "hour", "2026-11-01T01", "2026-11-01T01", ""},
		{"America/New_York", "hour", "2026-11-01T01-04:00", "2026-11-01T01", ""},
		{"America/New_York", "hour", "2026-11-01T01-05:00", "2026-11-01T01-05:00", ""},
		{"America/New_York", "hour", "2026-11-01T01-06:00", "", "does not exist"},
		{"America/New_York", "hour", "2026-11-01T06:30:00Z", "2026-11-01T01-05:00", ""},
		{"America/New_York", "day", "2026-11-01T01-05:00", "2026-11-01", ""},
		// An hour that has an offset suffix but is not repeated.
		{"America/New_York", "hour", "2026-11-22T13-05:00", "2026-11-22T13", ""},
		{"America/New_York", "hour", "2026-11-22T13-04:00", "", "does not exist"},
		// The skipped hour has no period.
		{"America/New_York", "hour", "2026-03-08T02", "", "does not exist"},
		{"America/New_York", "hour", "2026-03-08T02-05:00", "", "does not exist"},
		{"America/New_York", "hour", "2026-03-08T02-04:00", "", "does not exist"},
		{"America/New_York", "day", "2026-03-08T02", "", "does not exist"},
		{"Europe/London", "hour", "2026-03-29T01", "", "does not exist"},
		{"Europe/London", "hour", "2026-10-25T01+00:00", "2026-10-25T01+00:00", ""},
		{"Europe/London", "hour", "2026-10-25T01 00:00", "2026-10-25T01+00:00", ""},
		// A + offset arrives from a query string as a space.
		{"Australia/Sydney", "hour", "2026-04-05T02", "2026-04-05T02", ""},
		{"Australia/Sydney", "hour", "2026-04-05T02+11:00", "2026-04-05T02", ""},
		{"Australia/Sydney", "hour", "2026-04-05T02+10:00", "2026-04-05T02+10:00", ""},
		{"Australia/Sydney", "hour", "2026-04-05T02 10:00", "2026-04-05T02+10:00", ""},
		{"Australia/Sydney", "hour", "2026-04-05T02:30:00 10:00", "2026-04-05T02+10:00", ""},
		{"Australia/Sydney", "day", "2026-04-05T02 10:00", "2026-04-05", ""},
		{"Australia/Sydney", "hour", "2026-10-04T02", "", "does not exist"},
		// At Lord Howe Island the change skips half an hour: 02:30 to 02:59
		// exists and lies in the 90-minute period of 01:00.
		{"Australia/Lord_Howe", "hour", "2026-10-04T02", "2026-10-04T01", ""},
		{"Australia/Lord_Howe", "hour", "2026-10-04T02:45:00+11:00", "2026-10-04T01", ""},
		{"Australia/Lord_Howe", "hour", "2026-10-04T02+11:00", "", "does not exist"},
		{"Australia/Lord_Howe", "hour", "2026-04-05T01", "2026-04-05T01", ""},
		{"Australia/Lord_Howe", "hour", "2026-04-05T01:45:00+10:30", "2026-04-05T01", ""},
		{"Australia/Lord_Howe", "hour", "2026-04-05T01+10:30", "", "does not exist"},
		// Window views take a date, an hour or an instant: the window ending that day.
		{"America/New_York", "7d", "2026-11-22", "2026-11-22", ""},
		{"America/New_York", "7d", "2026-11-22T13", "2026-11-22", ""},
		{"America/New_York", "7d", "2026-11-23T03:00:00Z", "2026-11-22", ""},
		{"America/New_York", "400d", "2026-11-22", "2026-11-22", ""},
		{"America/New_York", "7d", "2026-11", "", coarser},
		{"America/New_York", "7d", "all", "", coarser},
		// The all view takes anything valid.
		{"America/New_York", "all", "all", "all", ""},
		{"America/New_York", "all", "2026-11", "all", ""},
		{"America/New_York", "all", "2026-11-22", "all", ""},
		{"America/New_York", "all", "2026-11-22T13", "all", ""},
		{"America/New_York", "all", "2026-11-22T13:00:00Z", "all", ""},
		{"America/New_York", "all", "garbage", "", "invalid period"},
		{"America/New_York", "all", "1999-12", "", "2000 to 2099"},
		// Supported years: 2000 to 2099, by the local calendar for dates,
		// months and hours, by the instant for RFC 3339.
		{"UTC", "day", "2000-01-01", "2000-01-01", ""},
		{"UTC", "day", "2099-12-31", "2099-12-31", ""},
		{"UTC", "month", "2000-01", "2000-01", ""},
		{"UTC", "month", "2099-12", "2099-12", ""},
		{"UTC", "hour", "2000-01-01T00", "2000-01-01T00", ""},
		{"UTC", "hour", "2099-12-31T23", "2099-12-31T23", ""},
		{"UTC", "day", "2000-01-01T00:00:00Z", "2000-01-01", ""},
		{"UTC", "day", "2099-12-31T23:59:59.999Z", "2099-12-31", ""},
		{"UTC", "day", "1999-12-31", "", "2000 to 2099"},
		{"UTC", "month", "1999-12", "", "2000 to 2099"},
		{"UTC", "hour", "1999-12-31T23", "", "2000 to 2099"},
		{"UTC", "day", "2100-01-01", "", "2000 to 2099"},
		{"UTC", "month", "2100-01", "", "2000 to 2099"},
		{"UTC", "day", "1999-12-31T23:59:59Z", "", "2000 to 2099"},
		{"UTC", "day", "2100-01-01T00:00:00Z", "", "2000 to 2099"},
		{"UTC", "day", "0001-01-01", "", "2000 to 2099"},
		{"UTC", "day", "9999-12-31", "", "2000 to 2099"},
		{"Asia/Shanghai", "day", "2000-01-01", "2000-01-01", ""},
		{"Asia/Shanghai", "month", "2000-01", "2000-01", ""},
		{"Asia/Shanghai", "hour", "2000-01-01T00", "2000-01-01T00", ""},
		{"Asia/Shanghai", "day", "1999-12-31", "", "2000 to 2099"},
		{"Asia/Shanghai", "day", "2000-01-01T07:59:59+08:00", "", "2000 to 2099"},
		{"America/New_York", "day", "2099-12-31", "2099-12-31", ""},
		{"America/New_York", "hour", "2099-12-31T23", "2099-12-31T23", ""},
		{"America/New_York", "day", "2100-01-01", "", "2000 to 2099"},
		{"America/New_York", "day", "2099-12-31T23:00:00-05:00", "", "2000 to 2099"},
		// Invalid dates and garbage.
		{"UTC", "day", "2026-02-29", "", "invalid period"},
		{"UTC", "day", "2028-02-29", "2028-02-29", ""},
		{"UTC", "day", "2026-04-31", "", "invalid period"},
		{"UTC", "day", "2026-13-01", "", "invalid period"},
		{"UTC", "month", "2026-13", "", "invalid period"},
		{"UTC", "month", "2026-00", "", "invalid period"},
		{"UTC", "hour", "2026-11-22T24", "", "invalid period"},
		{"UTC", "hour", "2026-11-22T1", "", "invalid period"},
		{"UTC", "hour", "2026-11-22t13", "", "invalid period"},
		{"UTC", "hour", "2026-11-22T13:00", "", "invalid period"},
		{"UTC", "hour", "2026-11-22 13:00:00", "", "invalid period"},
		{"UTC", "hour", "2026-11-22T13:00:00", "", "invalid period"},
		{"UTC", "hour", "2026-11-22T13+5:000", "", "invalid period"},
		{"UTC", "hour", "2026-11-22T13+00:0x", "", "UTC offset"},
		{"UTC", "hour", "2026-11-22T13+-1:00", "", "UTC offset"},
		{"UTC", "hour", "2026-11-22T13+24:00", "", "UTC offset"},
		{"UTC", "hour", "2026-11-22T13Z", "", "invalid period"},
		{"UTC", "day", "", "", "invalid period"},
		{"UTC", "day", "now", "", "invalid period"},
		{"UTC", "day", "today", "", "invalid period"},
		{"UTC", "day", "ALL", "", "invalid period"},
		{"UTC", "day", "2026/11/22", "", "invalid period"},
		{"UTC", "day", "2026-1-22", "", "invalid period"},
		{"UTC", "day", "22-11-2026", "", "invalid period"},
		{"UTC", "day", " 2026-11-22", "", "invalid period"},
		{"UTC", "day", "2026-11-22 ", "", "invalid period"},
		{"UTC", "day", "+2026-11-2", "", "invalid period"},
		{"UTC", "day", "1764000000", "", "invalid period"},
		{"UTC", "day", "2026-11-22T13:00:00+25:00", "", "invalid period"},
		{"UTC", "month", "2026-11-", "", "invalid period"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%s/%q", tc.zone, tc.view, tc.in), func(t *testing.T) {
			cal := MustCalendar(t, tc.zone, time.Monday)
			v := MustView(t, tc.view)
			p, err := cal.ParsePeriod(v, tc.in)
			if tc.id == "" {
				if err == nil {
					t.Fatalf("got %s, want an error", showPeriod(p))
				}
				if code := ranking.ErrorCode(err); code != ranking.EINVALID {
					t.Errorf("error code %q, want %q (%v)", code, ranking.EINVALID, err)
				}
				if !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("error %q does not mention %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.ID != tc.id {
				t.Fatalf("got %s, want id %s", showPeriod(p), tc.id)
			}
			// What a parameter resolves to is a period PeriodAt gives (for a
			// window: at any instant of its last day).
			if !p.IsAll() {
				if q := cal.PeriodAt(v, p.End.Add(-time.Millisecond)); !samePeriod(q, p) {
					t.Errorf("got %s, but PeriodAt(its end - 1ms) = %s", showPeriod(p), showPeriod(q))
				}
			}
		})
	}
}

// TestParsePeriodRoundTrip parses back every id PeriodAt gives over a year,
// as is and as a query string delivers it ('+' turned into a space), and
// every period's start instant.
func TestParsePeriodRoundTrip(t *testing.T) {
	t.Parallel() // pure computation
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, zone := range calendarZones {
		for _, vn := range []string{"hour", "day", "week", "month", "7d", "all"} {
			t.Run(zone+"/"+vn, func(t *testing.T) {
				cal := MustCalendar(t, zone, time.Sunday)
				v := MustView(t, vn)
				check := func(p ranking.Period, in string) {
					t.Helper()
					q, err := cal.ParsePeriod(v, in)
					if err != nil {
						t.Fatalf("ParsePeriod(%q): %v", in, err)
					}
					if !samePeriod(q, p) {
						t.Fatalf("ParsePeriod(%q) = %s, want %s", in, showPeriod(q), showPeriod(p))
					}
				}
				for p := cal.PeriodAt(v, from); ; p = cal.Next(v, p) {
					check(p, p.ID)
					check(p, strings.ReplaceAll(p.ID, "+", " "))
					if p.IsAll() {
						break
					}
					if v.Kind != ranking.Window { // a window's start names an earlier window
						check(p, p.Start.Format(time.RFC3339))
						check(p, p.Start.UTC().Format(time.RFC3339Nano))
					}
					check(p, p.End.Add(-time.Millisecond).Format(time.RFC3339Nano))
					if !p.Start.Before(to) {
						break
					}
				}
			})
		}
	}
}

func TestMaxPeriodLength(t *testing.T) {
	t.Parallel() // pure computation
	const (
		h = time.Hour
		d = 24 * time.Hour
	)
	century := 36525 * d // 2000-01-01 to 2100-01-01
	tests := []struct {
		zone, view string
		want       time.Duration
	}{
		{"UTC", "hour", h},
		{"UTC", "day", d},
		{"UTC", "week", 7 * d},
		{"UTC", "month", 31 * d},
		{"UTC", "1d", d},
		{"UTC", "7d", 7 * d},
		{"UTC", "400d", 400 * d},
		{"UTC", "all", century},
		// The repeated hour is two periods, so no hour is longer than 1h;
		// the day, week and month that hold the change back gain an hour
		// (New York's October while DST ended in October, until 2006).
		{"America/New_York", "hour", h},
		{"America/New_York", "day", 25 * h},
		{"America/New_York", "week", 7*d + h},
		{"America/New_York", "month", 31*d + h},
		{"America/New_York", "7d", 7*d + h},
		{"America/New_York", "30d", 30*d + h},
		// 400 days from just before one November's change back hold the
		// next one too, and only one change forward.
		{"America/New_York", "400d", 400*d + h},
		{"America/New_York", "all", century},
		{"Europe/London", "hour", h},
		{"Europe/London", "day", 25 * h},
		{"Europe/London", "week", 7*d + h},
		{"Europe/London", "month", 31*d + h},
		// Shanghai has had no DST since 1991.
		{"Asia/Shanghai", "hour", h},
		{"Asia/Shanghai", "day", d},
		{"Asia/Shanghai", "week", 7 * d},
		{"Asia/Shanghai", "month", 31 * d},
		{"Asia/Shanghai", "400d", 400 * d},
		{"Asia/Shanghai", "all", century},
		// Lord Howe Island shifts by 30 minutes: the hour holding the change
		// back is 90 minutes long; until 2007 that was in March.
		{"Australia/Lord_Howe", "hour", h + 30*time.Minute},
		{"Australia/Lord_Howe", "day", d + 30*time.Minute},
		{"Australia/Lord_Howe", "week", 7*d + 30*time.Minute},
		{"Australia/Lord_Howe", "month", 31*d + 30*time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.zone+"/"+tc.view, func(t *testing.T) {
			cal := MustCalendar(t, tc.zone, time.Monday)
			if got := ranking.MaxPeriodLength(cal, MustView(t, tc.view)); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMaxPeriodLengthBruteForce compares maxPeriodLength with the longest
// period found by walking every period from 2000 to 2100 (windows from the
// lengths of their days, including days of 1999 that windows early in 2000
// reach back to).
func TestMaxPeriodLengthBruteForce(t *testing.T) {
	t.Parallel() // pure computation
	if testing.Short() {
		t.Skip("walks a hundred years")
	}
	from := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	// Iqaluit moved its clocks back by two hours in October 1999; Los
	// Angeles has windows holding one more change back than forward.
	zones := []string{"America/New_York", "America/Los_Angeles", "Australia/Lord_Howe", "America/Santiago", "America/Iqaluit", "Europe/Moscow"}
	for _, zone := range zones {
		t.Run(zone, func(t *testing.T) {
			cal := MustCalendar(t, zone, time.Monday)
			for _, vn := range []string{"day", "week", "month"} {
				v := MustView(t, vn)
				var want time.Duration
				for p := cal.PeriodAt(v, from); p.Start.Before(to); p = cal.Next(v, p) {
					want = max(want, p.End.Sub(p.Start))
				}
				if got := ranking.MaxPeriodLength(cal, v); got != want {
					t.Errorf("%s: got %v, want %v", vn, got, want)
				}
			}
			day := MustView(t, "day")
			var lengths []time.Duration // day lengths from 401 days before 2000
			var inRange []bool          // whether the day holds an instant of 2000 to 2100
			for p := cal.PeriodAt(day, from.AddDate(0, 0, -401)); p.Start.Before(to); p = cal.Next(day, p) {
				lengths = append(lengths, p.End.Sub(p.Start))
				inRange = append(inRange, p.End.After(from))
			}
			for _, n := range []int{7, 30, 100, 200, 300, 400} {
				var want, sum time.Duration
				for i := range lengths {
					sum += lengths[i]
					if i >= n {
						sum -= lengths[i-n]
					}
					if i >= n-1 && inRange[i] {
						want = max(want, sum)
					}
				}
				if got := ranking.MaxPeriodLength(cal, MustView(t, fmt.Sprintf("%dd", n))); got != want {
					t.Errorf("%dd: got %v, want %v", n, got, want)
				}
			}
		})
	}
}
