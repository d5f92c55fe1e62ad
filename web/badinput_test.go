package web_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/web"
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
	f := MustFixtureWith(t, web.Options{WriteRate: -1, BodyTimeout: 300 * time.Millisecond})
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

	long := strings.Repeat("m", 129)
	u8 := func(field, v string) string { // a body with v in field
		if field == "member" {
			return `{"member":"` + v + `","value":1}`
		}
		return `{"member":"alice","value":1,"` + field + `":"` + v + `"}`
	}
	more := []badCase{
		// Values that are not finite JSON numbers, or not JSON at all.
		{name: "value 1e400", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":1e400`), status: 422, code: "invalid_argument"},
		{name: "value 1e-400", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":1e-400`), status: 422, code: "invalid_argument"},
		{name: "value -Infinity", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":-Infinity`), status: 400, code: "invalid_argument"},
		{name: "value +1", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":+1`), status: 400, code: "invalid_argument"},
		{name: "value .5", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":.5`), status: 400, code: "invalid_argument"},
		{name: "value 1.", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":1.`), status: 400, code: "invalid_argument"},
		{name: "value 01", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":01`), status: 400, code: "invalid_argument"},
		{name: "value hex", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":0x10`), status: 400, code: "invalid_argument"},
		{name: "value array", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":[1]`), status: 400, code: "invalid_argument"},
		{name: "value over max", method: "POST", path: "/api/v1/boards/lap/scores", key: writeKey, body: ev(`"member":"carol","value":1e10`), status: 422, code: "invalid_argument"},
		// Invalid Unicode in every string field, single and batch.
		{name: "member byte ff", method: "POST", path: scores, key: writeKey, body: u8("member", "a\xffb"), status: 400, code: "invalid_argument"},
		{name: "member lone surrogate", method: "POST", path: scores, key: writeKey, body: u8("member", `a\ud800b`), status: 400, code: "invalid_argument"},
		{name: "name byte fe", method: "POST", path: scores, key: writeKey, body: u8("name", "A\xfe"), status: 400, code: "invalid_argument"},
		{name: "name lone low surrogate", method: "POST", path: scores, key: writeKey, body: u8("name", `A\udc00`), status: 400, code: "invalid_argument"},
		{name: "id truncated UTF-8", method: "POST", path: scores, key: writeKey, body: u8("id", "evt-\xe2\x82"), status: 400, code: "invalid_argument"},
		{name: "id lone surrogate", method: "POST", path: scores, key: writeKey, body: u8("id", `evt\ud800`), status: 400, code: "invalid_argument"},
		{name: "at byte ff", method: "POST", path: scores, key: writeKey, body: u8("at", "2026-11-22T10:00:00Z\xff"), status: 400, code: "invalid_argument"},
		{name: "at lone surrogate", method: "POST", path: scores, key: writeKey, body: u8("at", `\udbff2026-11-22T10:00:00Z`), status: 400, code: "invalid_argument"},
		{name: "batch member byte ff", method: "POST", path: batch, key: writeKey, body: `{"events":[` + u8("member", "a\xffb") + `]}`, status: 400, code: "invalid_argument"},
		{name: "batch name lone surrogate", method: "POST", path: batch, key: writeKey, body: `{"events":[` + u8("name", `\ud800`) + `]}`, status: 400, code: "invalid_argument"},
		// Keys: exact and once.
		{name: "key MEMBER", method: "POST", path: scores, key: writeKey, body: `{"MEMBER":"x","value":1}`, status: 422, code: "invalid_argument"},
		{name: "key Events", method: "POST", path: batch, key: writeKey, body: `{"Events":[]}`, status: 422, code: "invalid_argument"},
		{name: "duplicate key", method: "POST", path: scores, key: writeKey, body: `{"member":"x","value":1,"member":"y"}`, status: 400, code: "invalid_argument"},
		{name: "duplicate key in batch event", method: "POST", path: batch, key: writeKey, body: `{"events":[{"member":"x","value":1,"value":2}]}`, status: 400, code: "invalid_argument"},
		// at: the zero instant and far years.
		{name: "at zero instant", method: "POST", path: scores, key: writeKey, body: u8("at", "0001-01-01T00:00:00Z"), status: 422, code: "invalid_argument"},
		{name: "at year 9999", method: "POST", path: scores, key: writeKey, body: u8("at", "9999-12-31T23:59:59Z"), status: 422, code: "invalid_argument"},
		{name: "at year 0", method: "POST", path: scores, key: writeKey, body: u8("at", "0000-01-01T00:00:00Z"), status: 422, code: "invalid_argument"},
		{name: "at without zone", method: "POST", path: scores, key: writeKey, body: u8("at", "2026-11-22T10:00:00"), status: 422, code: "invalid_argument"},
		// Bodies: empty, null, wrong types, wrong content types.
		{name: "null body", method: "POST", path: scores, key: writeKey, body: `null`, status: 422, code: "invalid_argument"},
		{name: "string body", method: "POST", path: scores, key: writeKey, body: `"alice"`, status: 400, code: "invalid_argument"},
		{name: "batch empty body", method: "POST", path: batch, key: writeKey, body: ``, status: 400, code: "invalid_argument"},
		{name: "batch null body", method: "POST", path: batch, key: writeKey, body: `null`, status: 422, code: "invalid_argument"},
		{name: "batch events null", method: "POST", path: batch, key: writeKey, body: `{"events":null}`, status: 422, code: "invalid_argument"},
		{name: "batch events object", method: "POST", path: batch, key: writeKey, body: `{"events":{"member":"x","value":1}}`, status: 400, code: "invalid_argument"},
		{name: "batch events string", method: "POST", path: batch, key: writeKey, body: `{"events":"[]"}`, status: 400, code: "invalid_argument"},
		{name: "batch is an array", method: "POST", path: batch, key: writeKey, body: `[{"member":"x","value":1}]`, status: 400, code: "invalid_argument"},
		{name: "content type text", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":1`), ctype: "text/plain", status: 415, code: "invalid_argument"},
		{name: "content type multipart", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":1`), ctype: "multipart/form-data; boundary=x", status: 415, code: "invalid_argument"},
		{name: "content type xml", method: "POST", path: batch, key: writeKey, body: `{"events":[]}`, ctype: "application/xml", status: 415, code: "invalid_argument"},
		{name: "content type garbage", method: "POST", path: scores, key: writeKey, body: ev(`"member":"alice","value":1`), ctype: ";;;", status: 415, code: "invalid_argument"},
		// Query numbers: huge, signed, spaced, hex, exponent, fractional.
		{name: "offset 1e17", method: "GET", path: "/api/v1/boards/points/week?offset=100000000000000000", status: 422, code: "invalid_argument"},
		{name: "offset past max", method: "GET", path: "/api/v1/boards/points/week?offset=1000000001", status: 422, code: "invalid_argument"},
		{name: "offset 30 digits", method: "GET", path: "/api/v1/boards/points/week?offset=" + strings.Repeat("9", 30), status: 422, code: "invalid_argument"},
		{name: "offset plus", method: "GET", path: "/api/v1/boards/points/week?offset=%2B5", status: 422, code: "invalid_argument"},
		{name: "offset minus zero", method: "GET", path: "/api/v1/boards/points/week?offset=-0", status: 422, code: "invalid_argument"},
		{name: "offset space", method: "GET", path: "/api/v1/boards/points/week?offset=%205", status: 422, code: "invalid_argument"},
		{name: "offset hex", method: "GET", path: "/api/v1/boards/points/week?offset=0x10", status: 422, code: "invalid_argument"},
		{name: "offset exponent", method: "GET", path: "/api/v1/boards/points/week?offset=1e3", status: 422, code: "invalid_argument"},
		{name: "offset fraction", method: "GET", path: "/api/v1/boards/points/week?offset=5.0", status: 422, code: "invalid_argument"},
		{name: "limit plus", method: "GET", path: "/api/v1/boards/points/week?limit=%2B10", status: 422, code: "invalid_argument"},
		{name: "limit huge", method: "GET", path: "/api/v1/boards/points/week?limit=99999999999999999999", status: 422, code: "invalid_argument"},
		{name: "limit arabic digit", method: "GET", path: "/api/v1/boards/points/week?limit=%D9%A3", status: 422, code: "invalid_argument"},
		{name: "limit bad escape", method: "GET", path: "/api/v1/boards/points/week?limit=%zz", status: 422, code: "invalid_argument"},
		{name: "around plus", method: "GET", path: "/api/v1/boards/points/week/members/alice?around=%2B1", status: 422, code: "invalid_argument"},
		{name: "around huge", method: "GET", path: "/api/v1/boards/points/week/members/alice?around=100000000000000000", status: 422, code: "invalid_argument"},
		{name: "page 1e15", method: "GET", path: "/boards/points/day?page=1000000000000000", status: 422},
		{name: "page zero", method: "GET", path: "/boards/points/day?page=0", status: 422},
		{name: "page plus", method: "GET", path: "/boards/points/day?page=%2B2", status: 422},
		{name: "page hex", method: "GET", path: "/boards/points/day?page=0x2", status: 422},
		{name: "embed limit zero", method: "GET", path: "/embed/points/day?limit=0", status: 422},
		{name: "embed limit 51", method: "GET", path: "/embed/points/day?limit=51", status: 422},
		{name: "embed theme", method: "GET", path: "/embed/points/day?theme=blue", status: 422},
		// Live feed parameters, answered before the upgrade.
		{name: "ws limit zero", method: "GET", path: "/ws/points/day?limit=0", status: 422, code: "invalid_argument"},
		{name: "ws limit 101", method: "GET", path: "/ws/points/day?limit=101", status: 422, code: "invalid_argument"},
		{name: "ws limit plus", method: "GET", path: "/ws/points/day?limit=%2B5", status: 422, code: "invalid_argument"},
		{name: "ws limit huge", method: "GET", path: "/ws/points/day?limit=100000000000000000000", status: 422, code: "invalid_argument"},
		{name: "ws member too long", method: "GET", path: "/ws/points/day?member=" + long, status: 422, code: "invalid_argument"},
		{name: "ws member control", method: "GET", path: "/ws/points/day?member=a%07b", status: 422, code: "invalid_argument"},
		{name: "ws unknown board", method: "GET", path: "/ws/nope/day", status: 404, code: "not_found"},
		{name: "ws unknown view", method: "GET", path: "/ws/points/hour", status: 404, code: "not_found"},
		// Path tricks.
		{name: "encoded slash in member", method: "GET", path: "/api/v1/boards/points/day/members/a%2Fb", status: 404, code: "not_found"},
		{name: "encoded dot segment board", method: "GET", path: "/api/v1/boards/%2E%2E/day", status: 404, code: "not_found"},
		{name: "dot segments", method: "GET", path: "/api/v1/boards/points/../points/day", status: 404, code: "not_found"},
		{name: "overlong member read", method: "GET", path: "/api/v1/boards/points/day/members/" + long, status: 422, code: "invalid_argument"},
		{name: "NUL in member read", method: "GET", path: "/api/v1/boards/points/day/members/a%00b", status: 422, code: "invalid_argument"},
		{name: "NUL in member delete", method: "DELETE", path: "/api/v1/boards/points/members/a%00b", key: adminKey, status: 422, code: "invalid_argument"},
		{name: "overlong member delete", method: "DELETE", path: "/api/v1/boards/points/members/" + long, key: adminKey, status: 422, code: "invalid_argument"},
		{name: "invalid UTF-8 member read", method: "GET", path: "/api/v1/boards/points/day/members/a%FFb", status: 422, code: "invalid_argument"},
		{name: "NUL in board", method: "GET", path: "/api/v1/boards/po%00ints/day", status: 404, code: "not_found"},
		// Unknown boards and views on pages.
		{name: "page unknown board", method: "GET", path: "/boards/nope/day", status: 404},
		{name: "page unknown view", method: "GET", path: "/boards/points/hour", status: 404},
		{name: "csv unknown view", method: "GET", path: "/boards/points/hour.csv", status: 404},
		{name: "embed unknown board", method: "GET", path: "/embed/nope/day", status: 404},
		// Authentication on every write route.
		{name: "admin key lowercase scheme wrong key", method: "DELETE", path: "/api/v1/boards/points/members/alice", key: writeKey + "x", status: 401, code: "unauthorized"},
		{name: "write key with bad body", method: "POST", path: batch, key: "nope", body: `{"events":[`, status: 401, code: "unauthorized"},
	}
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
		{"period checked before lookup", "GET", "/api/v1/boards/nope/day?period=garbage", "", "", 422, "invalid_argument"},
		{"round checked before lookup", "GET", "/api/v1/boards/nope/league?round=garbage", "", "", 422, "invalid_argument"},
		{"before checked before lookup", "GET", "/api/v1/boards/nope/day/results?before=garbage", "", "", 422, "invalid_argument"},
		{"empty q checked before lookup", "GET", "/api/v1/boards/nope/members?q=", "", "", 422, "invalid_argument"},
		{"page period checked before lookup", "GET", "/boards/nope/day?period=2026-13-01", "", "", 422, ""},
		{"widget me checked before lookup", "GET", "/embed/nope/league", "", "", 422, ""},
		{"group page me checked before lookup", "GET", "/boards/nope/league/gold/1?me=%01", "", "", 422, ""},
		{"segment form checked before lookup", "GET", "/api/v1/boards/nope/day?segment=bad", "", "", 422, "invalid_argument"},
		{"segment value checked before lookup", "GET", "/api/v1/boards/nope/day?segment=team:a%20b", "", "", 422, "invalid_argument"},
		{"101 members checked before lookup", "GET", "/api/v1/boards/nope/day?members=" + strings.Repeat("m,", 100) + "m", "", "", 422, "invalid_argument"},
		{"no members checked before lookup", "GET", "/api/v1/boards/nope/day?members=", "", "", 422, "invalid_argument"},
		{"around too big", "GET", "/api/v1/boards/points/week/members/alice?around=51", "", "", 422, "invalid_argument"},
		{"around negative", "GET", "/api/v1/boards/points/week/members/alice?around=-1", "", "", 422, "invalid_argument"},
		{"member without score", "GET", "/api/v1/boards/points/week/members/nobody", "", "", 404, "not_found"},
		{"delete member on none", "DELETE", "/api/v1/boards/points/members/nobody", adminKey, "", 404, "not_found"},
		{"unknown route", "GET", "/api/v2/nothing", "", "", 404, "not_found"},
		{"wrong method", "PUT", "/api/v1/boards", "", "", 405, "invalid_argument"},
	}
	all := make([]badCase, 0, len(cases)+len(more))
	for _, tc := range cases {
		all = append(all, badCase{name: tc.name, method: tc.method, path: tc.path, key: tc.key, body: tc.body, status: tc.status, code: tc.code})
	}
	all = append(all, more...)
	if len(all) < 120 {
		t.Fatalf("the catalogue holds %d requests", len(all))
	}
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			dump := f.dump()
			r := f.serve(tc.request())
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d; body %.300s", r.Status, tc.status, r.Body)
			}
			if isPage(tc.path) {
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
					t.Errorf("page error with Content-Type %q", ct)
				}
			} else {
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("Content-Type %q", ct)
				}
				if code := r.ErrorCode(t); code != tc.code {
					t.Errorf("code %q, want %q; body %s", code, tc.code, r.Body)
				}
			}
			if tc.status == 401 && r.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			f.MustUnchanged(t, dump)
		})
	}
	// Slow bodies need a real connection.
	hs := httptest.NewServer(f.handler)
	defer hs.Close()
	for _, path := range []string{scores, batch} {
		t.Run("slow body "+path, func(t *testing.T) {
			dump := f.dump()
			status, body := slowPost(t, hs.Listener.Addr().String(), path, `{"member":"slowpoke","value":1,"name":"a slow client"}`, 10, 60*time.Millisecond)
			if !strings.HasPrefix(status, "408") || !strings.Contains(body, `"invalid_argument"`) {
				t.Fatalf("%s %s", status, body)
			}
			f.MustUnchanged(t, dump)
		})
	}
	if after := f.snapshot(t); after != before {
		t.Errorf("a refused request changed the boards:\nbefore %s\nafter  %s", before, after)
	}
}

// badCase is one request of the catalogue and the answer it must get.
type badCase struct {
	name, method, path, key, body string
	ctype                         string // Content-Type when not application/json
	status                        int
	code                          string
}

func (tc badCase) request() *http.Request {
	var body io.Reader
	if tc.body != "" {
		body = strings.NewReader(tc.body)
	}
	req := httptest.NewRequest(tc.method, "/", body)
	req.URL.Path, req.URL.RawPath, req.URL.RawQuery = "", "", ""
	u, err := url.ParseRequestURI(tc.path)
	if err != nil {
		panic(err)
	}
	req.URL, req.RequestURI = u, tc.path
	switch {
	case tc.ctype != "":
		req.Header.Set("Content-Type", tc.ctype)
	case tc.body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	if tc.key != "" {
		req.Header.Set("Authorization", "Bearer "+tc.key)
	}
	return req
}

// isPage says whether path is answered with HTML.
func isPage(path string) bool {
	return strings.HasPrefix(path, "/boards/") || strings.HasPrefix(path, "/embed/")
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

// TestQuerySemicolon: a ; between query parameters is refused, and the
// message says why (not a bad %-escape).
func TestQuerySemicolon(t *testing.T) {
	f := MustFixture(t)
	r := f.get(t, "/api/v1/boards/points/week?limit=1;limit=2")
	if r.Status != 422 || r.ErrorCode(t) != "invalid_argument" || !strings.Contains(r.Body, "separate parameters with &") {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}
