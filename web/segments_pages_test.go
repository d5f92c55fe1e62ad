package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// TestSegmentPages: the board page, rank card, embed and member search
// take segment=NAME:VALUE; every link of a segment board's page keeps it;
// the picker offers the values seen; the card shows the member's rank in
// each segment board it belongs to.
func TestSegmentPages(t *testing.T) {
	f := MustFixtureOf(t, segmentBoards, web.Options{WriteRate: -1})
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey,
		`{"events":[{"member":"ann","value":5,"name":"Ann","segments":{"country":"FR","team":"red"}},{"member":"bob","value":7,"segments":{"country":"DE"}},{"member":"cy","value":3,"segments":{"country":"FR"}},{"member":"dee","value":9}]}`))
	const fr = "segment=country%3AFR"

	doc := MustOK(t, f.get(t, "/boards/points/day?segment=country:FR")).Doc(t)
	if got := strings.Join(strings.Fields(doc.Find("h1").Text()), " "); !strings.HasPrefix(got, "points — France") {
		t.Errorf("heading %q", got)
	}
	if got := tableRows(doc.Selection); fmt.Sprint(got) != "[1 ann 5 2 cy 3]" {
		t.Errorf("FR rows %v", got)
	}
	links := func(sel string) []string {
		var out []string
		doc.Find(sel).Each(func(_ int, s *goquery.Selection) { out = append(out, s.AttrOr("href", "")) })
		return out
	}
	for _, sel := range []string{"[data-testid=view-tabs] a", testid(views.TestRow) + " a", testid(views.TestPeriodPrev), testid(views.TestCSV), ".exports a:not([data-testid=results-link])"} {
		got := links(sel)
		if len(got) == 0 {
			t.Errorf("no links %s", sel)
		}
		for _, l := range got {
			if !strings.Contains(l, fr) {
				t.Errorf("%s link %q drops the segment", sel, l)
			}
		}
	}
	if ws := doc.Find("#"+views.IDLiveStatus).AttrOr("data-ws", ""); !strings.Contains(ws, fr) {
		t.Errorf("live feed %q", ws)
	}
	if v := doc.Find(`form[role=search] input[name=segment]`).AttrOr("value", ""); v != "country:FR" {
		t.Errorf("search keeps segment %q", v)
	}
	var opts []string
	doc.Find(testid(views.TestSegmentSelect) + " option").Each(func(_ int, s *goquery.Selection) {
		o := s.AttrOr("value", "")
		if _, sel := s.Attr("selected"); sel {
			o += "*"
		}
		opts = append(opts, o)
	})
	// Countries by name (France before Germany), not by code.
	if got := strings.Join(opts, " "); got != " country:FR* country:DE team:red" {
		t.Errorf("picker options %q", got)
	}
	if whole := doc.Find(testid(views.TestSegmentWhole)).AttrOr("href", ""); whole != "/boards/points/day" {
		t.Errorf("whole board link %q", whole)
	}

	whole := MustOK(t, f.get(t, "/boards/points/day")).Doc(t)
	if got := tableRows(whole.Selection); len(got) != 4 {
		t.Errorf("whole board rows %v", got)
	}
	if sel := whole.Find(testid(views.TestSegmentSelect)+" option[selected]").AttrOr("value", "?"); sel != "" {
		t.Errorf("whole board picker selects %q", sel)
	}
	if whole.Find(testid(views.TestSegmentTitle)).Length() != 0 {
		t.Error("whole board page names a segment")
	}
	if MustOK(t, f.get(t, "/boards/plain/all")).Doc(t).Find(testid(views.TestSegmentPicker)).Length() != 0 {
		t.Error("a board without segments has a picker")
	}

	// The rank card: ranks on the segment board, and in each segment.
	card := MustOK(t, f.get(t, "/boards/points/day/members/ann?segment=country:FR")).Doc(t)
	if got := strings.Join(strings.Fields(card.Find(testid(views.TestCardRank)).Text()), " "); got != "#1" {
		t.Errorf("card rank %q", got)
	}
	var segs []string
	card.Find(testid(views.TestCardSegments) + " tbody tr").Each(func(_ int, s *goquery.Selection) {
		segs = append(segs, cells(s)+" "+s.Find("a").AttrOr("href", ""))
	})
	if got := strings.Join(segs, " | "); got != "Country: France #1 of 2 5 /boards/points/day/members/ann?segment=country%3AFR | Team: red #1 of 1 5 /boards/points/day/members/ann?segment=team%3Ared" {
		t.Errorf("card segments %q", got)
	}
	if crumb := card.Find(".crumbs a").Last().AttrOr("href", ""); !strings.Contains(crumb, fr) {
		t.Errorf("card's board link %q", crumb)
	}
	wholeCard := MustOK(t, f.get(t, "/boards/points/day/members/cy")).Doc(t)
	if got := cells(wholeCard.Find(testid(views.TestCardSegments) + " tbody tr")); got != "Country: France #2 of 2 3" {
		t.Errorf("whole board card segments %q", got)
	}
	if MustOK(t, f.get(t, "/boards/points/day/members/dee")).Doc(t).Find(testid(views.TestCardSegments)).Length() != 0 {
		t.Error("a member in no segment lists segments")
	}
	if r := f.get(t, "/boards/points/day/members/bob?segment=country:FR"); r.Status != 404 {
		t.Errorf("a member outside the segment: %d", r.Status)
	}

	// The widget.
	emb := MustOK(t, f.get(t, "/embed/points/day?segment=country:DE")).Doc(t)
	if got := tableRows(emb.Selection); fmt.Sprint(got) != "[1 bob 7]" {
		t.Errorf("embed rows %v", got)
	}
	if ws := emb.Find("#"+views.IDLiveStatus).AttrOr("data-ws", ""); !strings.Contains(ws, "segment=country%3ADE") {
		t.Errorf("embed live feed %q", ws)
	}

	// Member search keeps the segment.
	r := f.get(t, "/boards/points/day/members?member=an&segment=country:FR")
	if loc := r.Header.Get("Location"); r.Status != 303 || loc != "/boards/points/day/members/ann?segment=country%3AFR" {
		t.Errorf("search: %d %q", r.Status, loc)
	}
	// The compare table ranks on the segment board.
	cmp := MustOK(t, f.get(t, "/boards/points/day?segment=country:FR&members=cy,bob")).Doc(t)
	var rowsText []string
	cmp.Find(testid(views.TestCompareRow)).Each(func(_ int, s *goquery.Selection) {
		rowsText = append(rowsText, s.AttrOr("data-member", "")+" "+s.Find("td.rank").Contents().First().Text()+s.Find("td.score").Text())
	})
	if got := strings.Join(rowsText, " | "); got != "cy 2 3" {
		t.Errorf("compare in FR %q", got)
	}

	// Bad segments are clear errors on pages too.
	for _, path := range []string{
		"/boards/points/day?segment=league:A", "/boards/points/day?segment=FR", "/boards/plain/all?segment=country:FR",
		"/embed/points/day?segment=country:F%20R", "/boards/points/day/members/ann?segment=x", "/ws/points/day?segment=league:A",
	} {
		if r := f.get(t, path); r.Status != 422 {
			t.Errorf("%s: %d", path, r.Status)
		}
	}
}

// TestSegmentPickerTyped: a board with more values than a list should
// hold gets a text field (NAME:VALUE) that suggests from the values API.
func TestSegmentPickerTyped(t *testing.T) {
	f := MustFixtureOf(t, segmentBoards, web.Options{WriteRate: -1})
	var evs []string
	for i := range 201 {
		evs = append(evs, fmt.Sprintf(`{"member":"m%d","value":1,"segments":{"team":"t%03d"}}`, i, i))
	}
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey, `{"events":[`+strings.Join(evs, ",")+`]}`))
	doc := MustOK(t, f.get(t, "/boards/points/all?segment=team:t007")).Doc(t)
	in := doc.Find(`input` + testid(views.TestSegmentSelect))
	if in.Length() != 1 || in.AttrOr("value", "") != "team:t007" {
		t.Fatalf("typed picker: %d, %q", in.Length(), in.AttrOr("value", ""))
	}
	want := "/api/v1/boards/points/segments/country /api/v1/boards/points/segments/team"
	if got := in.AttrOr("data-segment-values", ""); got != want {
		t.Errorf("suggestion sources %q", got)
	}
	if got := tableRows(doc.Selection); fmt.Sprint(got) != "[1 m7 1]" {
		t.Errorf("rows %v", got)
	}
}

// cells is a table row's cells' text, spaces folded, joined by spaces.
func cells(row *goquery.Selection) string {
	var out []string
	row.Find("th, td").Each(func(_ int, c *goquery.Selection) {
		out = append(out, strings.Join(strings.Fields(c.Text()), " "))
	})
	return strings.Join(out, " ")
}

// TestLiveSegment: the live feed of a segment board shows its members
// only, and a member's headline follows its rank there.
func TestLiveSegment(t *testing.T) {
	f := MustLiveOf(t, segmentBoards, nil, web.Options{})
	f.write(t, "points", `{"member":"ann","value":5,"segments":{"country":"FR"}}`)
	table := f.dial(t, "/ws/points/day?limit=5&segment=country:FR")
	var m web.LiveModel
	first := next(t, table)
	m.Apply(first)
	if got := frameRows(t, first); fmt.Sprint(got) != "[1 ann 5]" {
		t.Fatalf("snapshot %v", got)
	}
	head := f.dial(t, "/ws/points/day?member=cy&segment=country:FR")
	if first := next(t, head); !strings.Contains(first, "–") {
		t.Fatalf("cy is not ranked yet: %.300s", first)
	}
	// A DE write and a write to the whole board change nothing here; the
	// next FR write shows without them.
	f.write(t, "points", `{"member":"bob","value":9,"segments":{"country":"DE"}}`)
	f.write(t, "points", `{"member":"dee","value":8}`)
	f.write(t, "points", `{"member":"cy","value":7,"segments":{"country":"FR"}}`)
	got := untilRows(t, table, &m, func(s string) bool { return strings.Contains(s, "cy") })
	if fmt.Sprint(got) != "[1 cy 7 2 ann 5]" {
		t.Errorf("FR table %v", got)
	}
	frame := until(t, head, func(s string) bool { return strings.Contains(s, "#1") || strings.Contains(s, ">1<") })
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	if rank := strings.TrimSpace(doc.Find(testid(views.TestCardRank)).Text()); rank != "#1" {
		t.Errorf("cy's FR headline rank %q: %.300s", rank, frame)
	}
}
