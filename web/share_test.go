package web_test

import (
	"bytes"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// shareTags are a page's meta description and link-preview tags.
type shareTags map[string]string

func shareTagsOf(doc *goquery.Document) shareTags {
	tags := shareTags{}
	doc.Find("head meta").Each(func(_ int, m *goquery.Selection) {
		name := m.AttrOr("name", m.AttrOr("property", ""))
		if name == "description" || strings.HasPrefix(name, "og:") || strings.HasPrefix(name, "twitter:") {
			if _, dup := tags[name]; dup {
				tags[name+" (again)"] = m.AttrOr("content", "")
			}
			tags[name] = m.AttrOr("content", "")
		}
	})
	return tags
}

// Every page, errors included, says what it shows in a plain sentence and
// carries the tags a link preview reads, with its own absolute address.
func TestEveryPageHasShareTags(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"alice","value":12.5,"name":"Alice"}`)
	f.MustWrite(t, "points", `{"member":"ana","value":3,"name":"Ana"}`)
	f.MustWrite(t, "lap", `{"member":"leila","value":62.25,"name":"Leila"}`)
	cases := []struct {
		path   string
		status int
		desc   string // the description holds it
		url    string // og:url, after http://example.com
		image  string // og:image, after http://example.com
	}{
		{path: "/", status: 200, desc: "Live leaderboards of Points and Fastest lap: ", url: "/"},
		{path: "/boards/points/week?utm_source=x", status: 200, desc: "Points standings this week: 2 members, led by Alice with 12.5 points.", url: "/boards/points/week"},
		{path: "/boards/lap/week", status: 200, desc: "Fastest lap standings this week: 1 member, led by Leila with 62.25 points.", url: "/boards/lap/week"},
		{path: "/boards/points/week?period=2026-11-09", status: 200, desc: "Points standings in the week of 9 Nov 2026: nobody scored.", url: "/boards/points/week?period=2026-11-09"},
		{path: "/boards/points/week?page=3", status: 404, desc: "Past the last page: Page 3 is past the end", url: "/boards/points/week?page=3"},
		{path: "/boards/points/week/members/ana?period=2026-11-22&q=x", status: 200, desc: "Ana is #2 of 2 on Points this week, with 3 points.",
			url: "/boards/points/week/members/ana?period=2026-11-22", image: "/boards/points/week/members/ana/preview.png"},
		{path: "/boards/points/day/members/alice", status: 200, desc: "Alice is #1 of 2 on Points today, with 12.5 points.",
			url: "/boards/points/day/members/alice", image: "/boards/points/day/members/alice/preview.png"},
		{path: "/boards/points/week/members/nobody", status: 404, desc: "We couldn't find that member: “nobody” has no score in this period of Points.", url: "/boards/points/week/members/nobody"},
		{path: "/boards/points/week/results", status: 200, desc: "Past results of Points · Week: ", url: "/boards/points/week/results"},
		{path: "/boards/points/week/members?member=A", status: 200, desc: "2 members of Points whose name matches “A”.", url: "/boards/points/week/members"},
		{path: "/boards/points/week/members?member=zed", status: 404, desc: "No member of Points is called “zed”.", url: "/boards/points/week/members"},
		{path: "/boards/points/week/widget?limit=5", status: 200, desc: "Put the live Points · Week standings on your own site", url: "/boards/points/week/widget"},
		{path: "/embed/points/week?limit=5", status: 200, desc: "The top 5 of Points this week, updated live.", url: "/embed/points/week"},
		{path: "/api", status: 200, desc: "The Standings JSON API: ", url: "/api"},
		{path: "/boards/nope/week", status: 404, desc: "We couldn't find that board: There is no board called “nope”.", url: "/boards/nope/week"},
		{path: "/boards/points/week?page=x", status: 422, desc: "We can't show that page: That page number isn't valid: pages start at 1.", url: "/boards/points/week?page=x"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			r := f.get(t, tc.path)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			tags := shareTagsOf(r.Doc(t))
			if !strings.Contains(tags["description"], tc.desc) {
				t.Errorf("description %q, want it to hold %q", tags["description"], tc.desc)
			}
			want := map[string]string{
				"og:description": tags["description"],
				"og:type":        "website",
				"og:site_name":   "Standings",
				"og:url":         "http://example.com" + tc.url,
				"twitter:card":   "summary",
			}
			if tc.image != "" {
				want["og:image"] = "http://example.com" + tc.image
				want["og:image:width"], want["og:image:height"] = "1200", "630"
				want["twitter:card"] = "summary_large_image"
			}
			for name, v := range want {
				if tags[name] != v {
					t.Errorf("%s = %q, want %q", name, tags[name], v)
				}
			}
			if tags["og:title"] == "" {
				t.Error("no og:title")
			}
			for name := range tags {
				if strings.HasSuffix(name, "(again)") {
					t.Errorf("%s twice", strings.TrimSuffix(name, " (again)"))
				}
				if _, ok := want[name]; !ok && name != "og:title" && name != "description" && name != "og:image:type" && name != "og:image:alt" {
					t.Errorf("unexpected %s = %q", name, tags[name])
				}
			}
		})
	}
}

// A page shared for a tick between requests names the address it was
// asked at: a request with another Host never gets the first one's.
func TestSharedPagesKeepTheirHost(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"alice","value":12.5,"name":"Alice"}`)
	for _, host := range []string{"a.example", "b.example", "a.example"} {
		for _, path := range []string{"/boards/points/week", "/embed/points/week"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Host = host
			r := f.serve(req)
			if got := shareTagsOf(MustOK(t, r).Doc(t))["og:url"]; got != "http://"+host+path {
				t.Errorf("%s at %s: og:url %q", path, host, got)
			}
		}
	}
}

// mustPreview fetches a preview image and checks it is a 1200×630 PNG,
// sent as it is (not gzipped), with the period's Cache-Control and an ETag.
func (f *fixture) mustPreview(t *testing.T, path, cache string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	r := f.serve(req)
	if r.Status != http.StatusOK {
		t.Fatalf("%s: status %d: %s", path, r.Status, r.Body)
	}
	if ct, ce := r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding"); ct != "image/png" || ce != "" {
		t.Errorf("%s: Content-Type %q, Content-Encoding %q", path, ct, ce)
	}
	img, err := png.Decode(strings.NewReader(r.Body))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 630 {
		t.Errorf("%s: %v, want 1200×630", path, b)
	}
	if got := r.Header.Get("Cache-Control"); got != cache {
		t.Errorf("%s: Cache-Control %q, want %q", path, got, cache)
	}
	if r.Header.Get("ETag") == "" {
		t.Errorf("%s: no ETag", path)
	}
	return r
}

const (
	cacheNow   = "public, max-age=1, stale-while-revalidate=5"
	cacheFinal = "public, max-age=86400"
)

func TestPreviewImages(t *testing.T) {
	f := MustFixture(t)
	f.MustWrite(t, "points", `{"member":"alice","value":12.5,"name":"Alice"}`)
	f.MustWrite(t, "points", `{"member":"bob","value":3,"name":"Bob"}`)
	f.MustWriteAt(t, testNow.Add(-7*24*time.Hour), "points", `{"member":"bob","value":7,"name":"Bob"}`)

	alice := f.mustPreview(t, "/boards/points/week/members/alice/preview.png", cacheNow)
	bob := f.mustPreview(t, "/boards/points/week/members/bob/preview.png", cacheNow)
	if alice.Body == bob.Body || alice.Header.Get("ETag") == bob.Header.Get("ETag") {
		t.Error("two members drew the same image")
	}
	again := f.mustPreview(t, "/boards/points/week/members/alice/preview.png", cacheNow)
	if again.Body != alice.Body || again.Header.Get("ETag") != alice.Header.Get("ETag") {
		t.Error("the same card drew another image")
	}
	lastWeek := f.mustPreview(t, "/boards/points/week/members/bob/preview.png?period=2026-11-09", cacheFinal)
	if lastWeek.Body == bob.Body {
		t.Error("last week's card is this week's")
	}

	t.Run("304", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, "/boards/points/week/members/alice/preview.png", nil)
		req.Header.Set("If-None-Match", alice.Header.Get("ETag"))
		if r := f.serve(req); r.Status != http.StatusNotModified || r.Body != "" {
			t.Errorf("status %d, %d bytes", r.Status, len(r.Body))
		}
		req = httptest.NewRequest(http.MethodHead, "/boards/points/week/recap.png", nil)
		if r := f.serve(req); r.Status != http.StatusOK || r.Body != "" || r.Header.Get("ETag") == "" {
			t.Errorf("HEAD: status %d, %d bytes", r.Status, len(r.Body))
		}
	})

	t.Run("recap", func(t *testing.T) {
		before := f.mustPreview(t, "/boards/points/week/recap.png", cacheNow)
		f.mustPreview(t, "/boards/points/week/recap.png?period=2026-11-09", cacheFinal)
		// A new score on the podium is a new version: a new image and ETag.
		f.MustWrite(t, "points", `{"member":"carl","value":5,"name":"Carl"}`)
		after := f.mustPreview(t, "/boards/points/week/recap.png", cacheNow)
		if after.Body == before.Body || after.Header.Get("ETag") == before.Header.Get("ETag") {
			t.Error("the recap did not change with its podium")
		}
	})

	t.Run("untrusted names", func(t *testing.T) {
		for i, name := range []string{
			"שלום مرحبا Ana",
			"Ana 🏎️👩🏽‍🚀 " + strings.Repeat("W", 50),
			"東京 \u200b\u0301 \U0001F600 中",
		} {
			member := string(rune('p' + i))
			f.MustWrite(t, "points", `{"member":"`+member+`","value":100,"name":`+quoteJSON(name)+`}`)
			f.mustPreview(t, "/boards/points/week/members/"+member+"/preview.png", cacheNow)
			f.mustPreview(t, "/boards/points/week/recap.png", cacheNow)
		}
	})

	t.Run("unknown", func(t *testing.T) {
		for path, status := range map[string]int{
			"/boards/nope/week/members/alice/preview.png":                     404,
			"/boards/points/year/members/alice/preview.png":                   404,
			"/boards/points/week/members/nobody/preview.png":                  404,
			"/boards/points/week/members/alice/preview.png?period=2026-10-05": 404, // alice did not play then
			"/boards/points/week/members/alice/preview.png?period=2026-13":    422,
			"/boards/points/week/members/alice/preview.png?segment=nope:x":    422,
			"/boards/nope/week/recap.png":                                     404,
			"/boards/points/week/recap.png?period=2026-10-05":                 404, // nobody scored
			"/boards/points/week/recap.png?period=junk":                       422,
		} {
			before := f.dump()
			r := f.get(t, path)
			if r.Status != status {
				t.Errorf("%s: status %d, want %d: %s", path, r.Status, status, r.Body)
			}
			if r.Header.Get("Cache-Control") != "no-store" || strings.HasPrefix(r.Header.Get("Content-Type"), "image/") {
				t.Errorf("%s: an error answered %q, %q", path, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
			}
			f.MustUnchanged(t, before)
		}
	})

	t.Run("og:image", func(t *testing.T) {
		doc := MustOK(t, f.get(t, "/boards/points/week/members/bob?period=2026-11-09")).Doc(t)
		img := shareTagsOf(doc)["og:image"]
		path, ok := strings.CutPrefix(img, "http://example.com")
		if !ok || !strings.Contains(path, "period=2026-11-09") {
			t.Fatalf("og:image %q", img)
		}
		if r := f.mustPreview(t, path, cacheFinal); !bytes.Equal([]byte(r.Body), []byte(lastWeek.Body)) {
			t.Error("og:image is not the card's preview")
		}
	})
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
