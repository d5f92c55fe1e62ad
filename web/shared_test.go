package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/standings/standings/ranking"
	"github.com/standings/standings/web"
)

// getGzip is a GET that accepts gzip, as browsers send it.
func (f *fixture) getGzip(tb testing.TB, path string) response {
	tb.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	return f.serve(req)
}

// gunzip inflates a gzip body, failing the test when it is not one.
func gunzip(tb testing.TB, body string) string {
	tb.Helper()
	zr, err := gzip.NewReader(strings.NewReader(body))
	if err != nil {
		tb.Fatalf("not gzip: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("bad gzip: %v", err)
	}
	return string(b)
}

// TestSharedPages: a current board page and a widget are rendered once per
// tick and every request gets the same bytes, gzip included; a write
// through the server shows at once; what depends on the request (a
// search, a member list, a named period) is never shared.
func TestSharedPages(t *testing.T) {
	// A tick far longer than the test: what is shared stays shared until a
	// write through this server drops it.
	f := MustFixtureWith(t, web.Options{WriteRate: -1, PageTick: time.Hour})
	f.MustWrite(t, "points", `{"member":"alice","value":5}`)
	for _, path := range []string{"/boards/points/week", "/embed/points/week?limit=5&theme=dark"} {
		plain := MustOK(t, f.get(t, path))
		z1 := MustOK(t, f.getGzip(t, path))
		z2 := MustOK(t, f.getGzip(t, path))
		if z1.Header.Get("Content-Encoding") != "gzip" || z1.Body != z2.Body || gunzip(t, z1.Body) != plain.Body {
			t.Fatalf("%s: gzip %q, same bytes %v, inflates to the plain page %v", path, z1.Header.Get("Content-Encoding"), z1.Body == z2.Body, gunzip(t, z1.Body) == plain.Body)
		}
		if z1.Header.Get("ETag") == "" || z1.Header.Get("ETag") != plain.Header.Get("ETag") || !strings.Contains(z1.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: ETag %q / %q, Vary %q", path, z1.Header.Get("ETag"), plain.Header.Get("ETag"), z1.Header.Get("Vary"))
		}
		if z1.Header.Get("Content-Length") != fmt.Sprint(len(z1.Body)) {
			t.Errorf("%s: Content-Length %q for %d bytes", path, z1.Header.Get("Content-Length"), len(z1.Body))
		}
	}

	// A write that does not go through this server (another instance):
	// the shared pages keep their bytes for the tick, reads of a named
	// period or with a member list are the store's own.
	if _, err := f.store.Write(context.Background(), "points", ranking.Event{Member: "bob", Value: 70}); err != nil {
		t.Fatal(err)
	}
	if body := MustOK(t, f.get(t, "/boards/points/week")).Body; strings.Contains(body, "bob") {
		t.Error("the shared page was rendered again within its tick")
	}
	if body := MustOK(t, f.get(t, "/embed/points/week?limit=5&theme=dark")).Body; strings.Contains(body, "bob") {
		t.Error("the shared widget was rendered again within its tick")
	}
	if body := MustOK(t, f.get(t, "/embed/points/week?limit=6&theme=dark")).Body; !strings.Contains(body, "bob") {
		t.Error("a widget of another size shares the first one's bytes")
	}
	for _, path := range []string{"/boards/points/week?period=2026-11-16", "/boards/points/week?members=bob"} {
		if body := MustOK(t, f.get(t, path)).Body; !strings.Contains(body, "bob") {
			t.Errorf("%s was shared", path)
		}
	}
	// A search keeps its words in the box (the table is the tick's read).
	if body := MustOK(t, f.get(t, "/boards/points/week?q=zed")).Body; !strings.Contains(body, `value="zed"`) {
		t.Error("a search page was shared")
	}
	// A write through the server drops its board's pages at once.
	f.MustWrite(t, "points", `{"member":"carol","value":1}`)
	body := MustOK(t, f.get(t, "/boards/points/week")).Body
	if !strings.Contains(body, "bob") || !strings.Contains(body, "carol") {
		t.Error("a write through the server did not show at once")
	}
	// Failures are not kept.
	if r := f.get(t, "/boards/points/week?page=9"); r.Status != http.StatusNotFound || r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("past the last page: %d %q", r.Status, r.Header.Get("Cache-Control"))
	}
	if r := f.get(t, "/embed/points/week?limit=0"); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a bad limit: %d", r.Status)
	}
}

// TestCompression: answers of 1 KiB or more are gzipped for clients that
// accept it, shorter ones and clients that do not get them as they are,
// and a streamed CSV export inflates to the same rows.
func TestCompression(t *testing.T) {
	f := MustFixture(t)
	var events []string
	for i := range 300 {
		events = append(events, fmt.Sprintf(`{"member":"m%03d","name":"Member %d","value":%d}`, i, i, i%50))
	}
	MustOK(t, f.do(t, "POST", "/api/v1/boards/points/scores/batch", writeKey, `{"events":[`+strings.Join(events, ",")+`]}`))

	small := MustOK(t, f.getGzip(t, "/healthz"))
	if small.Header.Get("Content-Encoding") != "" || !strings.Contains(small.Body, "ok") {
		t.Errorf("/healthz: encoding %q, body %q", small.Header.Get("Content-Encoding"), small.Body)
	}
	for _, path := range []string{"/api/v1/boards/points/week?limit=300", "/boards/points/week.csv", "/boards/points/week/members/m010", "/static/app.css"} {
		plain := MustOK(t, f.get(t, path))
		z := MustOK(t, f.getGzip(t, path))
		if plain.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: encoded %q for a client that did not ask", path, plain.Header.Get("Content-Encoding"))
		}
		if z.Header.Get("Content-Encoding") != "gzip" || z.Header.Get("Content-Type") != plain.Header.Get("Content-Type") {
			t.Errorf("%s: encoding %q, type %q (plain %q)", path, z.Header.Get("Content-Encoding"), z.Header.Get("Content-Type"), plain.Header.Get("Content-Type"))
			continue
		}
		if got := gunzip(t, z.Body); got != plain.Body {
			t.Errorf("%s: inflates to %d bytes, plain is %d", path, len(got), len(plain.Body))
		}
		// A whole answer (not a streamed export) goes in one piece with
		// its length, and its validator names the page, not the encoding.
		if !strings.HasSuffix(path, ".csv") {
			if z.Header.Get("Content-Length") != strconv.Itoa(len(z.Body)) {
				t.Errorf("%s: Content-Length %q for %d gzip bytes", path, z.Header.Get("Content-Length"), len(z.Body))
			}
			if plain.Header.Get("ETag") != z.Header.Get("ETag") {
				t.Errorf("%s: ETag %q plain, %q gzipped", path, plain.Header.Get("ETag"), z.Header.Get("ETag"))
			}
		}
	}
	// An error answer is never half compressed.
	r := f.getGzip(t, "/boards/nosuch/week")
	if r.Status != http.StatusNotFound {
		t.Fatalf("status %d", r.Status)
	}
	body := r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		body = gunzip(t, body)
	}
	if !bytes.Contains([]byte(body), []byte("nosuch")) {
		t.Errorf("error page: %q", body[:min(200, len(body))])
	}
}

// TestUnsharedPagesOwnTheirBytes: with sharing off, every request renders
// its own page and writes it whole, however many run at once (a rendered
// page is never written from a buffer that went back to the pool).
func TestUnsharedPagesOwnTheirBytes(t *testing.T) {
	f := MustFixtureWith(t, web.Options{WriteRate: -1, PageTick: -1})
	for i := range 30 {
		f.MustWrite(t, "points", fmt.Sprintf(`{"member":"m%02d","value":%d}`, i, i+1))
	}
	paths := []string{"/boards/points/week", "/embed/points/week?limit=7", "/boards/points/week/members/m03", "/boards/points/day"}
	want := map[string]string{}
	for _, p := range paths {
		want[p] = MustOK(t, f.getGzip(t, p)).Body
	}
	errs := make(chan error, len(paths)*8)
	for w := range 8 {
		go func() {
			for k := range 20 {
				p := paths[(w+k)%len(paths)]
				if got := f.getGzip(t, p); got.Status != http.StatusOK || gunzip(t, got.Body) != gunzip(t, want[p]) {
					errs <- fmt.Errorf("%s: status %d, %d bytes differ from the page alone", p, got.Status, len(got.Body))
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
