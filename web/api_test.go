package web_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/standings/standings/web"
)

func TestWriteScoreAndReadBack(t *testing.T) {
	f := MustFixture(t)
	r := MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey,
		`{"member":"alice","value":12.5,"name":"Alice","id":"evt-1","at":"2026-11-22T17:30:00+08:00"}`))
	want := `{"board":"points","member":"alice","duplicate":false,"views":{` +
		`"day":{"period":"2026-11-22","score":12.5,"rank":1},` +
		`"week":{"period":"2026-11-16","score":12.5,"rank":1},` +
		`"all":{"period":"all","score":12.5,"rank":1}}}`
	if got := strings.TrimSpace(r.Body); got != want {
		t.Fatalf("answer\n got %s\nwant %s", got, want)
	}
	// The same event again, its at in UTC and written with RFC 3339's lower
	// case t and z: a duplicate.
	if r := MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey,
		`{"member":"alice","value":12.5,"name":"Alice","id":"evt-1","at":"2026-11-22t09:30:00z"}`)); !strings.Contains(r.Body, `"duplicate":true`) {
		t.Fatalf("the same event with a lower-case at: %s", r.Body)
	}
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"bob","value":20}`))

	page := MustOK(t, f.get(t, "/api/v1/boards/points/week?limit=10")).Body
	wantPage := `{"board":"points","view":"week","period":"2026-11-16",` +
		`"start":"2026-11-16T00:00:00Z","end":"2026-11-23T00:00:00Z","final":false,"total":2,"entries":[` +
		`{"rank":1,"member":"bob","name":null,"score":20,"previous_rank":null},` +
		`{"rank":2,"member":"alice","name":"Alice","score":12.5,"previous_rank":null}]}`
	if got := strings.TrimSpace(page); got != wantPage {
		t.Fatalf("page\n got %s\nwant %s", got, wantPage)
	}
	all := MustOK(t, f.get(t, "/api/v1/boards/points/all?offset=1&limit=1")).JSON(t)
	if all["start"] != nil || all["end"] != nil || all["final"] != false || all["period"] != "all" {
		t.Errorf("all page %v", all)
	}
	if e := all["entries"].([]any); len(e) != 1 || e[0].(map[string]any)["member"] != "alice" {
		t.Errorf("offset 1 entries %v", e)
	}
	past := MustOK(t, f.get(t, "/api/v1/boards/points/day?period=2026-11-01")).JSON(t)
	if past["total"] != json.Number("0") || past["final"] != true {
		t.Errorf("past day %v", past)
	}

	card := MustOK(t, f.get(t, "/api/v1/boards/points/week/members/alice?around=1")).Body
	wantCard := `{"board":"points","view":"week","period":"2026-11-16","member":"alice","name":"Alice",` +
		`"rank":2,"score":12.5,"total":2,"top_percent":100,"around":[` +
		`{"rank":1,"member":"bob","name":null,"score":20},` +
		`{"rank":2,"member":"alice","name":"Alice","score":12.5}]}`
	if got := strings.TrimSpace(card); got != wantCard {
		t.Fatalf("card\n got %s\nwant %s", got, wantCard)
	}
	bob := MustOK(t, f.get(t, "/api/v1/boards/points/week/members/bob?around=0&period=2026-11-20")).JSON(t)
	if bob["top_percent"] != json.Number("50") || len(bob["around"].([]any)) != 1 {
		t.Errorf("bob card %v", bob)
	}
}

func TestMemberWithEscapedPath(t *testing.T) {
	f := MustFixture(t)
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"a/b 100%","value":1}`))
	r := MustOK(t, f.get(t, "/api/v1/boards/points/all/members/a%2Fb%20100%25")).JSON(t)
	if r["member"] != "a/b 100%" {
		t.Errorf("member %v", r["member"])
	}
	MustOK(t, f.do(t, "DELETE", "/api/v1/boards/points/members/a%2Fb%20100%25", adminKey, ""))
}

func TestDuplicateAndConflict(t *testing.T) {
	f := MustFixture(t)
	const ev = `{"member":"alice","value":3,"id":"evt-7"}`
	first := MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, ev)).JSON(t)
	if first["duplicate"] != false {
		t.Fatalf("first %v", first)
	}
	again := MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", adminKey, ev)).JSON(t)
	if again["duplicate"] != true {
		t.Fatalf("repeat %v", again)
	}
	all := again["views"].(map[string]any)["all"].(map[string]any)
	if all["score"] != json.Number("3") {
		t.Errorf("repeat counted twice: %v", all)
	}
	r := f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"alice","value":4,"id":"evt-7"}`)
	if r.Status != http.StatusConflict || r.ErrorCode(t) != "conflict" {
		t.Fatalf("conflict: %d %s", r.Status, r.Body)
	}
}

func TestBatchWithOneBadEvent(t *testing.T) {
	f := MustFixture(t)
	body := `{"events":[
		{"member":"alice","value":1.5},
		{"member":"bob","value":"2"},
		{"member":"carol","value":2000},
		{"member":"dave","value":2,"extra":1},
		{"member":"erin","value":4}]}`
	r := MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey, body))
	var out struct {
		Results []struct {
			Member *string `json:"member"`
			Views  map[string]struct {
				Score json.Number `json:"score"`
			} `json:"views"`
			Error *struct{ Code, Message string } `json:"error"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.Body), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 5 {
		t.Fatalf("%d results: %s", len(out.Results), r.Body)
	}
	for i, bad := range []bool{false, true, true, true, false} {
		res := out.Results[i]
		if bad != (res.Error != nil) || bad == (res.Member != nil) {
			t.Errorf("result %d: %s", i, r.Body)
			continue
		}
		if bad && (res.Error.Code != "invalid_argument" || res.Error.Message == "") {
			t.Errorf("result %d error %+v", i, res.Error)
		}
	}
	if got := out.Results[0].Views["all"].Score; got != "1.5" {
		t.Errorf("alice score %s", got)
	}
	page := MustOK(t, f.get(t, "/api/v1/boards/points/all")).JSON(t)
	if page["total"] != json.Number("2") {
		t.Errorf("total after batch: %v", page)
	}
	empty := MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey, `{"events":[]}`))
	if strings.TrimSpace(empty.Body) != `{"results":[]}` {
		t.Errorf("empty batch %s", empty.Body)
	}
}

// TestBatchWithoutRanks: "ranks": false answers each view's period and
// score without a rank key; the default and true answer ranks; any other
// value is refused before anything is written.
func TestBatchWithoutRanks(t *testing.T) {
	f := MustFixture(t)
	const batch = "/api/v1/boards/points/scores/batch"
	MustOK(t, f.do(t, "POST", batch, writeKey, `{"events":[{"member":"alice","value":5}]}`))
	r := MustOK(t, f.do(t, "POST", batch, writeKey, `{"events":[{"member":"bob","value":7},{"member":"carol","value":2000}],"ranks":false}`))
	var out struct {
		Results []struct {
			Views map[string]map[string]json.RawMessage `json:"views"`
			Error *struct{ Code string }                `json:"error"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.Body), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 2 || out.Results[1].Error == nil || out.Results[1].Error.Code != "invalid_argument" {
		t.Fatalf("results: %s", r.Body)
	}
	if len(out.Results[0].Views) != 3 {
		t.Fatalf("views: %s", r.Body)
	}
	for view, vs := range out.Results[0].Views {
		if _, ok := vs["rank"]; ok || string(vs["score"]) != "7" || len(vs["period"]) < 3 {
			t.Errorf("view %s without ranks: %s", view, r.Body)
		}
	}
	// The write happened: bob leads alice.
	if card := MustOK(t, f.get(t, "/api/v1/boards/points/all/members/bob")).JSON(t); card["rank"] != json.Number("1") {
		t.Errorf("bob's card after an unranked batch: %v", card)
	}
	for _, body := range []string{
		`{"events":[{"member":"dave","value":1}],"ranks":true}`,
		`{"events":[{"member":"dave","value":1}]}`,
	} {
		r := MustOK(t, f.do(t, "POST", batch, writeKey, body))
		if !strings.Contains(r.Body, `"rank":3`) {
			t.Errorf("%s: want ranks, got %s", body, r.Body)
		}
	}
	before := f.dump()
	for _, ranks := range []string{`"false"`, `0`, `1`, `null`, `{}`, `[]`, `"no"`} {
		r := f.do(t, "POST", batch, writeKey, `{"events":[{"member":"erin","value":1}],"ranks":`+ranks+`}`)
		if r.Status != 422 || r.ErrorCode(t) != "invalid_argument" {
			t.Errorf("ranks %s: %d %s", ranks, r.Status, r.Body)
		}
	}
	f.MustUnchanged(t, before)
}

func TestExactScoreRoundTrip(t *testing.T) {
	f := MustFixture(t)
	for _, v := range []string{"12.5", "0.1", "0.2"} {
		MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"alice","value":`+v+`}`))
	}
	r := MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"bob","value":1.25e1}`))
	if !strings.Contains(r.Body, `"score":12.5,`) {
		t.Errorf("1.25e1 answered %s", r.Body)
	}
	page := MustOK(t, f.get(t, "/api/v1/boards/points/all")).Body
	if !strings.Contains(page, `"member":"alice","name":null,"score":12.8,"previous_rank":null}`) || !strings.Contains(page, `"member":"bob","name":null,"score":12.5,"previous_rank":null}`) {
		t.Errorf("page %s", page)
	}
	lap := MustOK(t, f.do(t, "POST", "/api/v1/boards/lap/scores", writeKey, `{"member":"carol","value":61.125}`))
	if !strings.Contains(lap.Body, `"score":61.125,`) {
		t.Errorf("lap %s", lap.Body)
	}
}

func TestListBoards(t *testing.T) {
	f := MustFixture(t)
	r := MustOK(t, f.get(t, "/api/v1/boards")).Body
	want := `{"boards":[` +
		`{"id":"points","title":"Points","order":"desc","update":"increment","ties":"first","decimals":1,"min_score":-1000,"max_score":1000,` +
		`"views":[{"view":"day","tie_resolution":"1ms"},{"view":"week","tie_resolution":"1ms"},{"view":"all","tie_resolution":"1s"}],"segments":[]},` +
		`{"id":"lap","title":"Fastest lap","order":"asc","update":"best","ties":"shared","decimals":3,"min_score":0,"max_score":3600,` +
		`"views":[{"view":"week"},{"view":"all"}],"segments":[]}]}`
	if got := strings.TrimSpace(r); got != want {
		t.Fatalf("boards\n got %s\nwant %s", got, want)
	}
}

func TestRemoveMember(t *testing.T) {
	f := MustFixture(t)
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"cheat","value":999}`))
	r := MustOK(t, f.do(t, "DELETE", "/api/v1/boards/points/members/cheat", adminKey, ""))
	if strings.TrimSpace(r.Body) != `{"removed":true}` {
		t.Errorf("body %s", r.Body)
	}
	if r := f.get(t, "/api/v1/boards/points/all/members/cheat"); r.Status != http.StatusNotFound {
		t.Errorf("after removal: %d %s", r.Status, r.Body)
	}
	if r := f.do(t, "DELETE", "/api/v1/boards/points/members/cheat", adminKey, ""); r.Status != http.StatusNotFound || r.ErrorCode(t) != "not_found" {
		t.Errorf("second removal: %d %s", r.Status, r.Body)
	}
}

func TestHealth(t *testing.T) {
	f := MustFixture(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := MustOK(t, f.get(t, p)); strings.TrimSpace(r.Body) != `{"status":"ok"}` {
			t.Errorf("%s: %s", p, r.Body)
		}
	}
}

func TestFrameHeaders(t *testing.T) {
	f := MustFixture(t)
	for _, p := range []string{"/healthz", "/api/v1/boards", "/nowhere", "/embed/points/week"} {
		r := f.get(t, p)
		h := r.Header
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: %v", p, h)
		}
		framed := strings.HasPrefix(p, "/embed/")
		csp := h.Get("Content-Security-Policy")
		if framed != (h.Get("X-Frame-Options") == "") || framed != strings.HasSuffix(csp, "frame-ancestors *") {
			t.Errorf("%s: frame headers %v", p, h)
		}
		if !framed && (h.Get("X-Frame-Options") != "DENY" || !strings.HasSuffix(csp, "frame-ancestors 'none'")) {
			t.Errorf("%s: frame headers %v", p, h)
		}
	}
}

func TestRedisDown(t *testing.T) {
	f := MustFixture(t)
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"alice","value":1}`))
	f.mr.Close()
	for _, tc := range []struct{ method, path, key, body string }{
		{"POST", "/api/v1/boards/points/scores", writeKey, `{"member":"alice","value":1}`},
		{"POST", "/api/v1/boards/points/scores/batch", writeKey, `{"events":[{"member":"alice","value":1}]}`},
		{"GET", "/api/v1/boards/points/week", "", ""},
		{"GET", "/api/v1/boards/points/week/members/alice", "", ""},
		{"DELETE", "/api/v1/boards/points/members/alice", adminKey, ""},
		{"GET", "/readyz", "", ""},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel() // each waits out the client's retries; do so at once
			start := time.Now()
			r := f.do(t, tc.method, tc.path, tc.key, tc.body)
			if took := time.Since(start); took > 2500*time.Millisecond {
				t.Errorf("took %v", took)
			}
			if r.Status != http.StatusServiceUnavailable || r.ErrorCode(t) != "unavailable" {
				t.Errorf("status %d body %s", r.Status, r.Body)
			}
		})
	}
}

func TestHealthzWithoutRedis(t *testing.T) {
	f := MustFixture(t)
	f.mr.Close()
	MustOK(t, f.get(t, "/healthz"))
}

// TestZeroIncrementHasNoRank: a member a zero increment left absent answers
// score 0 and rank null.
func TestZeroIncrementHasNoRank(t *testing.T) {
	f := MustFixture(t)
	r := MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"idle","value":0}`))
	if !strings.Contains(r.Body, `"all":{"period":"all","score":0,"rank":null}`) {
		t.Errorf("answer %s", r.Body)
	}
}

// TestInvalidUnicodeRefused: bytes that are not UTF-8 and lone surrogate
// escapes are 400 in every string field, single and batch, where they used
// to become U+FFFD (so "a\xffb" and "a\xfeb" were one member).
func TestInvalidUnicodeRefused(t *testing.T) {
	f := MustFixture(t)
	before := f.dump()
	bad := map[string]string{
		"byte ff":        "a\xffb",
		"byte fe":        "a\xfeb",
		"overlong slash": "a\xc0\xafb",
		"lone high":      `a\ud800b`,
		"high at end":    `a\ud800`,
		"high then text": `a\ud800\u0041`,
		"lone low":       `a\udc00b`,
		"two highs":      `\ud800\ud800`,
	}
	for name, s := range bad {
		for _, field := range []string{"member", "name", "id", "at"} {
			body := `{"member":"alice","value":1,"` + field + `":"` + s + `"}`
			if field == "member" {
				body = `{"member":"` + s + `","value":1}`
			}
			for _, path := range []string{"/api/v1/boards/points/scores", "/api/v1/boards/points/scores/batch"} {
				b := body
				if strings.HasSuffix(path, "batch") {
					b = `{"events":[{"member":"bob","value":1},` + body + `]}`
				}
				t.Run(name+"/"+field+"/"+path[len(path)-5:], func(t *testing.T) {
					r := f.do(t, "POST", path, writeKey, b)
					if r.Status != http.StatusBadRequest || r.ErrorCode(t) != "invalid_argument" {
						t.Fatalf("status %d body %s", r.Status, r.Body)
					}
					f.MustUnchanged(t, before)
				})
			}
		}
	}
	// A surrogate pair is one valid character.
	r := MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"a\ud83d\ude00b","value":1}`))
	if !strings.Contains(r.Body, `"member":"a😀b"`) {
		t.Fatalf("pair: %s", r.Body)
	}
}

// TestJSONKeysExact: keys match exactly (no case folding) and appear once.
func TestJSONKeysExact(t *testing.T) {
	f := MustFixture(t)
	before := f.dump()
	for _, tc := range []struct {
		name, path, body string
		status           int
		mention          string
	}{
		{"upper-case member", "scores", `{"MEMBER":"x","value":1}`, 422, `"MEMBER"`},
		{"title-case value", "scores", `{"member":"x","Value":1}`, 422, `"Value"`},
		{"upper-case events", "scores/batch", `{"EVENTS":[]}`, 422, `"EVENTS"`},
		{"duplicate member", "scores", `{"member":"x","member":"y","value":1}`, 400, `"member"`},
		{"duplicate value", "scores", `{"member":"x","value":1,"value":2}`, 400, `"value"`},
		{"duplicate events", "scores/batch", `{"events":[],"events":[{"member":"x","value":1}]}`, 400, `"events"`},
		{"duplicate in nested object", "scores", `{"member":"x","value":{"a":1,"a":2}}`, 400, `"a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, "POST", "/api/v1/boards/points/"+tc.path, writeKey, tc.body)
			msg, _ := r.JSON(t)["error"].(map[string]any)["message"].(string)
			if r.Status != tc.status || r.ErrorCode(t) != "invalid_argument" || !strings.Contains(msg, tc.mention) {
				t.Fatalf("status %d body %s; want %d naming %s", r.Status, r.Body, tc.status, tc.mention)
			}
			f.MustUnchanged(t, before)
		})
	}
	// A repeated key anywhere makes the whole body malformed, as a syntax
	// error in one event does.
	r := f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey, `{"events":[{"member":"y","value":2,"member":"z"},{"member":"ok","value":3}]}`)
	if r.Status != 400 {
		t.Fatalf("duplicate in an event: %d %s", r.Status, r.Body)
	}
	f.MustUnchanged(t, before)
	// An unknown field is that event's error; the others apply.
	r = MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey,
		`{"events":[{"Member":"x","value":1},{"member":"y","value":2,"colour":"red"},{"member":"ok","value":3}]}`))
	var out struct {
		Results []struct {
			Member string `json:"member"`
			Error  *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.Body), &out); err != nil || len(out.Results) != 3 {
		t.Fatalf("%v: %s", err, r.Body)
	}
	if e := out.Results[0].Error; e == nil || e.Code != "invalid_argument" || !strings.Contains(e.Message, `"Member"`) {
		t.Errorf("event 0: %s", r.Body)
	}
	if e := out.Results[1].Error; e == nil || e.Code != "invalid_argument" || !strings.Contains(e.Message, `"colour"`) {
		t.Errorf("event 1: %s", r.Body)
	}
	if out.Results[2].Error != nil || out.Results[2].Member != "ok" {
		t.Errorf("event 2: %s", r.Body)
	}
}

// TestZeroAtRefused: the zero instant is an explicit at far outside the
// lateness window, not "now".
func TestZeroAtRefused(t *testing.T) {
	f := MustFixture(t)
	before := f.dump()
	for _, at := range []string{"0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z", "0001-01-01T08:00:00+08:00", "0000-12-31T23:00:00-01:00"} {
		t.Run(at, func(t *testing.T) {
			r := f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"alice","value":1,"at":"`+at+`"}`)
			if r.Status != 422 || r.ErrorCode(t) != "invalid_argument" || !strings.Contains(r.Body, "lateness") {
				t.Fatalf("status %d body %s", r.Status, r.Body)
			}
			r = MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey, `{"events":[{"member":"alice","value":1,"at":"`+at+`"}]}`))
			if !strings.Contains(r.Body, `"code":"invalid_argument"`) || strings.Contains(r.Body, `"views"`) {
				t.Fatalf("batch: %s", r.Body)
			}
			f.MustUnchanged(t, before)
		})
	}
}

// slowPost sends a POST over a real connection, the body in pieces with a
// pause between them, and returns the status line and the body.
func slowPost(t *testing.T, addr, path, body string, pieces int, pause time.Duration) (string, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", path, writeKey, len(body))
	step := (len(body) + pieces - 1) / pieces
	for i := 0; i < len(body); i += step {
		if _, err := conn.Write([]byte(body[i:min(i+step, len(body))])); err != nil {
			break // the server answered early and closed
		}
		time.Sleep(pause)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status, string(b)
}

// TestSlowBody: the body has a timeout of its own, answered 408, and the
// store's deadline starts only once the body is in: a body slower than
// StoreTimeout but within the body timeout is applied.
func TestSlowBody(t *testing.T) {
	t.Parallel() // waits on an outage or a slow client, on its own server
	body := `{"events":[` + strings.Repeat(`{"member":"slow","value":1},`, 99) + `{"member":"slow","value":1}]}`

	t.Run("too slow", func(t *testing.T) {
		f := MustFixtureWith(t, web.Options{WriteRate: -1, BodyTimeout: 300 * time.Millisecond})
		before := f.dump()
		hs := httptest.NewServer(f.handler)
		defer hs.Close()
		status, got := slowPost(t, hs.Listener.Addr().String(), "/api/v1/boards/points/scores/batch", body, 20, 50*time.Millisecond)
		if !strings.HasPrefix(status, "408") || !strings.Contains(got, `"code":"invalid_argument"`) {
			t.Fatalf("%s %s", status, got)
		}
		f.MustUnchanged(t, before)
		if n, _ := MustMetrics(t, f).value("standings_redis_errors_total", map[string]string{}); n != 0 {
			t.Errorf("a slow body counted as %v Redis errors", n)
		}
	})
	t.Run("slower than the store deadline", func(t *testing.T) {
		f := MustFixtureWith(t, web.Options{WriteRate: -1, BodyTimeout: 20 * time.Second})
		hs := httptest.NewServer(f.handler)
		defer hs.Close()
		status, got := slowPost(t, hs.Listener.Addr().String(), "/api/v1/boards/points/scores/batch", body, 10, web.StoreTimeout/8)
		if !strings.HasPrefix(status, "200") {
			t.Fatalf("%s %s", status, got)
		}
		page := MustOK(t, f.get(t, "/api/v1/boards/points/all/members/slow")).Body
		if !strings.Contains(page, `"score":100`) {
			t.Fatalf("card %s", page)
		}
	})
}

// TestStalledBodyIsAnswered: a client that stops sending its body midway
// gets its answer (401 without a key, 422 for a bad query, 404 for no
// route, 200 from a route that takes no body, 408 once the body timeout
// passes), and the connection closes: the server neither waits for the
// rest nor reads it.
func TestStalledBodyIsAnswered(t *testing.T) {
	t.Parallel() // waits for the body timeout, on its own server
	f := MustFixtureWith(t, web.Options{WriteRate: -1, BodyTimeout: 300 * time.Millisecond})
	hs := httptest.NewUnstartedServer(f.handler)
	hs.Config.ReadTimeout = time.Minute // as cmd/standings sets it: far past the test's wait
	hs.Start()
	t.Cleanup(hs.Close)
	for _, c := range []struct{ method, path, key, status string }{
		{"POST", "/api/v1/boards/points/scores", "", "401"},
		{"POST", "/api/v1/boards/points/scores", writeKey, "408"},
		{"POST", "/api/v1/boards/points/scores?x=1&x=2", writeKey, "422"},
		{"POST", "/api/v1/boards/nope/scores/x", writeKey, "404"},
		{"GET", "/api/v1/boards/points/week", "", "200"},
	} {
		t.Run(c.method+" "+c.path+" "+c.status, func(t *testing.T) {
			conn, err := net.Dial("tcp", hs.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
			auth := ""
			if c.key != "" {
				auth = "Authorization: Bearer " + c.key + "\r\n"
			}
			// 10 bytes of the 100 announced, then nothing.
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"member\":", c.method, c.path, auth)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if !strings.HasPrefix(resp.Status, c.status) || !resp.Close {
				t.Fatalf("%s, Connection: close %v; want %s and close", resp.Status, resp.Close, c.status)
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("the connection stayed open: %v", err)
			}
		})
	}
}

// rawGet sends a request line as given over a real connection.
func rawGet(t *testing.T, addr, target string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", target)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestBadEscapeInPath: net/http refuses a target with a bad escape before
// any handler runs; the Server's Listener turns its plain-text 400 into the
// contract's error body (the HTML error page for pages).
func TestBadEscapeInPath(t *testing.T) {
	f := MustFixture(t)
	hs := httptest.NewUnstartedServer(f.handler)
	hs.Listener = f.srv.Listener(hs.Listener)
	hs.Start()
	defer hs.Close()
	addr := hs.Listener.Addr().String()

	for _, target := range []string{"/api/v1/boards/points/day/members/a%zzb", "/api/v1/boards/points/day/members/a%", "/api/v1/boards/p%4"} {
		resp, body := rawGet(t, addr, target)
		if resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			!strings.Contains(body, `"code":"invalid_argument"`) || !strings.Contains(body, "escape") {
			t.Errorf("%s: %d %v %s", target, resp.StatusCode, resp.Header, body)
		}
	}
	resp, body := rawGet(t, addr, "/boards/points/day/members/a%zzb")
	if resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "escape") {
		t.Errorf("page: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("page without the security headers: %v", resp.Header)
	}
	// A good escape still works; a bad escape in the query is refused too.
	if resp, body := rawGet(t, addr, "/api/v1/boards/points/day/members/a%25b"); resp.StatusCode != 404 || !strings.Contains(body, `"not_found"`) {
		t.Errorf("good escape: %d %s", resp.StatusCode, body)
	}
	if resp, body := rawGet(t, addr, "/api/v1/boards/points/day?limit=%zz"); resp.StatusCode != 422 || !strings.Contains(body, `"invalid_argument"`) {
		t.Errorf("query: %d %s", resp.StatusCode, body)
	}
	fams := MustMetrics(t, f)
	if got, _ := fams.value("standings_http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "status": "400"}); got != 4 {
		t.Errorf("bad escapes counted %v times, want 4", got)
	}
}

// TestAPI503RetryAfter: an API request Redis fails says when to come back.
func TestAPI503RetryAfter(t *testing.T) {
	t.Parallel() // waits on an outage or a slow client, on its own server
	f := MustFixture(t)
	f.mr.Close()
	for _, r := range []response{
		f.get(t, "/api/v1/boards/points/week"),
		f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"a","value":1}`),
	} {
		if r.Status != 503 || r.ErrorCode(t) != "unavailable" || r.Header.Get("Retry-After") == "" {
			t.Errorf("status %d headers %v body %s", r.Status, r.Header, r.Body)
		}
	}
}

// TestOutageLogBounded: every request failing on a Redis outage does not
// mean a log line each.
func TestOutageLogBounded(t *testing.T) {
	t.Parallel() // waits on an outage or a slow client, on its own server
	var buf syncBuffer
	f := MustFixtureWith(t, web.Options{WriteRate: -1, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	f.mr.SetError("LOADING Redis is loading the dataset in memory") // fails every call at once
	start := time.Now()
	for range 40 { // go-redis retries LOADING for a while: each takes ~0.1 s
		if r := f.get(t, "/api/v1/boards/points/week"); r.Status != 503 {
			t.Fatalf("status %d %s", r.Status, r.Body)
		}
	}
	// The budget: a burst of 10, then one line (and one "suppressed" line)
	// per second that passed.
	lines := strings.Count(buf.String(), "request failed")
	if ceiling := 10 + 2*int(time.Since(start)/time.Second+1); lines == 0 || lines > ceiling {
		t.Fatalf("%d log lines for 40 failed requests, ceiling %d:\n%s", lines, ceiling, buf.String())
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
