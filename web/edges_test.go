package web_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/standings/standings/web"
)

// edgeBoards is testBoards with an action, so that every body route has
// something to answer.
const edgeBoards = testBoards + `
actions:
  like: [{board: points}]
`

// concrete turns a route of the table ("GET /boards/:board/:view") into a
// path that exists in the fixture.
func concrete(route string) (method, path string) {
	method, path, _ = strings.Cut(route, " ")
	r := strings.NewReplacer(":board", "points", ":view", "day", ":member", "alice", ":name", "country",
		":period", "2026-11-21", ":action", "like", ":id", "wh_000000000000000000000000", "*", "app.css")
	return method, r.Replace(path)
}

// routesOf is the server's route table for one method.
func routesOf(srv *web.Server, method string) []string {
	var out []string
	for _, r := range srv.Routes() {
		if strings.HasPrefix(r, method+" ") {
			out = append(out, r)
		}
	}
	return out
}

// countingBody is a request body that counts the bytes read from it.
type countingBody struct {
	n    atomic.Int64
	left int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), b.left)
	for i := range p[:n] {
		p[i] = ' '
	}
	b.left -= n
	b.n.Add(n)
	return int(n), nil
}

// TestBodyReadOnlyAfterAuthorization: a body sent without a valid key is
// refused 401 without a byte of it read, on every route that takes one.
func TestBodyReadOnlyAfterAuthorization(t *testing.T) {
	f := MustFixtureOf(t, edgeBoards, web.Options{WriteRate: -1})
	for _, path := range []string{"/api/v1/boards/points/scores", "/api/v1/boards/points/scores/batch", "/api/v1/actions/like"} {
		for _, key := range []string{"", "not-a-key"} {
			t.Run(path+" key="+key, func(t *testing.T) {
				body := &countingBody{left: 900 << 10}
				req := httptest.NewRequest("POST", path, body)
				req.ContentLength = -1 // chunked: nothing says how much comes
				req.Header.Set("Content-Type", "application/json")
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				r := f.serve(req)
				if r.Status != http.StatusUnauthorized || r.ErrorCode(t) != "unauthorized" {
					t.Fatalf("status %d body %s", r.Status, r.Body)
				}
				if n := body.n.Load(); n != 0 {
					t.Errorf("%d bytes of an anonymous body were read", n)
				}
			})
		}
	}
	// With a key the body is read, and a body over the limit stops
	// being read just past it.
	body := &countingBody{left: 3 << 20}
	req := httptest.NewRequest("POST", "/api/v1/boards/points/scores", body)
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+writeKey)
	if r := f.serve(req); r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d body %s", r.Status, r.Body)
	}
	if n := body.n.Load(); n <= web.MaxBody || n > web.MaxBody+64<<10 {
		t.Errorf("%d bytes read of an oversized body", n)
	}
}

// TestBodyIgnoredWhereNoneIsTaken: every route that takes no body answers
// as it would without one, and reads none of it, whatever it claims to be.
func TestBodyIgnoredWhereNoneIsTaken(t *testing.T) {
	f := MustFixtureOf(t, edgeBoards, web.Options{WriteRate: -1})
	f.seed(t)
	var routes []string
	for _, m := range []string{"GET", "HEAD", "DELETE"} {
		routes = append(routes, routesOf(f.srv, m)...)
	}
	routes = append(routes, "POST /api/v1/webhooks/deliveries/:id/retry")
	for _, route := range routes {
		t.Run(route, func(t *testing.T) {
			method, path := concrete(route)
			want := f.do(t, method, path, adminKey, "").Status
			if method == "DELETE" {
				want = http.StatusNotFound // alice was removed below, once
			}
			for _, length := range []int64{-1, 2 << 20} {
				body := &countingBody{left: 2 << 20}
				req := httptest.NewRequest(method, path, body)
				req.ContentLength = length
				req.Header.Set("Content-Type", "text/plain")
				req.Header.Set("Authorization", "Bearer "+adminKey)
				r := f.serve(req)
				if r.Status != want {
					t.Errorf("Content-Length %d: status %d, want %d as without a body; body %.200s", length, r.Status, want, r.Body)
				}
				if n := body.n.Load(); n != 0 {
					t.Errorf("Content-Length %d: %d bytes read of a body the route does not take", length, n)
				}
			}
		})
	}
}

// TestBodyMemoryBounded: many slow authorized uploads at once hold at most
// the body memory budget; those that cannot get their share are refused
// 429 with Retry-After, and those admitted complete.
func TestBodyMemoryBounded(t *testing.T) {
	f := MustFixtureWith(t, web.Options{WriteRate: -1, BodyMemory: web.MaxBody, BodyTimeout: time.Minute})
	hs := httptest.NewServer(f.handler)
	defer hs.Close()
	const uploads, size = 6, 400 << 10 // two fit in 1 MiB
	json := `{"member":"slow","value":1}`
	type answer struct {
		i      int
		status string
		head   string
	}
	answers := make(chan answer, uploads)
	conns := make([]net.Conn, uploads)
	for i := range conns {
		conn, err := net.Dial("tcp", hs.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conns[i] = conn
		fmt.Fprintf(conn, "POST /api/v1/boards/points/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", writeKey, size, json)
		go func(i int) {
			br := bufio.NewReader(conn)
			status, _ := br.ReadString('\n')
			var head strings.Builder
			for {
				line, err := br.ReadString('\n')
				if err != nil || line == "\r\n" {
					break
				}
				head.WriteString(line)
			}
			answers <- answer{i, strings.TrimSpace(status), head.String()}
		}(i)
	}
	// The refusals come while the admitted uploads still hold their share.
	refused := map[int]bool{}
	deadline := time.After(30 * time.Second)
	for len(refused) < uploads-2 {
		select {
		case a := <-answers:
			if !strings.Contains(a.status, " 429 ") || !strings.Contains(a.head, "Retry-After: 1") {
				t.Fatalf("upload %d: %s\n%s", a.i, a.status, a.head)
			}
			refused[a.i] = true
		case <-deadline:
			t.Fatalf("%d of %d uploads refused: the body memory is not bounded", len(refused), uploads)
		}
	}
	rest := strings.Repeat(" ", size-len(json))
	for i, conn := range conns {
		if !refused[i] {
			io.WriteString(conn, rest)
		}
	}
	for range 2 {
		select {
		case a := <-answers:
			if refused[a.i] || !strings.Contains(a.status, " 200 ") {
				t.Fatalf("upload %d: %s\n%s", a.i, a.status, a.head)
			}
		case <-deadline:
			t.Fatal("the admitted uploads never completed")
		}
	}
}

// TestHeadOnEveryGetRoute: HEAD answers every GET route with the GET's
// status and type, and no body.
func TestHeadOnEveryGetRoute(t *testing.T) {
	f := MustFixtureOf(t, edgeBoards, web.Options{WriteRate: -1})
	f.seed(t)
	routes := routesOf(f.srv, "GET")
	if len(routes) < 20 {
		t.Fatalf("%d GET routes", len(routes))
	}
	for _, route := range routes {
		_, path := concrete(route)
		t.Run(path, func(t *testing.T) {
			get := f.do(t, "GET", path, adminKey, "")
			head := f.do(t, "HEAD", path, adminKey, "")
			if head.Status != get.Status {
				t.Fatalf("HEAD %d, GET %d; body %.200s", head.Status, get.Status, head.Body)
			}
			if head.Body != "" {
				t.Errorf("HEAD with a body: %.200s", head.Body)
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "Content-Security-Policy", "X-Frame-Options"} {
				if head.Header.Get(h) != get.Header.Get(h) {
					t.Errorf("%s: HEAD %q, GET %q", h, head.Header.Get(h), get.Header.Get(h))
				}
			}
		})
	}
}

// TestQueryParameterTwice: a parameter given twice is 422 on every route,
// in either order, whether the route reads it or not.
func TestQueryParameterTwice(t *testing.T) {
	f := MustFixtureOf(t, edgeBoards, web.Options{WriteRate: -1})
	for _, route := range f.srv.Routes() {
		method, path := concrete(route)
		for _, q := range []string{"limit=2&limit=1001", "limit=1001&limit=2", "period=&period=", "x=1&x=1"} {
			t.Run(route+"?"+q, func(t *testing.T) {
				dump := f.dump()
				body := ""
				if method == "POST" {
					body = `{"member":"alice","value":1}`
				}
				r := f.do(t, method, path+"?"+q, adminKey, body)
				if r.Status != http.StatusUnprocessableEntity {
					t.Fatalf("status %d; body %.200s", r.Status, r.Body)
				}
				checkErrorShape(t, path, method, r, "invalid_argument")
				f.MustUnchanged(t, dump)
			})
		}
	}
}

// checkErrorShape: an error on /api/, /ws/ and the operational routes has
// the contract's JSON body; on a page, an HTML page.
func checkErrorShape(t *testing.T, path, method string, r response, code string) {
	t.Helper()
	ct := r.Header.Get("Content-Type")
	if !strings.HasPrefix(path, "/api/") && !strings.HasPrefix(path, "/ws/") && path != "/healthz" && path != "/readyz" && path != "/metrics" {
		if !strings.HasPrefix(ct, "text/html") {
			t.Errorf("page error with Content-Type %q", ct)
		}
		if method != "HEAD" && !strings.Contains(r.Body, "<html") {
			t.Errorf("page error without a page: %.200s", r.Body)
		}
		return
	}
	if !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q; body %.200s", ct, r.Body)
	}
	if method == "HEAD" {
		return
	}
	if got := r.ErrorCode(t); got != code {
		t.Errorf("code %q, want %q", got, code)
	}
}

// timeoutBody fails its first read on a deadline, as a slow client does.
type timeoutBody struct{}

func (timeoutBody) Read([]byte) (int, error) { return 0, os.ErrDeadlineExceeded }

// TestErrorAnswersHaveTheContractShape: each error status the application
// makes is JSON on the API and the live feed, HTML on pages.
func TestErrorAnswersHaveTheContractShape(t *testing.T) {
	f := MustFixtureOf(t, edgeBoards, web.Options{WriteRate: -1})
	post := func(path, ctype string, body io.Reader) *http.Request {
		req := httptest.NewRequest("POST", path, body)
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", "Bearer "+writeKey)
		return req
	}
	upgrade := func(path string, h ...string) *http.Request {
		req := httptest.NewRequest("GET", path, nil)
		for i := 0; i < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
		return req
	}
	for _, c := range []struct {
		name   string
		req    *http.Request
		status int
		code   string
	}{
		{"405 api", httptest.NewRequest("PUT", "/api/v1/boards", nil), 405, "invalid_argument"},
		{"405 api write route", httptest.NewRequest("GET", "/api/v1/boards/points/scores/batch", nil), 405, "invalid_argument"},
		{"405 page", httptest.NewRequest("PUT", "/boards/points/day", nil), 405, ""},
		{"405 page index", httptest.NewRequest("DELETE", "/", nil), 405, ""},
		{"405 ws", httptest.NewRequest("POST", "/ws/points/day", nil), 405, "invalid_argument"},
		{"404 page", httptest.NewRequest("GET", "/nowhere", nil), 404, ""},
		{"422 page", httptest.NewRequest("GET", "/boards/points/day?page=1&page=2", nil), 422, ""},
		{"408 scores", post("/api/v1/boards/points/scores", "application/json", timeoutBody{}), 408, "invalid_argument"},
		{"408 batch", post("/api/v1/boards/points/scores/batch", "application/json", timeoutBody{}), 408, "invalid_argument"},
		{"408 action", post("/api/v1/actions/like", "application/json", timeoutBody{}), 408, "invalid_argument"},
		{"413 batch", post("/api/v1/boards/points/scores/batch", "application/json", strings.NewReader(strings.Repeat(" ", web.MaxBody+1))), 413, "too_large"},
		{"413 action", post("/api/v1/actions/like", "application/json", strings.NewReader(strings.Repeat(" ", web.MaxBody+1))), 413, "too_large"},
		{"415 scores", post("/api/v1/boards/points/scores", "text/csv", strings.NewReader("alice,1")), 415, "invalid_argument"},
		{"415 action", post("/api/v1/actions/like", "text/plain", strings.NewReader(`{"member":"a"}`)), 415, "invalid_argument"},
		{"426 ws without upgrade", upgrade("/ws/points/day"), 426, "invalid_argument"},
		{"426 ws without Upgrade header", upgrade("/ws/points/day", "Connection", "Upgrade"), 426, "invalid_argument"},
		{"400 ws bad version", upgrade("/ws/points/day", "Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "8"), 400, "invalid_argument"},
		{"400 ws no key", upgrade("/ws/points/day", "Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13"), 400, "invalid_argument"},
		{"426 HEAD ws", httptest.NewRequest("HEAD", "/ws/points/day", nil), 426, "invalid_argument"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := f.serve(c.req)
			if r.Status != c.status {
				t.Fatalf("status %d, want %d; body %.200s", r.Status, c.status, r.Body)
			}
			checkErrorShape(t, c.req.URL.Path, c.req.Method, r, c.code)
			if c.status == 426 && r.Header.Get("Upgrade") != "websocket" {
				t.Errorf("426 without Upgrade: websocket")
			}
			if c.status == 405 && r.Header.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
		})
	}
}

// TestHeadNeverBuffersTwice is a guard on concurrency: HEAD and GET of the
// same shared page at once both answer (the shared answer cache must not
// keep HEAD's empty body).
func TestHeadNeverBuffersTwice(t *testing.T) {
	f := MustFixture(t)
	f.seed(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := "GET"
			if i%2 == 0 {
				m = "HEAD"
			}
			r := f.do(t, m, "/boards/points/day", "", "")
			if r.Status != 200 || (m == "GET" && !strings.Contains(r.Body, "alice")) {
				t.Errorf("%s: %d %.100s", m, r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
}
