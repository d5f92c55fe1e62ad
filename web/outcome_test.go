package web_test

import (
	"testing"

	"github.com/standings/standings/web"
)

// TestUnavailableWriteOutcome: a write, a batch and an action that reach
// no Redis at all answer 503 unavailable with "outcome": "not_applied"
// and Retry-After (contract section 14).
func TestUnavailableWriteOutcome(t *testing.T) {
	t.Parallel() // waits on an outage or a slow client, on its own server
	f := MustFixtureOf(t, `
boards:
  - {id: reads, views: [day, all]}
  - {id: points, views: [all]}
actions:
  read: [{board: reads}, {board: points}]
`, web.Options{WriteRate: -1})
	f.mr.Close() // connections are refused from now on
	for _, c := range []struct{ path, body string }{
		{"/api/v1/boards/reads/scores", `{"member":"ann","value":1}`},
		{"/api/v1/boards/reads/scores/batch", `{"events":[{"member":"ann","value":1}]}`},
		{"/api/v1/actions/read", `{"member":"ann"}`},
	} {
		r := f.do(t, "POST", c.path, writeKey, c.body)
		e, _ := r.JSON(t)["error"].(map[string]any)
		if r.Status != 503 || e["code"] != "unavailable" || e["outcome"] != "not_applied" || e["message"] == "" || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s with Redis gone: %d %v %s, want 503 unavailable, outcome not_applied, Retry-After", c.path, r.Status, r.Header, r.Body)
		}
	}
	// A read says nothing of outcomes.
	r := f.get(t, "/api/v1/boards/reads/all")
	if e, _ := r.JSON(t)["error"].(map[string]any); r.Status != 503 || e["outcome"] != nil {
		t.Errorf("read with Redis gone: %d %s, want 503 without an outcome", r.Status, r.Body)
	}
}
