package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// snapshot reads every page the bad requests could have touched.
func (f *fixture) snapshot(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	for _, p := range []string{
		"/api/v1/boards/points/all?limit=1000",
		"/api/v1/boards/points/day?limit=1000",
		"/api/v1/boards/points/week?limit=1000",
		"/api/v1/boards/lap/all?limit=1000",
	} {
		b.WriteString(MustOK(tb, f.get(tb, p)).Body)
	}
	return b.String()
}

// seed writes a few scores so that a page holds something to compare.
func (f *fixture) seed(tb testing.TB) {
	tb.Helper()
	MustOK(tb, f.do(tb, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"alice","value":12.5,"name":"Alice","id":"seed-1"}`))
	MustOK(tb, f.do(tb, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"bob","value":7}`))
	MustOK(tb, f.do(tb, "POST", "/api/v1/boards/lap/scores", writeKey, `{"member":"carol","value":61.125}`))
}

func TestBadInputCatalogue(t *testing.T) {
	f := MustFixture(t)
	f.seed(t)
	before := f.snapshot(t)

	const scores = "/api/v1/boards/points/scores"
	const batch = "/api/v1/boards/points/scores/batch"
	ev := func(fields string) string { return "{" + fields + "}" }
	tooOld := testNow.Add(-2 * time.Hour).Format(time.RFC3339)
	tooNew := testNow.Add(time.Minute).Format(time.RFC3339)
	var many strings.Builder
	many.WriteString(`{"events":[`)
	for i := range 1001 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `{"member":"m%d","value":1}`, i)
	}
	many.WriteString(`]}`)
	huge := `{"member":"alice","value":1,"name":"` + strings.Repeat("x", 1<<20) + `"}`

	cases := []struct {
		name   string
		method string
		path   string
		key    string
		body   string
		status int
		code   string
	}{
		{"malformed JSON", "POST", scores, writeKey, `{"member":`, 400, "invalid_argument"},
		{"empty body", "POST", scores, writeKey, ``, 400, "invalid_argument"},
		{"not an object", "POST", scores, writeKey, `[1,2]`, 400, "invalid_argument"},
		{"trailing data", "POST", scores, writeKey, `{"member":"alice","value":1} {}`, 400, "invalid_argument"},
		{"value as string", "POST", scores, writeKey, ev(`"member":"alice","value":"5"`), 400, "invalid_argument"},
		{"value as bool", "POST", scores, writeKey, ev(`"member":"alice","value":true`), 400, "invalid_argument"},
		{"value as object", "POST", scores, writeKey, ev(`"member":"alice","value":{}`), 400, "invalid_argument"},
		{"member as number", "POST", scores, writeKey, ev(`"member":5,"value":1`), 400, "invalid_argument"},
		{"name as number", "POST", scores, writeKey, ev(`"member":"alice","value":1,"name":7`), 400, "invalid_argument"},
		{"NaN", "POST", scores, writeKey, ev(`"member":"alice","value":NaN`), 400, "invalid_argument"},
		{"Infinity", "POST", scores, writeKey, ev(`"member":"alice","value":Infinity`), 400, "invalid_argument"},
		{"missing member", "POST", scores, writeKey, ev(`"value":1`), 422, "invalid_argument"},
		{"null member", "POST", scores, writeKey, ev(`"member":null,"value":1`), 422, "invalid_argument"},
		{"missing value", "POST", scores, writeKey, ev(`"member":"alice"`), 422, "invalid_argument"},
		{"null value", "POST", scores, writeKey, ev(`"member":"alice","value":null`), 422, "invalid_argument"},
		{"unknown field", "POST", scores, writeKey, ev(`"member":"alice","value":1,"colour":"red"`), 422, "invalid_argument"},
		{"too many decimals", "POST", scores, writeKey, ev(`"member":"alice","value":12.55`), 422, "invalid_argument"},
		{"huge exponent", "POST", scores, writeKey, ev(`"member":"alice","value":1e999`), 422, "invalid_argument"},
		{"out of range", "POST", scores, writeKey, ev(`"member":"alice","value":5000`), 422, "invalid_argument"},
		{"increment leaves range", "POST", scores, writeKey, ev(`"member":"alice","value":995`), 422, "invalid_argument"},
		{"best out of range", "POST", "/api/v1/boards/lap/scores", writeKey, ev(`"member":"carol","value":3600.001`), 422, "invalid_argument"},
		{"member too long", "POST", scores, writeKey, ev(`"member":"` + strings.Repeat("m", 129) + `","value":1`), 422, "invalid_argument"},
		{"member control character", "POST", scores, writeKey, ev(`"member":"al\u0007ice","value":1`), 422, "invalid_argument"},
		{"member newline", "POST", scores, writeKey, ev(`"member":"al\nice","value":1`), 422, "invalid_argument"},
		{"member bidi override", "POST", scores, writeKey, ev(`"member":"al\u202eice","value":1`), 422, "invalid_argument"},
		{"member bidi isolate", "POST", scores, writeKey, ev(`"member":"al\u2066ice","value":1`), 422, "invalid_argument"},
		{"name too long", "POST", scores, writeKey, ev(`"member":"alice","value":1,"name":"` + strings.Repeat("é", 65) + `"`), 422, "invalid_argument"},
		{"name control character", "POST", scores, writeKey, ev(`"member":"alice","value":1,"name":"A\u0000"`), 422, "invalid_argument"},
		{"name bidi override", "POST", scores, writeKey, ev(`"member":"alice","value":1,"name":"\u202dAlice"`), 422, "invalid_argument"},
		{"empty name", "POST", scores, writeKey, ev(`"member":"alice","value":1,"name":""`), 422, "invalid_argument"},
		{"empty id", "POST", scores, writeKey, ev(`"member":"alice","value":1,"id":""`), 422, "invalid_argument"},
		{"empty at", "POST", scores, writeKey, ev(`"member":"alice","value":1,"at":""`), 422, "invalid_argument"},
		{"id too long", "POST", scores, writeKey, ev(`"member":"alice","value":1,"id":"` + strings.Repeat("i", 129) + `"`), 422, "invalid_argument"},
		{"at not RFC 3339", "POST", scores, writeKey, ev(`"member":"alice","value":1,"at":"yesterday"`), 422, "invalid_argument"},
		{"at before lateness", "POST", scores, writeKey, ev(`"member":"alice","value":1,"at":"` + tooOld + `"`), 422, "invalid_argument"},
		{"at in the future", "POST", scores, writeKey, ev(`"member":"alice","value":1,"at":"` + tooNew + `"`), 422, "invalid_argument"},
		{"unknown board", "POST", "/api/v1/boards/nope/scores", writeKey, ev(`"member":"alice","value":1`), 404, "not_found"},
		{"unknown board batch", "POST", "/api/v1/boards/nope/scores/batch", writeKey, `{"events":[]}`, 404, "not_found"},
		{"oversized batch", "POST", batch, writeKey, many.String(), 422, "invalid_argument"},
		{"batch without events", "POST", batch, writeKey, `{}`, 422, "invalid_argument"},
		{"batch events not a list", "POST", batch, writeKey, `{"events":5}`, 400, "invalid_argument"},
		{"batch malformed", "POST", batch, writeKey, `{"events":[`, 400, "invalid_argument"},
		{"body over 1 MiB", "POST", scores, writeKey, huge, 413, "too_large"},
		{"missing key", "POST", scores, "", ev(`"member":"alice","value":1`), 401, "unauthorized"},
		{"wrong key", "POST", scores, "not-a-key", ev(`"member":"alice","value":1`), 401, "unauthorized"},
		{"missing key batch", "POST", batch, "", `{"events":[{"member":"alice","value":1}]}`, 401, "unauthorized"},
		{"missing key delete", "DELETE", "/api/v1/boards/points/members/alice", "", "", 401, "unauthorized"},
		{"wrong key delete", "DELETE", "/api/v1/boards/points/members/alice", "nope", "", 401, "unauthorized"},
		{"write key on delete", "DELETE", "/api/v1/boards/points/members/alice", writeKey, "", 403, "forbidden"},
		{"unknown board read", "GET", "/api/v1/boards/nope/week", "", "", 404, "not_found"},
		{"unknown view", "GET", "/api/v1/boards/points/hour", "", "", 404, "not_found"},
		{"unknown view member", "GET", "/api/v1/boards/points/month/members/alice", "", "", 404, "not_found"},
		{"unknown board delete", "DELETE", "/api/v1/boards/nope/members/alice", adminKey, "", 404, "not_found"},
		{"period coarser than view", "GET", "/api/v1/boards/points/week?period=2026-11", "", "", 422, "invalid_argument"},
		{"period garbage", "GET", "/api/v1/boards/points/day?period=soon", "", "", 422, "invalid_argument"},
		{"member card bad period", "GET", "/api/v1/boards/points/day/members/alice?period=2026-13-01", "", "", 422, "invalid_argument"},
		{"negative offset", "GET", "/api/v1/boards/points/week?offset=-1", "", "", 422, "invalid_argument"},
		{"offset not a number", "GET", "/api/v1/boards/points/week?offset=x", "", "", 422, "invalid_argument"},
		{"limit zero", "GET", "/api/v1/boards/points/week?limit=0", "", "", 422, "invalid_argument"},
		{"limit too big", "GET", "/api/v1/boards/points/week?limit=1001", "", "", 422, "invalid_argument"},
		{"query checked before lookup", "GET", "/api/v1/boards/nope/week?limit=0", "", "", 422, "invalid_argument"},
		{"around too big", "GET", "/api/v1/boards/points/week/members/alice?around=51", "", "", 422, "invalid_argument"},
		{"around negative", "GET", "/api/v1/boards/points/week/members/alice?around=-1", "", "", 422, "invalid_argument"},
		{"member without score", "GET", "/api/v1/boards/points/week/members/nobody", "", "", 404, "not_found"},
		{"delete member on none", "DELETE", "/api/v1/boards/points/members/nobody", adminKey, "", 404, "not_found"},
		{"unknown route", "GET", "/api/v2/nothing", "", "", 404, "not_found"},
		{"wrong method", "PUT", "/api/v1/boards", "", "", 405, "invalid_argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, tc.method, tc.path, tc.key, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d; body %.300s", r.Status, tc.status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			if code := r.ErrorCode(t); code != tc.code {
				t.Errorf("code %q, want %q; body %s", code, tc.code, r.Body)
			}
			if tc.status == 401 && r.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	if after := f.snapshot(t); after != before {
		t.Errorf("a refused request changed the boards:\nbefore %s\nafter  %s", before, after)
	}
}

// TestBodyOverLimitWithoutLength: a chunked body (no Content-Length) is cut
// at 1 MiB while reading.
func TestBodyOverLimitWithoutLength(t *testing.T) {
	f := MustFixture(t)
	body := `{"member":"alice","value":1,"name":"` + strings.Repeat("x", 1<<20) + `"}`
	req := httptest.NewRequest("POST", "/api/v1/boards/points/scores", strings.NewReader(body))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+writeKey)
	r := f.serve(req)
	if r.Status != http.StatusRequestEntityTooLarge || r.ErrorCode(t) != "too_large" {
		t.Fatalf("status %d body %.200s", r.Status, r.Body)
	}
}

// TestMalformedAuthorization: schemes other than Bearer and empty keys are 401.
func TestMalformedAuthorization(t *testing.T) {
	f := MustFixture(t)
	for _, h := range []string{"Basic " + writeKey, "Bearer", "Bearer ", writeKey, "Token " + writeKey} {
		t.Run(h, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/api/v1/boards/points/scores", strings.NewReader(`{"member":"a","value":1}`))
			req.Header.Set("Authorization", h)
			r := f.serve(req)
			if r.Status != 401 || r.ErrorCode(t) != "unauthorized" || r.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("status %d headers %v body %s", r.Status, r.Header, r.Body)
			}
		})
	}
}
