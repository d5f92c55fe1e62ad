package web_test

import (
	"strings"
	"testing"

	"github.com/standings/standings/web"
)

// TestActionRoute: an action applies to each of its boards and answers
// each board's write; a retry with the same id is a duplicate on every
// board; unknown actions are 404, bad input 422 and changes nothing,
// writes need a key.
func TestActionRoute(t *testing.T) {
	f := MustFixtureOf(t, `
boards:
  - {id: reads, views: [day, all]}
  - {id: points, decimals: 1, views: [week, all]}
actions:
  article.read: [{board: reads}, {board: points, value: 2.5}]
`, web.Options{WriteRate: -1})

	body := `{"member":"ann","name":"Ann","id":"r1"}`
	r := MustOK(t, f.do(t, "POST", "/api/v1/actions/article.read", writeKey, body))
	want := `{"action":"article.read","member":"ann","boards":{` +
		`"reads":{"board":"reads","member":"ann","duplicate":false,"views":{"day":{"period":"2026-11-22","score":1,"rank":1},"all":{"period":"all","score":1,"rank":1}}},` +
		`"points":{"board":"points","member":"ann","duplicate":false,"views":{"week":{"period":"2026-11-16","score":2.5,"rank":1},"all":{"period":"all","score":2.5,"rank":1}}}}}`
	if strings.TrimSpace(r.Body) != want {
		t.Fatalf("answer\n got %s\nwant %s", r.Body, want)
	}
	again := MustOK(t, f.do(t, "POST", "/api/v1/actions/article.read", writeKey, body)).Body
	if strings.Count(again, `"duplicate":true`) != 2 {
		t.Fatalf("retry: %s", again)
	}

	before := f.dump()
	for _, c := range []struct {
		path, key, body string
		status          int
	}{
		{"/api/v1/actions/nosuch", writeKey, body, 404},
		{"/api/v1/actions/article.read", "", body, 401},
		{"/api/v1/actions/article.read", writeKey, `{"member":""}`, 422},
		{"/api/v1/actions/article.read", writeKey, `{"member":"a","value":3}`, 422},
		{"/api/v1/actions/article.read", writeKey, `{"member":"a","at":"yesterday"}`, 422},
		{"/api/v1/actions/article.read", writeKey, `{"member":"a","at":"2020-01-01T00:00:00Z"}`, 422},
		{"/api/v1/actions/article.read", writeKey, `{"member":"a","segments":{"country":"FR"}}`, 422},
		{"/api/v1/actions/article.read", writeKey, `{"member":"a"`, 400},
	} {
		got := f.do(t, "POST", c.path, c.key, c.body)
		if got.Status != c.status {
			t.Errorf("%s %s: %d %s, want %d", c.path, c.body, got.Status, got.Body, c.status)
			continue
		}
		got.ErrorCode(t)
	}
	f.MustUnchanged(t, before)
}
