package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
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
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"bob","value":20}`))

	page := MustOK(t, f.get(t, "/api/v1/boards/points/week?limit=10")).Body
	wantPage := `{"board":"points","view":"week","period":"2026-11-16",` +
		`"start":"2026-11-16T00:00:00Z","end":"2026-11-23T00:00:00Z","final":false,"total":2,"entries":[` +
		`{"rank":1,"member":"bob","name":null,"score":20},` +
		`{"rank":2,"member":"alice","name":"Alice","score":12.5}]}`
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
	if !strings.Contains(page, `"member":"alice","name":null,"score":12.8}`) || !strings.Contains(page, `"member":"bob","name":null,"score":12.5}`) {
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
		`"views":[{"view":"day","tie_resolution":"1ms"},{"view":"week","tie_resolution":"1ms"},{"view":"all","tie_resolution":"1s"}]},` +
		`{"id":"lap","title":"Fastest lap","order":"asc","update":"best","ties":"shared","decimals":3,"min_score":0,"max_score":3600,` +
		`"views":[{"view":"week"},{"view":"all"}]}]}`
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
