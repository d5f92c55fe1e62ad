package web_test

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/web"
)

// TestOpenAPIDescribesEveryRoute: the served description is valid OpenAPI
// 3.1; every API and operational route is in it and every path in it is a
// route; and real answers of every route, successes and errors alike, are
// checked against it (status declared, body and headers matching the
// schema), as are the requests that succeed.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Setenv("STANDINGS_TEST_HOOK_SECRET", "s3cret")
	f := MustFixtureOf(t, `
boards:
  - {id: points, title: Points, segments: [country], decimals: 1, min_score: -1000, max_score: 1000, views: [day, week, all], lateness: 1h, keep: 1}
  - {id: lap, order: asc, update: best, ties: shared, decimals: 3, max_score: 3600, views: [week, all]}
webhooks:
  - {url: "http://127.0.0.1:9/hook", secret_env: STANDINGS_TEST_HOOK_SECRET, events: [period.final]}
actions:
  article.read: [{board: points}, {board: lap, value: 61.5}]
`, web.Options{WriteRate: -1})
	mr, store, srv := f.mr, f.store, f.srv
	h := srv.Handler()

	serve := func(method, path, key, body string) *httptest.ResponseRecorder {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, path, rd)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	spec := serve("GET", "/api/v1/openapi.json", "", "")
	if spec.Code != 200 {
		t.Fatalf("openapi.json: %d", spec.Code)
	}
	ctx := context.Background()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(spec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("the description is not valid: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}

	// Every route is described, and every description is a route.
	var described []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			described = append(described, method+" "+path)
		}
	}
	sort.Strings(described)
	if got := strings.Join(srv.APIRoutes(), "\n"); got != strings.Join(described, "\n") {
		t.Fatalf("routes\n%s\n\ndescribed\n%s", got, strings.Join(described, "\n"))
	}

	// Data for every answer: scores, a final day with its result and a
	// webhook delivery.
	for _, b := range []string{`{"member":"ann","value":12.5,"name":"Ann"}`, `{"member":"bob","value":3}`} {
		if r := serve("POST", "/api/v1/boards/points/scores", writeKey, b); r.Code != 200 {
			t.Fatalf("seed: %d %s", r.Code, r.Body)
		}
	}
	mr.SetTime(time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC))
	if _, err := store.RecordResults(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := store.RelayResults(ctx); err != nil {
		t.Fatal(err)
	}
	ds, err := store.Deliveries(ctx, ranking.DeliveryPending, 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %v %v", ds, err)
	}
	delivery := ds[0].ID

	covered := map[string]bool{}
	for _, c := range []struct {
		method, path, key, body string
		status                  int
	}{
		{"GET", "/api/v1/openapi.json", "", "", 200},
		{"GET", "/api/v1/boards", "", "", 200},
		{"POST", "/api/v1/boards/points/scores", writeKey, `{"member":"cy","value":-2.5,"name":"Cy","id":"e-1","at":"2026-11-23T00:30:00Z"}`, 200},
		{"POST", "/api/v1/boards/points/scores", writeKey, `{"member":"cy","value":-2.5,"name":"Cy","id":"e-1","at":"2026-11-23T00:30:00Z"}`, 200},
		{"POST", "/api/v1/boards/points/scores", writeKey, `{"member":"cy","value":1,"id":"e-1"}`, 409},
		{"POST", "/api/v1/boards/points/scores", writeKey, `{"member":"eve","value":4,"segments":{"country":"FR"}}`, 200},
		{"POST", "/api/v1/boards/points/scores", writeKey, `{"member":"eve","value":4,"segments":{"team":"red"}}`, 422},
		{"GET", "/api/v1/boards/points/day?segment=country:FR", "", "", 200},
		{"GET", "/api/v1/boards/points/day?members=ann,nobody,bob", "", "", 200},
		{"GET", "/api/v1/boards/points/day?members=ann&limit=5", "", "", 422},
		{"GET", "/api/v1/boards/points/day?segment=team:red", "", "", 422},
		{"GET", "/api/v1/boards/points/all/members/eve?segment=country:FR", "", "", 200},
		{"GET", "/api/v1/boards/points/segments/country", "", "", 200},
		{"GET", "/api/v1/boards/points/members?q=an", "", "", 200},
		{"GET", "/api/v1/boards/points/members?q=", "", "", 422},
		{"GET", "/api/v1/boards/nosuch/members?q=a", "", "", 404},
		{"GET", "/api/v1/boards/points/segments/team", "", "", 422},
		{"POST", "/api/v1/boards/points/scores", writeKey, `{"member":"cy","value":10000}`, 422},
		{"POST", "/api/v1/boards/points/scores", writeKey, `{"member":`, 400},
		{"POST", "/api/v1/boards/points/scores", "", `{"member":"cy","value":1}`, 401},
		{"POST", "/api/v1/boards/nosuch/scores", writeKey, `{"member":"cy","value":1}`, 404},
		{"POST", "/api/v1/boards/lap/scores/batch", writeKey, `{"events":[{"member":"ann","value":61.25},{"member":"bob","value":-1}]}`, 200},
		{"POST", "/api/v1/boards/lap/scores/batch", writeKey, `{"events":"no"}`, 400},
		{"POST", "/api/v1/boards/lap/scores/batch", writeKey, `{"events":[{"member":"ann","value":60.5},{"member":"bob","value":-1}],"ranks":false}`, 200},
		{"POST", "/api/v1/boards/lap/scores/batch", writeKey, `{"events":[{"member":"ann","value":60.5}],"ranks":true}`, 200},
		{"POST", "/api/v1/boards/lap/scores/batch", writeKey, `{"events":[{"member":"ann","value":60}],"ranks":"no"}`, 422},
		{"POST", "/api/v1/boards/points/scores", writeKey, `{"member":"bob","value":20}`, 200},
		{"GET", "/api/v1/boards/points/all/moves", "", "", 200},
		{"GET", "/api/v1/boards/points/all/moves?limit=101", "", "", 422},
		{"GET", "/api/v1/boards/nosuch/all/moves", "", "", 404},
		{"GET", "/api/v1/boards/points/day", "", "", 200},
		{"GET", "/api/v1/boards/points/all?offset=1&limit=1", "", "", 200},
		{"GET", "/api/v1/boards/points/day?period=2026-11-22", "", "", 200},
		{"GET", "/api/v1/boards/points/day?limit=0", "", "", 422},
		{"GET", "/api/v1/boards/points/nosuch", "", "", 404},
		{"GET", "/api/v1/boards/points/all/members/ann?around=1", "", "", 200},
		{"GET", "/api/v1/boards/lap/week/members/ann", "", "", 200},
		{"GET", "/api/v1/boards/points/all/members/nobody", "", "", 404},
		{"GET", "/api/v1/boards/points/day/results", "", "", 200},
		{"GET", "/api/v1/boards/points/day/results?limit=101", "", "", 422},
		{"GET", "/api/v1/boards/points/all/results", "", "", 404},
		{"GET", "/api/v1/boards/points/day/results/2026-11-22", "", "", 200},
		{"GET", "/api/v1/boards/points/day/results/2026-11-23", "", "", 404},
		{"GET", "/api/v1/boards/points/day/results/yesterday", "", "", 422},
		{"POST", "/api/v1/actions/article.read", writeKey, `{"member":"dee","name":"Dee","id":"a-1"}`, 200},
		{"POST", "/api/v1/actions/nosuch", writeKey, `{"member":"dee"}`, 404},
		{"POST", "/api/v1/actions/article.read", writeKey, `{"member":"dee","value":1}`, 422},
		{"GET", "/api/v1/webhooks/deliveries?status=pending", adminKey, "", 200},
		{"GET", "/api/v1/webhooks/deliveries?status=failed&limit=5", adminKey, "", 200},
		{"GET", "/api/v1/webhooks/deliveries?status=pending", writeKey, "", 403},
		{"GET", "/api/v1/webhooks/deliveries?status=lost", adminKey, "", 422},
		{"POST", "/api/v1/webhooks/deliveries/" + delivery + "/retry", adminKey, "", 409},
		{"POST", "/api/v1/webhooks/deliveries/wh_000000000000000000000000/retry", adminKey, "", 404},
		{"POST", "/api/v1/webhooks/deliveries/x/retry", "", "", 401},
		{"DELETE", "/api/v1/boards/points/members/bob", adminKey, "", 200},
		{"DELETE", "/api/v1/boards/points/members/bob", adminKey, "", 404},
		{"DELETE", "/api/v1/boards/points/members/bob", writeKey, "", 403},
		{"GET", "/healthz", "", "", 200},
		{"GET", "/readyz", "", "", 200},
		{"GET", "/metrics", "", "", 200},
	} {
		rec := serve(c.method, c.path, c.key, c.body)
		if rec.Code != c.status {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, rec.Code, rec.Body, c.status)
			continue
		}
		var rd io.Reader
		if c.body != "" {
			rd = strings.NewReader(c.body)
		}
		req := httptest.NewRequest(c.method, "http://standings.test"+c.path, rd)
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Errorf("%s %s: no route in the description: %v", c.method, c.path, err)
			continue
		}
		covered[c.method+" "+route.Path] = true
		opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
		if rec.Code < 300 {
			if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
				t.Errorf("%s %s: the request the server took does not match the description: %v", c.method, c.path, err)
			}
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(), Options: opts}
		out.SetBodyBytes(bytes.Clone(rec.Body.Bytes()))
		if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
			t.Errorf("%s %s → %d %s: %v", c.method, c.path, rec.Code, rec.Body, err)
		}
	}
	for _, d := range described {
		if !covered[d] {
			t.Errorf("%s: described but never exercised by this test", d)
		}
	}
}
