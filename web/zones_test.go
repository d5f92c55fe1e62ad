package web_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// zonesBoards: a points board with two zones, one without, and a board of
// shared ties with zones.
const zonesBoards = `
timezone: UTC
boards:
  - {id: points, title: Points, views: [week, all], zones: [{title: Prize, top: 3}, {title: Top 10, top: 10}]}
  - {id: plain, title: Plain, views: [week]}
  - {id: shared, title: Shared, ties: shared, views: [week], zones: [{title: Prize, top: 2}]}
`

// MustZonesFixture is a fixture of zonesBoards with 12 members on points
// and plain (m01 leads with 120, m12 trails with 10) and, on shared,
// scores 9, 7, 7, 7, 5: the three 7s share rank 2 and so the prize.
func MustZonesFixture(tb testing.TB) *fixture {
	tb.Helper()
	f := MustFixtureOf(tb, zonesBoards, web.Options{WriteRate: -1})
	var evs []string
	for i := 1; i <= 12; i++ {
		evs = append(evs, fmt.Sprintf(`{"member":"m%02d","value":%d}`, i, 130-10*i))
	}
	for _, b := range []string{"points", "plain"} {
		MustOK(tb, f.do(tb, "POST", "/api/v1/boards/"+b+"/scores/batch", writeKey, `{"events":[`+strings.Join(evs, ",")+`]}`))
	}
	MustOK(tb, f.do(tb, "POST", "/api/v1/boards/shared/scores/batch", writeKey,
		`{"events":[{"member":"a","value":9},{"member":"b","value":7},{"member":"c","value":7},{"member":"d","value":7},{"member":"e","value":5}]}`))
	return f
}

// zonesOf reads each entry's "zone" of a list: the title, "null", or
// "absent" when the entry has no such field.
func zonesOf(tb testing.TB, body, list string) []string {
	tb.Helper()
	var v map[string]json.RawMessage
	var es []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		tb.Fatalf("%s: %v", body, err)
	}
	if err := json.Unmarshal(v[list], &es); err != nil {
		tb.Fatalf("%s: %v", body, err)
	}
	var out []string
	for _, e := range es {
		z, ok := e["zone"]
		switch {
		case !ok:
			out = append(out, "absent")
		case string(z) == "null":
			out = append(out, "null")
		default:
			var s string
			if err := json.Unmarshal(z, &s); err != nil {
				tb.Fatalf("zone %s: %v", z, err)
			}
			out = append(out, s)
		}
	}
	return out
}

// TestZonesAPI: list entries carry the zone of their rank, or null, on
// boards with zones (ties shared: every member of a shared rank in it),
// and no zone field at all on a board without zones.
func TestZonesAPI(t *testing.T) {
	f := MustZonesFixture(t)
	ten := "Top 10"
	for _, tc := range []struct {
		name, path, list string
		want             []string
	}{
		{"page", "/api/v1/boards/points/week", "entries", []string{"Prize", "Prize", "Prize", ten, ten, ten, ten, ten, ten, ten, "null", "null"}},
		{"page offset", "/api/v1/boards/points/all?offset=9&limit=2", "entries", []string{ten, "null"}},
		{"members", "/api/v1/boards/points/week?members=m12,m02,m04", "entries", []string{"Prize", ten, "null"}},
		{"card around", "/api/v1/boards/points/week/members/m10?around=1", "around", []string{ten, ten, "null"}},
		{"plain page", "/api/v1/boards/plain/week?limit=3", "entries", []string{"absent", "absent", "absent"}},
		{"plain card", "/api/v1/boards/plain/week/members/m02?around=1", "around", []string{"absent", "absent", "absent"}},
		{"shared ties", "/api/v1/boards/shared/week", "entries", []string{"Prize", "Prize", "Prize", "Prize", "null"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := zonesOf(t, MustOK(t, f.get(t, tc.path)).Body, tc.list)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("zones %q, want %q", got, tc.want)
			}
		})
	}
}

// TestZonesCSV: the export has a zone column on a board with zones (empty
// below them), and none on a board without.
func TestZonesCSV(t *testing.T) {
	f := MustZonesFixture(t)
	read := func(path string) [][]string {
		t.Helper()
		recs, err := csv.NewReader(strings.NewReader(MustOK(t, f.get(t, path)).Body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	recs := read("/boards/points/week.csv")
	if got := strings.Join(recs[0], ","); got != "rank,member,name,score,zone" {
		t.Fatalf("header %q", got)
	}
	var zones []string
	for _, r := range recs[1:] {
		zones = append(zones, r[4])
	}
	if got := strings.Join(zones, "|"); got != "Prize|Prize|Prize|Top 10|Top 10|Top 10|Top 10|Top 10|Top 10|Top 10||" {
		t.Errorf("zones %q", got)
	}
	recs = read("/boards/shared/week.csv")
	if got := recs[4][4] + "|" + recs[5][4]; got != "Prize|" {
		t.Errorf("shared ties: rank 2's last and rank 5 in %q", got)
	}
	if got := strings.Join(read("/boards/plain/week.csv")[0], ","); got != "rank,member,name,score" {
		t.Errorf("plain header %q", got)
	}
}

// zoneLines lists, for a table's rows, the zone line drawn after each
// ("" for none), checking the row's class agrees with its label.
func zoneLines(tb testing.TB, doc *goquery.Document) []string {
	tb.Helper()
	var out []string
	doc.Find(testid(views.TestRow)).Each(func(_ int, row *goquery.Selection) {
		label := strings.TrimSpace(row.Find(testid(views.TestZoneLine)).Text())
		if row.HasClass("zone-end") != (label != "") {
			tb.Errorf("row %s: class %q, label %q", row.AttrOr("data-member", ""), row.AttrOr("class", ""), label)
		}
		out = append(out, label)
	})
	return out
}

// TestZonesPageLines: board pages, widgets and card neighbours draw a
// named line after each zone's last row, and boards without zones none.
func TestZonesPageLines(t *testing.T) {
	f := MustZonesFixture(t)
	const prize, ten = "▲ Prize ends here", "▲ Top 10 ends here"
	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"board page", "/boards/points/week", []string{"", "", prize, "", "", "", "", "", "", ten, "", ""}},
		{"widget of the prize", "/embed/points/week?limit=3", []string{"", "", prize}},
		{"widget of 2", "/embed/points/week?limit=2", []string{"", ""}},
		{"card neighbours", "/boards/points/week/members/m03", []string{"", "", prize, "", "", "", "", ""}},
		{"plain board", "/boards/plain/week", make([]string, 12)},
		// The last 7 shares rank 2: the line follows it, not the first.
		{"shared ties", "/boards/shared/week", []string{"", "", "", prize, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := zoneLines(t, MustOK(t, f.get(t, tc.path)).Doc(t))
			for i := range got {
				got[i] = strings.Join(strings.Fields(got[i]), " ")
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("lines %q, want %q", got, tc.want)
			}
		})
	}
}

// TestZonesCard: the rank card says how far the next zone up is, in the
// board's format, and nothing in the first zone or without zones.
func TestZonesCard(t *testing.T) {
	f := MustZonesFixture(t)
	for _, tc := range []struct{ path, want string }{
		{"/boards/points/week/members/m05", "21 points to reach Prize"}, // 80 against rank 3's 100
		{"/boards/points/week/members/m12", "21 points to reach Top 10"},
		{"/boards/points/week/members/m11", "11 points to reach Top 10"},
		{"/boards/points/week/members/m02", ""},
		{"/boards/plain/week/members/m12", ""},
		{"/boards/shared/week/members/e", "2 points to reach Prize"}, // equal to the shared rank 2 is enough
	} {
		t.Run(tc.path, func(t *testing.T) {
			got := strings.TrimSpace(MustOK(t, f.get(t, tc.path)).Doc(t).Find(testid(views.TestCardZone)).Text())
			if got != tc.want {
				t.Errorf("zone line %q, want %q", got, tc.want)
			}
		})
	}
}
