package web

import (
	"strings"

	"github.com/standings/standings/views"
)

// apiExample is one request the API page shows with the answer it gets.
// web/apiexamples_test.go sends them, in order, to a fresh server on
// apiExampleBoards at a fixed moment and fails on any answer that differs,
// so the page never shows an answer the API would not give.
type apiExample struct {
	Op     string // the operationId it illustrates
	Method string
	Path   string
	Body   string // a write's JSON body
	Answer string // the JSON answer as shown (indented)
}

// apiExampleHost is where make run serves.
const apiExampleHost = "http://127.0.0.1:8080"

// apiExampleBoards is the boards file the examples are answered on.
const apiExampleBoards = `
timezone: UTC
boards:
  - id: points
    title: Points
    max_score: 1000000
    decimals: 1
    views: [day, week, all]
`

var apiExamples = []apiExample{
	{Op: "writeScore", Method: "POST", Path: "/api/v1/boards/points/scores", Body: `{"member":"ana","value":12.5,"name":"Ana Sato"}`, Answer: `{
  "board": "points",
  "member": "ana",
  "duplicate": false,
  "views": {
    "day": {"period": "2026-11-22", "score": 12.5, "rank": 1},
    "week": {"period": "2026-11-16", "score": 12.5, "rank": 1},
    "all": {"period": "all", "score": 12.5, "rank": 1}
  }
}`},
	{Op: "writeBatch", Method: "POST", Path: "/api/v1/boards/points/scores/batch", Body: `{"events":[{"member":"nora","value":8,"name":"Nora Müller"},{"member":"ana","value":2}]}`, Answer: `{
  "results": [
    {"board": "points", "member": "nora", "duplicate": false, "views": {
      "day": {"period": "2026-11-22", "score": 8, "rank": 2},
      "week": {"period": "2026-11-16", "score": 8, "rank": 2},
      "all": {"period": "all", "score": 8, "rank": 2}}},
    {"board": "points", "member": "ana", "duplicate": false, "views": {
      "day": {"period": "2026-11-22", "score": 14.5, "rank": 1},
      "week": {"period": "2026-11-16", "score": 14.5, "rank": 1},
      "all": {"period": "all", "score": 14.5, "rank": 1}}}
  ]
}`},
	{Op: "readPage", Method: "GET", Path: "/api/v1/boards/points/week?limit=2", Answer: `{
  "board": "points", "view": "week", "period": "2026-11-16",
  "start": "2026-11-16T00:00:00Z", "end": "2026-11-23T00:00:00Z",
  "final": false, "total": 2,
  "entries": [
    {"rank": 1, "member": "ana", "name": "Ana Sato", "score": 14.5, "previous_rank": null},
    {"rank": 2, "member": "nora", "name": "Nora Müller", "score": 8, "previous_rank": null}
  ]
}`},
	{Op: "readMember", Method: "GET", Path: "/api/v1/boards/points/week/members/nora", Answer: `{
  "board": "points", "view": "week", "period": "2026-11-16",
  "member": "nora", "name": "Nora Müller",
  "rank": 2, "score": 8, "total": 2, "top_percent": 100,
  "around": [
    {"rank": 1, "member": "ana", "name": "Ana Sato", "score": 14.5},
    {"rank": 2, "member": "nora", "name": "Nora Müller", "score": 8}
  ]
}`},
	{Op: "searchMembers", Method: "GET", Path: "/api/v1/boards/points/members?q=nor", Answer: `{
  "members": [{"member": "nora", "name": "Nora Müller"}]
}`},
}

// curl is the example as a command line; writes send a write key from
// the environment.
func (e apiExample) curl() string {
	url := apiExampleHost + e.Path
	if strings.ContainsAny(url, "?&") {
		url = "'" + url + "'"
	}
	if e.Method == "GET" {
		return "curl " + url
	}
	return "curl -X " + e.Method + " " + url + " \\\n" +
		"  -H \"Authorization: Bearer $STANDINGS_WRITE_KEY\" \\\n" +
		"  -H 'Content-Type: application/json' \\\n" +
		"  -d '" + e.Body + "'"
}

// apiExampleViews are the examples by operationId, for the API page.
func apiExampleViews() map[string]*views.APIExample {
	out := map[string]*views.APIExample{}
	for _, e := range apiExamples {
		out[e.Op] = &views.APIExample{Curl: e.curl(), Answer: e.Answer}
	}
	return out
}
