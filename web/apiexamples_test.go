package web_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/standings/standings/views"
	"github.com/standings/standings/web"
)

// TestAPIExamplesAreTrue: every example on the API page, sent in order to
// a fresh server on the examples' boards at the tests' fixed moment, gets
// exactly the answer the page shows, and the page shows each with its
// curl command line.
func TestAPIExamplesAreTrue(t *testing.T) {
	f := MustFixtureOf(t, web.APIExampleBoards, web.Options{WriteRate: -1})
	page := MustOK(t, f.get(t, "/api")).Doc(t)
	for _, e := range web.APIExamples() {
		key := ""
		if e.Method != "GET" {
			key = writeKey
		}
		r := f.do(t, e.Method, e.Path, key, e.Body)
		var got, want any
		if err := json.Unmarshal([]byte(r.Body), &got); err != nil {
			t.Fatalf("%s: %d %s", e.Op, r.Status, r.Body)
		}
		if err := json.Unmarshal([]byte(e.Answer), &want); err != nil {
			t.Fatalf("%s: the example's answer is not JSON: %v", e.Op, err)
		}
		if r.Status != 200 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the API answers %d %s\nthe page shows %s", e.Op, r.Status, r.Body, e.Answer)
		}
		op := page.Find("#" + e.Op)
		curl := op.Find(testid(views.TestAPIExample)).Text()
		if !strings.HasPrefix(curl, "curl ") || !strings.Contains(curl, e.Path) || (e.Body != "" && !strings.Contains(curl, e.Body)) {
			t.Errorf("%s: command line %q", e.Op, curl)
		}
		if op.Find(testid(views.TestAPIAnswer)).Text() != e.Answer {
			t.Errorf("%s: the page's answer differs from the example", e.Op)
		}
	}
}

// TestAPIPageReadsAsText: the description's Markdown is rendered (code
// spans as code, no backticks), the version is the one in the paths.
func TestAPIPageReadsAsText(t *testing.T) {
	f := MustFixture(t)
	doc := MustOK(t, f.get(t, "/api")).Doc(t)
	main := doc.Find("main")
	if strings.Contains(main.Text(), "`") {
		t.Error("backticks printed")
	}
	var codes []string
	main.Find("p code, td code").Each(func(_ int, s *goquery.Selection) { codes = append(codes, s.Text()) })
	for _, want := range []string{"Authorization: Bearer <key>", "decimals", "[now - lateness, now + 5s]", "/api/v1"} {
		found := false
		for _, c := range codes {
			found = found || c == want
		}
		if !found {
			t.Errorf("no code span %q among %q", want, codes)
		}
	}
	if got := doc.Find(testid(views.TestAPIVersion)).Text(); got != "v1" {
		t.Errorf("version %q", got)
	}
	if strings.Contains(main.Text(), "version 2") {
		t.Error("the page says version 2")
	}
}
