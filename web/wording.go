package web

import (
	"fmt"
	"strings"
	"time"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// viewLabel names a view in tabs and headings.
func viewLabel(v ranking.View) string {
	switch v.Kind {
	case ranking.Hour:
		return "Hour"
	case ranking.Day:
		return "Day"
	case ranking.Week:
		return "Week"
	case ranking.Month:
		return "Month"
	case ranking.All:
		return "All time"
	}
	if v.Days == 1 {
		return "Last day"
	}
	return fmt.Sprintf("Last %d days", v.Days)
}

// periodPhrase says which period a sentence is about: "this week",
// "the week of 16 Nov 2026".
func periodPhrase(v ranking.View, p ranking.Period, current bool, loc *time.Location) string {
	if current {
		switch v.Kind {
		case ranking.Hour:
			return "this hour"
		case ranking.Day:
			return "today"
		case ranking.Week:
			return "this week"
		case ranking.Month:
			return "this month"
		case ranking.All:
			return "of all time"
		}
		return fmt.Sprintf("in the last %d days", v.Days)
	}
	return "in " + periodInline(v, p, loc)
}

// periodInline names a period inside a sentence: "the week of 16 Nov 2026",
// "Monday 16 Nov 2026".
func periodInline(v ranking.View, p ranking.Period, loc *time.Location) string {
	switch v.Kind {
	case ranking.Week:
		return "the week of " + p.Start.In(loc).Format("2 Jan 2006")
	case ranking.Window:
		return "the " + periodLabel(v, p, loc)
	case ranking.All:
		return "all time"
	}
	return periodLabel(v, p, loc)
}

// previousPhrase names the period before the current one: "last week".
func previousPhrase(v ranking.View) string {
	switch v.Kind {
	case ranking.Hour:
		return "last hour"
	case ranking.Day, ranking.Window:
		return "yesterday"
	case ranking.Week:
		return "last week"
	case ranking.Month:
		return "last month"
	}
	return ""
}

// periodLabel and periodRange describe a period to a person.
func periodLabel(v ranking.View, p ranking.Period, loc *time.Location) string {
	s := p.Start.In(loc)
	switch v.Kind {
	case ranking.Hour:
		return s.Format("Mon 2 Jan 2006, 15:04") + "–" + p.End.In(loc).Format("15:04")
	case ranking.Day:
		return s.Format("Monday 2 Jan 2006")
	case ranking.Week:
		return "Week of " + s.Format("2 Jan 2006")
	case ranking.Month:
		return s.Format("January 2006")
	case ranking.All:
		return "All time"
	}
	last := p.End.In(loc).Add(-time.Second)
	return fmt.Sprintf("%d days to %s", v.Days, last.Format("2 Jan 2006"))
}

func periodRange(v ranking.View, p ranking.Period, loc *time.Location) string {
	switch v.Kind {
	case ranking.Week, ranking.Window:
		first, last := p.Start.In(loc), p.End.In(loc).Add(-time.Second)
		if first.Year() != last.Year() {
			return first.Format("2 Jan 2006") + " – " + last.Format("2 Jan 2006")
		}
		return first.Format("2 Jan") + " – " + last.Format("2 Jan 2006")
	case ranking.Hour:
		return "Times in " + zoneWords(loc, p.Start)
	}
	return ""
}

// zoneWords names the board's zone at t as a person says it: "UTC", or
// "Paris time (UTC+01:00)" (the city of the zone's name, then its offset).
func zoneWords(loc *time.Location, t time.Time) string {
	name := loc.String()
	_, off := t.In(loc).Zone()
	if name == "UTC" || name == "Etc/UTC" || (off == 0 && !strings.Contains(name, "/")) {
		return "UTC"
	}
	city := name[strings.LastIndex(name, "/")+1:]
	city = strings.ReplaceAll(city, "_", " ")
	offset := "UTC" + t.In(loc).Format("-07:00")
	if !strings.Contains(name, "/") { // "Local", "EST": no city to name
		return offset
	}
	return city + " time (" + offset + ")"
}

// segmentLabel is a segment as people read it: "Country: France",
// "Team: red" ("" for the whole board).
func segmentLabel(seg ranking.Segment) string {
	if seg.IsZero() {
		return ""
	}
	return segmentName(seg.Name) + ": " + segmentValue(seg.Name, seg.Value)
}

// segmentShort names a segment board after its board's title: the
// country alone for a country ("Points — France"), else the label.
func segmentShort(seg ranking.Segment) string {
	if _, ok := countryName(seg.Name, seg.Value); ok {
		return segmentValue(seg.Name, seg.Value)
	}
	return segmentLabel(seg)
}

// segmentName is a segment name in words: "country" is "Country",
// "skill_tier" is "Skill Tier".
func segmentName(name string) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == ' ' || r == '.' })
	for i, w := range words {
		words[i] = capitalize(w)
	}
	return strings.Join(words, " ")
}

// segmentValue is a segment value in words: a country-like segment's
// ISO 3166 code is the country's name ("FR" is France); other values are
// shown as written.
func segmentValue(name, value string) string {
	if c, ok := countryName(name, value); ok {
		return c
	}
	return value
}

// countryName is the country a value names when its segment is a country
// ("country", "country_code", "nation", "cc") and the value a known
// two-letter code, in either case.
func countryName(name, value string) (string, bool) {
	n := strings.ToLower(name)
	if !strings.Contains(n, "country") && n != "nation" && n != "cc" {
		return "", false
	}
	if len(value) != 2 {
		return "", false
	}
	c, ok := countryNames[strings.ToUpper(value)]
	return c, ok
}

// periodNav builds previous / next / current links for period p of a view
// read at Redis's now. Navigation stops where retention ends and at the
// current period; future periods are reachable by URL but not linked.
func (s *Server) periodNav(b *ranking.Board, v ranking.View, st ranking.Standing, link func(period string) string) views.PeriodNav {
	cal := s.cfg.Calendar
	loc := cal.Location()
	p := st.Period
	nav := views.PeriodNav{ID: p.ID, Label: periodLabel(v, p, loc), Range: periodRange(v, p, loc), Final: st.Final}
	if v.Kind == ranking.All {
		nav.IsCurrent, nav.Timeless = true, true
		return nav
	}
	cur := cal.PeriodAt(v, st.Now)
	nav.IsCurrent = p.ID == cur.ID
	nav.Upcoming = cur.End.Before(p.End) // a future period: never "closing"
	nav.CurrentURL = link("")
	if prev := cal.Prev(v, p); cal.Within(v, prev, cur, b.Keep) {
		nav.PrevURL = link(prev.ID)
	}
	if p.Start.Before(cur.Start) {
		next := cal.Next(v, p)
		if next.ID == cur.ID {
			nav.NextURL = link("")
		} else {
			nav.NextURL = link(next.ID)
		}
	}
	return nav
}
