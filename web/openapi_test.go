package web_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
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
  - {id: lap, order: asc, update: best, ties: shared, decimals: 3, max_score: 3600, views: [week, all], zones: [{title: Podium, top: 1}]}
  - {id: lg, views: [day], league: {cycle: day, tiers: [bronze, silver], cohort_size: 5, promote: 1, demote: 1}}
webhooks:
  - {url: "http://127.0.0.1:9/hook", secret_env: STANDINGS_TEST_HOOK_SECRET, events: [period.final]}
actions:
  article.read: [{board: points}, {board: lap, value: 61.5}]
`, web.Options{WriteRate: -1})
	mr, store, srv := f.mr, f.store, f.srv
	h := srv.Handler()

	serve := func(method, path, key, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, apiCase{method: method, path: path, key: key, body: body}.request(""))
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
	var cases []apiCase
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
		{"GET", "/api/v1/boards/lap/week", "", "", 200},
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
		{"POST", "/api/v1/boards/lg/scores", writeKey, `{"member":"ann","value":3,"name":"Ann"}`, 200},
		{"GET", "/api/v1/boards/lg/league", "", "", 200},
		{"GET", "/api/v1/boards/lg/league?round=2026-11-22", "", "", 200},
		{"GET", "/api/v1/boards/lg/league?round=someday", "", "", 422},
		{"GET", "/api/v1/boards/points/league", "", "", 404},
		{"GET", "/api/v1/boards/lg/league/bronze/1", "", "", 200},
		{"GET", "/api/v1/boards/lg/league/bronze/2", "", "", 404},
		{"GET", "/api/v1/boards/lg/league/bronze/0", "", "", 422},
		{"GET", "/api/v1/boards/lg/league/members/ann", "", "", 200},
		{"GET", "/api/v1/boards/lg/league/members/bob", "", "", 404},
		{"GET", "/healthz", "", "", 200},
		{"GET", "/readyz", "", "", 200},
		{"GET", "/metrics", "", "", 200},
	} {
		cases = append(cases, apiCase{method: c.method, path: c.path, key: c.key, body: c.body, status: c.status})
	}
	// The protocol edges: bodies that are not JSON, too big or too slow,
	// on every route that takes one.
	for _, p := range []string{"/api/v1/boards/points/scores", "/api/v1/boards/points/scores/batch", "/api/v1/actions/article.read"} {
		cases = append(cases,
			apiCase{method: "POST", path: p, key: writeKey, body: `{"member":"ann","value":1}`, ctype: "text/plain", status: 415},
			apiCase{method: "POST", path: p, key: writeKey, body: `{"member":"ann","value":1}` + strings.Repeat(" ", web.MaxBody), status: 413},
			apiCase{method: "POST", path: p, key: writeKey, slow: true, status: 408},
		)
	}
	// A query parameter given twice, on every described route.
	fill := strings.NewReplacer("{board}", "points", "{view}", "day", "{member}", "ann", "{name}", "country",
		"{period}", "2026-11-22", "{tier}", "bronze", "{cohort}", "1", "{action}", "article.read", "{id}", delivery)
	for _, d := range described {
		method, path, _ := strings.Cut(d, " ")
		cases = append(cases, apiCase{method: method, path: fill.Replace(path) + "?limit=1&limit=2", key: adminKey, body: map[bool]string{true: `{}`}[method == "POST"], status: 422})
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, c.request(""))
		if rec.Code != c.status {
			t.Errorf("%s %s: %d %.300s, want %d", c.method, c.path, rec.Code, rec.Body, c.status)
			continue
		}
		req := c.request("http://standings.test")
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
			t.Errorf("%s %s → %d %.300s: %v", c.method, c.path, rec.Code, rec.Body, err)
		}
		// The check fails on a status the route does not list.
		out.Status = http.StatusTeapot
		if err := openapi3filter.ValidateResponse(ctx, out); err == nil {
			t.Errorf("%s %s: an unlisted status passes the check", c.method, c.path)
		}
		// A GET answered with an ETag answers 304 to If-None-Match, which
		// the route lists.
		if etag := rec.Header().Get("ETag"); c.method == "GET" && rec.Code == http.StatusOK && etag != "" {
			again := c.request("")
			again.Header.Set("If-None-Match", etag)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, again)
			if rec.Code != http.StatusNotModified {
				t.Errorf("%s %s with If-None-Match %s: %d, want 304", c.method, c.path, etag, rec.Code)
				continue
			}
			// (openapi3filter never checks a 304.)
			if route.Operation.Responses.Value("304") == nil {
				t.Errorf("%s %s answers 304, which it does not list", c.method, route.Path)
			}
		}
	}
	// Another method on a described path is 405 with Allow, which every
	// operation of the path lists.
	for path, item := range doc.Paths.Map() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, apiCase{method: "PUT", path: fill.Replace(path), key: adminKey}.request(""))
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") == "" {
			t.Errorf("PUT %s: %d, Allow %q; want 405 with Allow", path, rec.Code, rec.Header().Get("Allow"))
		}
		for method, op := range item.Operations() {
			if op.Responses.Value("405") == nil {
				t.Errorf("%s %s does not list 405", method, path)
			}
		}
	}
	for _, d := range described {
		if !covered[d] {
			t.Errorf("%s: described but never exercised by this test", d)
		}
	}
}

// apiCase is one request of the description test and the status it must
// get.
type apiCase struct {
	method, path, key, body string
	ctype                   string // Content-Type of the body; application/json when empty
	slow                    bool   // a body whose read times out, as a slow client's does
	status                  int
}

// request builds c's request on base ("" or a scheme and host).
func (c apiCase) request(base string) *http.Request {
	var rd io.Reader
	switch {
	case c.slow:
		rd = timeoutBody{}
	case c.body != "":
		rd = strings.NewReader(c.body)
	}
	req := httptest.NewRequest(c.method, base+c.path, rd)
	switch {
	case c.ctype != "":
		req.Header.Set("Content-Type", c.ctype)
	case rd != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	return req
}

// TestOpenAPICarriesTheLimits: the description bounds what the contract
// bounds, so that clients generated from it refuse what the server would.
func TestOpenAPICarriesTheLimits(t *testing.T) {
	f := MustFixture(t)
	doc, err := openapi3.NewLoader().LoadFromData([]byte(MustOK(t, f.get(t, "/api/v1/openapi.json")).Body))
	if err != nil {
		t.Fatal(err)
	}
	bound := func(what string, s *openapi3.SchemaRef, lo, hi uint64) {
		t.Helper()
		if s == nil || s.Value == nil {
			t.Fatalf("%s: no schema", what)
		}
		v := s.Value
		switch {
		case v.Type.Is("array"):
			if v.MaxItems == nil || *v.MaxItems != hi || v.MinItems != lo {
				t.Errorf("%s: items %d..%v, want %d..%d", what, v.MinItems, v.MaxItems, lo, hi)
			}
		case v.Type.Is("integer"):
			if v.Min == nil || v.Max == nil || uint64(*v.Min) != lo || uint64(*v.Max) != hi {
				t.Errorf("%s: %v..%v, want %d..%d", what, v.Min, v.Max, lo, hi)
			}
		default:
			if v.MaxLength == nil || *v.MaxLength != hi || v.MinLength != lo {
				t.Errorf("%s: length %d..%v, want %d..%d", what, v.MinLength, v.MaxLength, lo, hi)
			}
		}
	}
	param := func(path, method, name string) *openapi3.Parameter {
		t.Helper()
		op := doc.Paths.Find(path).GetOperation(method)
		for _, p := range append(doc.Paths.Find(path).Parameters, op.Parameters...) {
			if p.Value.Name == name {
				return p.Value
			}
		}
		t.Fatalf("%s %s: no parameter %s", method, path, name)
		return nil
	}
	event := doc.Components.Schemas["Event"].Value.Properties
	bound("Event.member", event["member"], 1, 128)
	bound("Event.name", event["name"], 1, 64)
	bound("Event.id", event["id"], 1, 128)
	action := doc.Paths.Find("/api/v1/actions/{action}").Post.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties
	bound("action member", action["member"], 1, 128)
	bound("action name", action["name"], 1, 64)
	bound("action id", action["id"], 1, 128)
	batch := doc.Paths.Find("/api/v1/boards/{board}/scores/batch").Post.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties
	bound("batch events", batch["events"], 0, 1000)
	for _, p := range []string{"/api/v1/boards/{board}/{view}/members/{member}", "/api/v1/boards/{board}/members/{member}"} {
		m := "GET"
		if strings.HasPrefix(p, "/api/v1/boards/{board}/members/") {
			m = "DELETE"
		}
		bound(p+" member", param(p, m, "member").Schema, 1, 128)
		if !strings.Contains(param(p, m, "member").Description, "bytes") {
			t.Errorf("%s: the member's bound is not said in bytes", p)
		}
	}
	bound("page limit", param("/api/v1/boards/{board}/{view}", "GET", "limit").Schema, 1, 1000)
	bound("page offset", param("/api/v1/boards/{board}/{view}", "GET", "offset").Schema, 0, 1_000_000_000)
	bound("card around", param("/api/v1/boards/{board}/{view}/members/{member}", "GET", "around").Schema, 0, 50)
	bound("search q", param("/api/v1/boards/{board}/members", "GET", "q").Schema, 1, 64)
	if d := param("/api/v1/boards/{board}/{view}", "GET", "members").Description; !strings.Contains(d, "1..100") {
		t.Errorf("members: %q does not say 1..100", d)
	}
}
