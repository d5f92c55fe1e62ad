package web_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/standings/standings/internal/browsertest"
)

// ScreenshotsEnv names the variable that, set to "1", makes
// TestScreenshots write docs/screenshots/*.png (make screenshots).
const ScreenshotsEnv = "STANDINGS_SCREENSHOTS"

// TestScreenshots renders the board page, a rank card, the results page,
// a recap and the widget at 390 and 1280 px wide, light and dark, from a board
// with results, movement and an overtake.
func TestScreenshots(t *testing.T) {
	if os.Getenv(ScreenshotsEnv) != "1" {
		t.Skipf("set %s=1 to write docs/screenshots", ScreenshotsEnv)
	}
	tab := browsertest.MustBrowser(t)
	f := mustResults(t)
	names := []string{"Leila Haddad", "Diego Ramírez", "Aiko Tanaka", "Jonas Berg", "Chiara Rossi", "Ngozi Okafor", "Mateus Silva", "Sofia Novak", "Ravi Iyer", "Emma Dubois", "Yusuf Demir", "Hana Kim"}
	for i, n := range names {
		f.MustWriteAt(t, testNow.Add(-24*time.Hour), "points", fmt.Sprintf(`{"member":"u%02d","value":%d,"name":%q}`, i, 40+7*((i*5)%12), n))
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":"u%02d","value":%d}`, i, 30+9*((i*7)%12)))
	}
	f.MustWrite(t, "points", `{"member":"u03","value":60}`) // an overtake for the ticker
	srv := httptest.NewServer(f.handler)
	t.Cleanup(srv.Close)
	dir := filepath.Join("..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []string{"light", "dark"} {
		if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		}); err != nil {
			t.Fatal(err)
		}
		for _, size := range []struct {
			name string
			w, h int64
		}{{"phone", 390, 844}, {"desktop", 1280, 900}} {
			for _, p := range []struct{ name, path string }{
				{"board", "/boards/points/day"},
				{"card", "/boards/points/day/members/u03"},
				{"results", "/boards/points/day/results"},
				{"recap", "/boards/points/day/recap?period=" + testNow.Add(-24*time.Hour).Format("2006-01-02")},
				{"embed", "/embed/points/day?limit=10&theme=auto"},
			} {
				w, h := size.w, size.h
				if p.name == "embed" {
					w, h = 360, 420
				}
				browsertest.Run(t, tab, "viewport", chromedp.EmulateViewport(w, h))
				navigate(t, tab, srv.URL+p.path)
				time.Sleep(300 * time.Millisecond) // the live feed's first frame
				png := browsertest.Run(t, tab, "screenshot", chromedp.CaptureScreenshot())
				file := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.png", p.name, size.name, scheme))
				if p.name == "embed" {
					file = filepath.Join(dir, fmt.Sprintf("embed-%s.png", scheme))
				}
				if err := os.WriteFile(file, png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestLeagueScreenshots renders a league group page (zones, outcomes of
// the round before, "me" highlighted) at 390 and 1280 px, light and dark.
func TestLeagueScreenshots(t *testing.T) {
	if os.Getenv(ScreenshotsEnv) != "1" {
		t.Skipf("set %s=1 to write docs/screenshots", ScreenshotsEnv)
	}
	tab := browsertest.MustBrowser(t)
	lf := mustLeagueFixture(t, `
timezone: UTC
boards:
  - id: quiz
    title: Daily quiz
    unit: points
    max_score: 100000
    views: [day, all]
    league: {cycle: day, tiers: [bronze, silver, gold, diamond], cohort_size: 10, promote: 3, demote: 3}
`)
	first := []string{"Leila", "Diego", "Aiko", "Jonas", "Chiara", "Ngozi", "Mateus", "Sofia", "Ravi", "Emma", "Yusuf", "Hana", "Lucas", "Amara", "Tomás"}
	last := []string{"Haddad", "Ramírez", "Tanaka", "Berg", "Rossi", "Okafor", "Silva", "Novak", "Iyer", "Dubois"}
	post := func(i, value int) {
		MustOK(t, lf.do(t, "POST", "/api/v1/boards/quiz/scores", writeKey, fmt.Sprintf(`{"member":"p%02d","value":%d,"name":"%s %s"}`,
			i, value, first[i%len(first)], last[(i/3)%len(last)])))
	}
	// Yesterday: three bronze groups of ten; today their nine promoted
	// members fill silver group 1.
	for i := range 30 {
		post(i, 100+37*((i*7)%30))
	}
	lf.at(testNow.Add(24 * time.Hour))
	for i := range 30 {
		post(i, 60+53*((i*11)%19))
	}
	var group struct {
		Entries []struct{ Member string } `json:"entries"`
	}
	if err := json.Unmarshal([]byte(MustOK(t, lf.get(t, "/api/v1/boards/quiz/league/silver/1")).Body), &group); err != nil || len(group.Entries) < 5 {
		t.Fatalf("silver group 1: %v %+v", err, group)
	}
	me := group.Entries[4].Member
	srv := httptest.NewServer(lf.handler)
	t.Cleanup(srv.Close)
	dir := filepath.Join("..", "docs", "screenshots")
	for _, shot := range []struct {
		scheme, size string
		w, h         int64
	}{{"light", "desktop", 1280, 900}, {"dark", "desktop", 1280, 900}, {"light", "phone", 390, 844}, {"dark", "phone", 390, 844}} {
		if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: shot.scheme}},
		}); err != nil {
			t.Fatal(err)
		}
		browsertest.Run(t, tab, "viewport", chromedp.EmulateViewport(shot.w, shot.h))
		navigate(t, tab, srv.URL+"/boards/quiz/league/silver/1?me="+me)
		time.Sleep(300 * time.Millisecond) // the live feed's first frame
		png := browsertest.Run(t, tab, "screenshot", chromedp.CaptureScreenshot())
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("league-%s-%s.png", shot.size, shot.scheme)), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
