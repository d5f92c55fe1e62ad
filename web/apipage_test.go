package web_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAPIPage: /api describes every operation of the served OpenAPI
// document for people, and every page's footer links to it.
func TestAPIPage(t *testing.T) {
	f := MustFixture(t)
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(MustOK(t, f.get(t, "/api/v1/openapi.json")).Body), &spec); err != nil {
		t.Fatal(err)
	}
	page := MustOK(t, f.get(t, "/api")).Body
	ops := 0
	for path, item := range spec.Paths {
		for method := range item {
			if method == "parameters" {
				continue
			}
			ops++
			want := `<code class="method">` + strings.ToUpper(method) + `</code> <code>` + path + `</code>`
			if !strings.Contains(page, want) {
				t.Errorf("the API page lacks %s %s", method, path)
			}
		}
	}
	if n := strings.Count(page, `data-testid="api-op"`); n != ops {
		t.Errorf("%d operations on the page, %d described", n, ops)
	}
	for _, want := range []string{`<title>API`, `href="/api/v1/openapi.json"`, "needs a key", "<caption>JSON body</caption>", "one of pending, failed, delivered"} {
		if !strings.Contains(page, want) {
			t.Errorf("the API page lacks %q", want)
		}
	}
	for _, path := range []string{"/", "/boards/points/day", "/api"} {
		if body := MustOK(t, f.get(t, path)).Body; !strings.Contains(body, `href="/api" data-testid="footer-api"`) {
			t.Errorf("%s: no footer link to the API page", path)
		}
	}
}
