package web_test

import (
	"strings"
	"testing"

	"github.com/standings/standings/web"
)

const segmentBoards = `
boards:
  - {id: points, segments: [country, team], views: [day, all]}
  - {id: plain, views: [all]}
`

// TestSegmentsAPI: events carry segments in single and batch writes; the
// list, member and CSV reads take segment=NAME:VALUE; the segments route
// lists values; bad segments are 422 and change nothing.
func TestSegmentsAPI(t *testing.T) {
	f := MustFixtureOf(t, segmentBoards, web.Options{WriteRate: -1})
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"ann","value":5,"segments":{"country":"FR","team":"red"}}`))
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey,
		`{"events":[{"member":"bob","value":7,"segments":{"country":"DE"}},{"member":"cy","value":3,"segments":{"country":"FR"}},{"member":"dee","value":9}]}`))

	fr := MustOK(t, f.get(t, "/api/v1/boards/points/all?segment=country:FR")).JSON(t)
	if fr["segment"] != "country:FR" || fr["total"].(interface{ String() string }).String() != "2" {
		t.Fatalf("FR: %v", fr)
	}
	if body := MustOK(t, f.get(t, "/api/v1/boards/points/all?segment=country:FR")).Body; !strings.Contains(body, `"entries":[{"rank":1,"member":"ann","name":null,"score":5,"previous_rank":null},{"rank":2,"member":"cy","name":null,"score":3,"previous_rank":null}]`) {
		t.Errorf("FR entries: %s", body)
	}
	if body := MustOK(t, f.get(t, "/api/v1/boards/points/all")).Body; strings.Contains(body, `"segment"`) || !strings.Contains(body, `"total":4`) {
		t.Errorf("whole board: %s", body)
	}
	if body := MustOK(t, f.get(t, "/api/v1/boards/points/all?segment=country:IT")).Body; !strings.Contains(body, `"total":0`) {
		t.Errorf("a value never seen: %s", body)
	}
	friends := MustOK(t, f.get(t, "/api/v1/boards/points/all?members=dee,cy,nobody,cy")).Body
	if !strings.Contains(friends, `"total":4,"entries":[{"rank":1,"member":"dee","name":null,"score":9,"previous_rank":null},{"rank":4,"member":"cy","name":null,"score":3,"previous_rank":null}]`) {
		t.Errorf("members: %s", friends)
	}
	frFriends := MustOK(t, f.get(t, "/api/v1/boards/points/all?members=cy,bob&segment=country:FR")).Body
	if !strings.Contains(frFriends, `"total":2,"entries":[{"rank":2,"member":"cy","name":null,"score":3,"previous_rank":null}]`) {
		t.Errorf("members in FR: %s", frFriends)
	}
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores", writeKey, `{"member":"e1","value":1,"name":"Élodie"}`))
	if got := strings.TrimSpace(MustOK(t, f.get(t, "/api/v1/boards/points/members?q=ELO")).Body); got != `{"members":[{"member":"e1","name":"Élodie"}]}` {
		t.Errorf("search: %s", got)
	}
	if got := strings.TrimSpace(MustOK(t, f.get(t, "/api/v1/boards/points/members?q=c")).Body); got != `{"members":[{"member":"cy","name":null}]}` {
		t.Errorf("search by id: %s", got)
	}
	card := MustOK(t, f.get(t, "/api/v1/boards/points/day/members/cy?segment=country:FR")).Body
	if !strings.Contains(card, `"segment":"country:FR"`) || !strings.Contains(card, `"rank":2`) || !strings.Contains(card, `"total":2`) {
		t.Errorf("card: %s", card)
	}
	csv := MustOK(t, f.get(t, "/boards/points/all.csv?segment=team:red")).Body
	if csv != "rank,member,name,score\n1,ann,,5\n" {
		t.Errorf("csv %q", csv)
	}
	if got := strings.TrimSpace(MustOK(t, f.get(t, "/api/v1/boards/points/segments/country")).Body); got != `{"segment":"country","values":["DE","FR"]}` {
		t.Errorf("values: %s", got)
	}

	before := f.dump()
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/api/v1/boards/points/scores", `{"member":"eve","value":1,"segments":{"league":"A"}}`, 422},
		{"POST", "/api/v1/boards/points/scores", `{"member":"eve","value":1,"segments":{"country":"F R"}}`, 422},
		{"POST", "/api/v1/boards/points/scores", `{"member":"eve","value":1,"segments":{"country":""}}`, 422},
		{"POST", "/api/v1/boards/points/scores", `{"member":"eve","value":1,"segments":{"country":1}}`, 400},
		{"POST", "/api/v1/boards/plain/scores", `{"member":"eve","value":1,"segments":{"country":"FR"}}`, 422},
		{"GET", "/api/v1/boards/points/all?segment=league:A", "", 422},
		{"GET", "/api/v1/boards/points/all?segment=country", "", 422},
		{"GET", "/api/v1/boards/points/all/members/ann?segment=country:F%20R", "", 422},
		{"GET", "/api/v1/boards/points/segments/league", "", 422},
		{"GET", "/api/v1/boards/points/all?members=", "", 422},
		{"GET", "/api/v1/boards/points/members", "", 422},
		{"GET", "/api/v1/boards/points/members?q=" + strings.Repeat("x", 65), "", 422},
		{"GET", "/api/v1/boards/points/all?members=a,,b", "", 422},
		{"GET", "/api/v1/boards/points/all?members=a&offset=1", "", 422},
		{"GET", "/api/v1/boards/points/all?members=" + strings.Repeat("a,", 100) + "b", "", 422},
		{"GET", "/api/v1/boards/nosuch/segments/country", "", 404},
		{"GET", "/api/v1/boards/plain/segments/country", "", 422},
	} {
		r := f.do(t, c.method, c.path, writeKey, c.body)
		if r.Status != c.status {
			t.Errorf("%s %s %s: %d %s, want %d", c.method, c.path, c.body, r.Status, r.Body, c.status)
			continue
		}
		r.ErrorCode(t)
	}
	f.MustUnchanged(t, before)
}
