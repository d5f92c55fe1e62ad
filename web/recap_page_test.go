package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

func recapText(doc *goquery.Document, id string) string {
	return strings.Join(strings.Fields(doc.Find(testid(id)).Text()), " ")
}

func TestRecapPage(t *testing.T) {
	f := mustResults(t)
	doc := MustOK(t, f.get(t, "/boards/points/day/recap?period=2026-11-21")).Doc(t)
	if got := recapText(doc, views.TestRecapStatus); got != "Final results" {
		t.Errorf("status %q", got)
	}
	if got := recapText(doc, views.TestWinnersLine); got != "Won by Ann <b>&</b> with 30" {
		t.Errorf("winner %q", got)
	}
	if got, want := strings.Join(podium(doc.Selection), "|"), "1 Ann <b>&</b> 30|2 Bob 20|3 cy 20"; got != want {
		t.Errorf("podium %q, want %q", got, want)
	}
	if got := recapText(doc, views.TestRecapRace); !strings.Contains(got, "#2 Bob and #3 cy finished level on 20.") {
		t.Errorf("race %q", got)
	}
	if got := recapText(doc, views.TestRecapTotal); got != "4 members ranked · 80 points in all" {
		t.Errorf("total %q", got)
	}
	if got := recapText(doc, views.TestRecapClimbers); !strings.Contains(got, "Nobody climbed against Friday 20 Nov 2026.") {
		t.Errorf("climbers %q", got)
	}
	if doc.Find("main b").Length() != 0 {
		t.Error("a name rendered as markup")
	}

	t.Run("climbers against the period before", func(t *testing.T) {
		f := MustFixture(t)
		for _, ev := range []string{`{"member":"a","value":50}`, `{"member":"b","value":40}`, `{"member":"c","value":30}`, `{"member":"d","value":20}`} {
			f.MustWriteAt(t, day(20).Add(10*time.Hour), "points", ev)
		}
		for _, ev := range []string{`{"member":"d","value":90}`, `{"member":"c","value":80}`, `{"member":"a","value":10}`} {
			f.MustWriteAt(t, day(21).Add(10*time.Hour), "points", ev)
		}
		doc := MustOK(t, f.get(t, "/boards/points/day/recap?period=2026-11-21")).Doc(t)
		got := recapText(doc, views.TestRecapClimbers)
		if !strings.Contains(got, "d up 3 places, from #4 to #1") || !strings.Contains(got, "c up 1 place, from #3 to #2") {
			t.Errorf("climbers %q", got)
		}
	})

	t.Run("from the recorded result once the standings expired", func(t *testing.T) {
		doc := MustOK(t, f.get(t, "/boards/points/day/recap?period=2026-10-30")).Doc(t)
		if got := strings.Join(podium(doc.Selection), "|"); got != "1 early 3" {
			t.Errorf("podium %q", got)
		}
		if got := recapText(doc, views.TestRecapTotal); got != "1 member ranked" {
			t.Errorf("total %q", got)
		}
	})

	t.Run("linked from the results", func(t *testing.T) {
		doc := MustOK(t, f.get(t, "/boards/points/day/results")).Doc(t)
		href := doc.Find("#2026-11-20 "+testid(views.TestResultRecap)).AttrOr("href", "")
		if href != "/boards/points/day/recap?period=2026-11-20" {
			t.Fatalf("recap link %q", href)
		}
		MustOK(t, f.get(t, href))
	})

	t.Run("errors", func(t *testing.T) {
		before := f.dump()
		for path, status := range map[string]int{
			"/boards/nope/day/recap?period=2026-11-21":   http.StatusNotFound,
			"/boards/points/all/recap":                   http.StatusNotFound,
			"/boards/points/day/recap?period=2026-11-19": http.StatusNotFound, // nobody scored
			"/boards/points/day/recap?period=2026-12-01": http.StatusNotFound, // not started
			"/boards/points/day/recap?period=2020-01-01": http.StatusNotFound, // long gone
			"/boards/points/day/recap?period=yesterday":  http.StatusUnprocessableEntity,
		} {
			r := f.get(t, path)
			if r.Status != status {
				t.Errorf("%s: %d, want %d", path, r.Status, status)
				continue
			}
			if r.Doc(t).Find(testid(views.TestErrorStatus)).Length() != 1 {
				t.Errorf("%s: not the error page", path)
			}
		}
		f.MustUnchanged(t, before)
	})
}

// TestProvisionalWinners: a period that ended but takes late scores shows
// who leads it, on the results page and its recap, then its final result.
func TestProvisionalWinners(t *testing.T) {
	f := MustFixture(t)
	f.MustWriteAt(t, day(21).Add(10*time.Hour), "points", `{"member":"ann","value":7,"name":"Ann"}`)
	f.mr.SetTime(day(22).Add(30 * time.Minute))
	doc := MustOK(t, f.get(t, "/boards/points/day/results")).Doc(t)
	lead := doc.Find("#2026-11-21")
	want := "Leading when the day closed; late scores may still arrive until Sun 22 Nov 01:00 UTC."
	if got := lead.Find(testid(views.TestProvisional)).Text(); got != want {
		t.Errorf("provisional %q, want %q", got, want)
	}
	if got := strings.Join(podium(lead), "|"); got != "1 Ann 7" {
		t.Errorf("podium %q", got)
	}
	recap := MustOK(t, f.get(t, "/boards/points/day/recap")).Doc(t)
	if got := recapText(recap, views.TestRecapStatus); got != want {
		t.Errorf("recap status %q", got)
	}
	if got := recapText(recap, views.TestWinnersLine); got != "Led by Ann with 7" {
		t.Errorf("recap winner %q", got)
	}
}

// TestFuturePeriodIsNotClosing: a week that has not started says so; a
// past period nobody scored in has no results heading over its empty table.
func TestFuturePeriodIsNotClosing(t *testing.T) {
	f := MustFixture(t)
	doc := MustOK(t, f.get(t, "/boards/points/week?period=2026-11-30")).Doc(t)
	if doc.Find(".badge.open").Length() != 0 || doc.Find(testid(views.TestClosing)).Length() != 0 {
		t.Error("a future week labelled closing")
	}
	if doc.Find(testid(views.TestUpcoming)).Length() != 1 {
		t.Error("a future week not labelled as not started")
	}
	f.MustRecord(t, testBoards, testNow)
	doc = MustOK(t, f.get(t, "/boards/points/day?period=2026-11-20")).Doc(t)
	if n := doc.Find(testid(views.TestFinalTitle)).Length(); n != 0 {
		t.Errorf("%d final results headings over an empty day", n)
	}
}

// TestResultScoresUseTheBoardsFormat: a lap board's results and recap show
// times as its board does, a board with a unit names it.
func TestResultScoresUseTheBoardsFormat(t *testing.T) {
	f := MustFixtureOf(t, `
timezone: UTC
boards:
  - id: laps
    title: Laps
    format: duration
    order: asc
    update: best
    decimals: 3
    max_score: 3600
    views: [week]
    lateness: 1h
  - id: reads
    title: Reads
    unit: reads
    views: [week]
    lateness: 1h
`, web.Options{WriteRate: -1})
	f.MustWriteAt(t, day(17).Add(time.Hour), "laps", `{"member":"a","value":194.727}`)
	f.MustWriteAt(t, day(17).Add(time.Hour), "reads", `{"member":"a","value":1024}`)
	f.MustRecord(t, `
timezone: UTC
boards:
  - id: laps
    format: duration
    order: asc
    update: best
    decimals: 3
    max_score: 3600
    views: [week]
    lateness: 1h
  - id: reads
    unit: reads
    views: [week]
    lateness: 1h
`, day(23).Add(2*time.Hour))
	for path, want := range map[string]string{
		"/boards/laps/week/results":                  "1 a 3:14.727",
		"/boards/laps/week/recap?period=2026-11-16":  "1 a 3:14.727",
		"/boards/reads/week/results":                 "1 a 1024 reads",
		"/boards/reads/week/recap?period=2026-11-16": "1 a 1024 reads",
	} {
		doc := MustOK(t, f.get(t, path)).Doc(t)
		if got := strings.Join(podium(doc.Selection), "|"); got != want {
			t.Errorf("%s: podium %q, want %q", path, got, want)
		}
	}
}

// TestIndexLastWinners: each board card says what it is for, how long its
// period has left, and who won its latest finished period.
func TestIndexLastWinners(t *testing.T) {
	f := mustResults(t)
	doc := MustOK(t, f.get(t, "/")).Doc(t)
	points := doc.Find(`[data-board="points"]`)
	if got := points.Find(testid(views.TestWinnersLine)).Text(); got != "Won by Ann <b>&</b> with 30" {
		t.Errorf("winners line %q", got)
	}
	if got := points.Find(testid(views.TestTimeLeft)).Text(); got != "Day ends in 14h 0m 0s" {
		t.Errorf("time left %q", got)
	}
	if got := points.Find("p.muted").First().Text(); got != "Who gathers the most points." {
		t.Errorf("blurb %q", got)
	}
	if got := points.Find("h2 a").AttrOr("href", ""); got != "/boards/points/day" {
		t.Errorf("card opens %q", got)
	}
}

// TestRecapPageShares: a recap says who won in its description and
// points og:image at its preview image, which draws.
func TestRecapPageShares(t *testing.T) {
	f := mustResults(t)
	doc := MustOK(t, f.get(t, "/boards/points/day/recap?period=2026-11-21")).Doc(t)
	desc, _ := doc.Find(`meta[name="description"]`).Attr("content")
	if !strings.Contains(desc, "Won by Ann") || !strings.Contains(desc, "4 members") {
		t.Fatalf("description %q", desc)
	}
	img, ok := doc.Find(`meta[property="og:image"]`).Attr("content")
	if !ok || !strings.HasSuffix(img, "/boards/points/day/recap.png?period=2026-11-21") {
		t.Fatalf("og:image %q", img)
	}
	u, _ := url.Parse(img)
	if rec := f.get(t, u.RequestURI()); rec.Status != http.StatusOK || rec.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("preview: %d %s", rec.Status, rec.Header.Get("Content-Type"))
	}
}
