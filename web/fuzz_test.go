package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/standings/standings/web"
)

// fuzzBoards has a board of each shape the routes serve: the fixture's
// (a descending board with decimals, an ascending best board), one with
// segments, zones and a rolling window, and a league.
const fuzzBoards = testBoards + `  - id: seg
    title: Segments
    segments: [country, team]
    zones: [{title: Gold, top: 3}, {title: Silver, top: 10}]
    views: [hour, day, week, month, all, 7d]
    lateness: 1h
` + leagueTestBoard

// FuzzRequest sends any method, path, query, key and body to every route
// (go test -fuzz FuzzRequest ./web): no request is answered 500, and one
// refused (4xx) changes no Redis key.
func FuzzRequest(f *testing.F) {
	fx := MustFixtureOf(f, fuzzBoards, web.Options{WriteRate: -1})
	for _, b := range []string{"points", "seg", "lg"} {
		for i, m := range []string{"alice", "bob", "carol", "dave", "eve", "frank"} {
			MustOK(f, fx.do(f, "POST", "/api/v1/boards/"+b+"/scores", writeKey, `{"member":"`+m+`","value":`+strconv.Itoa(i+1)+`,"name":"N `+m+`"}`))
		}
	}
	const get, post, del = 0, 1, 2
	const anon, writer, admin = 0, 1, 2
	for _, s := range []struct {
		method uint8
		path   string
		key    uint8
		body   string
	}{
		{get, "/", anon, ""},
		{get, "/boards/points/day", anon, ""},
		{get, "/boards/seg/7d?period=2026-11-22&offset=0", anon, ""},
		{get, "/boards/seg/all.csv?segment=country:de", anon, ""},
		{get, "/boards/points/day/members/alice", anon, ""},
		{get, "/boards/points/day/members?q=al", anon, ""},
		{get, "/boards/points/day/members/alice/preview.png", anon, ""},
		{get, "/boards/points/week/recap.png", anon, ""},
		{get, "/boards/points/week/results", anon, ""},
		{get, "/boards/points/week/recap", anon, ""},
		{get, "/boards/points/week/widget", anon, ""},
		{get, "/boards/lg/league", anon, ""},
		{get, "/boards/lg/league/bronze/1.csv", anon, ""},
		{get, "/embed/points/day?limit=5&theme=dark", anon, ""},
		{get, "/embed/lg/league?member=alice", anon, ""},
		{get, "/api", anon, ""},
		{get, "/api/v1/openapi.json", anon, ""},
		{get, "/api/v1/boards/points/day?limit=3&offset=1&around=bob", anon, ""},
		{get, "/api/v1/boards/seg/segments/country", anon, ""},
		{get, "/api/v1/boards/points/members?q=a&limit=5", anon, ""},
		{get, "/api/v1/boards/points/day/members/alice?friends=bob,carol", anon, ""},
		{get, "/api/v1/boards/points/day/moves", anon, ""},
		{get, "/api/v1/boards/points/week/results/2026-W47", anon, ""},
		{get, "/api/v1/boards/lg/league/bronze/1", anon, ""},
		{get, "/api/v1/boards/lg/league/members/alice", anon, ""},
		{get, "/api/v1/webhooks/deliveries", admin, ""},
		{post, "/api/v1/boards/seg/scores", writer, `{"member":"zed","value":1.5,"segments":{"country":"de","team":"red"},"at":"2026-11-22T09:30:00Z","id":"x1"}`},
		{post, "/api/v1/boards/points/scores/batch", writer, `{"events":[{"member":"a","value":1},{"member":"b","value":-2,"name":"B"}]}`},
		{post, "/api/v1/actions/read", writer, `{"member":"a"}`},
		{post, "/api/v1/webhooks/deliveries/1/retry", admin, ""},
		{del, "/api/v1/boards/points/members/alice", admin, ""},
	} {
		f.Add(s.method, s.path, s.key, s.body)
	}
	f.Fuzz(func(t *testing.T, m uint8, path string, key uint8, body string) {
		method := []string{"GET", "POST", "DELETE", "HEAD", "PUT"}[int(m)%5]
		u, err := url.ParseRequestURI(path)
		if err != nil || !strings.HasPrefix(path, "/") {
			return // no client sends it
		}
		before := fx.dump()
		req := httptest.NewRequest(method, "/", strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.URL, req.RequestURI = u, path
		switch key % 3 {
		case writer:
			req.Header.Set("Authorization", "Bearer "+writeKey)
		case admin:
			req.Header.Set("Authorization", "Bearer "+adminKey)
		}
		rec := httptest.NewRecorder()
		fx.handler.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("%s %q %q: %d %s", method, path, body, rec.Code, rec.Body.String())
		}
		if rec.Code >= 400 {
			if after := fx.dump(); after != before {
				t.Fatalf("%s %q %q: refused with %d, and Redis changed:\n%s", method, path, body, rec.Code, rec.Body.String())
			}
		}
	})
}
