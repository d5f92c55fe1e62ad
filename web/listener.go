package web

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// A request target with a bad escape ("/members/a%zzb") never reaches a
// handler: net/http fails to parse it and writes a fixed plain-text 400
// straight to the connection, then closes it. There is no hook for that,
// so Listener wraps each connection, remembers the last bytes read, and
// when net/http writes exactly that answer for a target with a bad escape,
// sends the contract's error instead (JSON for the API, the HTML error page
// for pages). Anything else passes through untouched.

// plainBadRequest is what net/http writes for a request it cannot parse.
var plainBadRequest = []byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request")

// recentWindow is how much of what a connection read is kept to find the
// failed request's line: far more than any valid target of ours.
const recentWindow = 8 << 10

// requestLine finds request lines in what a connection read.
var requestLine = regexp.MustCompile(`(?:^|\n)([A-Za-z]{1,16}) ([^ \r\n]+) HTTP/1\.[01]\r?\n`)

// Listener wraps l so that requests whose target has a bad escape are
// answered in the contract's error shape. Serve plain HTTP on it (behind
// TLS the wrapper would see ciphertext and pass everything through).
func (s *Server) Listener(l net.Listener) net.Listener { return &escapeListener{Listener: l, s: s} }

type escapeListener struct {
	net.Listener
	s *Server
}

func (l *escapeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &escapeConn{Conn: c, s: l.s}, nil
}

type escapeConn struct {
	net.Conn
	s *Server

	mu     sync.Mutex // net/http reads (background reads too) and writes from different goroutines
	recent []byte
}

func (c *escapeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.recent = append(c.recent, p[:n]...)
		if over := len(c.recent) - recentWindow; over > 0 {
			c.recent = append(c.recent[:0], c.recent[over:]...)
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *escapeConn) Write(p []byte) (int, error) {
	if bytes.Equal(p, plainBadRequest) {
		c.mu.Lock()
		recent := bytes.Clone(c.recent)
		c.mu.Unlock()
		if answer := c.s.badTargetAnswer(recent); answer != nil {
			if _, err := c.Conn.Write(answer); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return c.Conn.Write(p)
}

// badTargetAnswer returns the whole HTTP answer to the last request line in
// recent when its target has a bad escape, else nil.
func (s *Server) badTargetAnswer(recent []byte) []byte {
	m := requestLine.FindAllSubmatch(recent, -1)
	if len(m) == 0 {
		return nil
	}
	method, target := string(m[len(m)-1][1]), string(m[len(m)-1][2])
	if _, err := url.ParseRequestURI(target); err == nil {
		return nil // some other fault; net/http's answer stands
	}
	path, _, _ := bytes.Cut([]byte(target), []byte("?"))
	req, err := http.NewRequest(http.MethodGet, "/", nil)
	if err != nil {
		return nil
	}
	req.Method = method
	req.URL.Path = string(path) // as sent: for logs and to tell pages from the API
	req.RequestURI = "/"
	w := &bufferedResponse{header: http.Header{}}
	c := s.echo.NewContext(req, w)
	h := s.chained(func(echo.Context) error {
		return &apiError{Status: http.StatusBadRequest, Code: ranking.EINVALID, Message: "bad escape in the request path (a % must start %XX with two hex digits)"}
	})
	_ = h(c)
	return w.bytes()
}

// bufferedResponse keeps an answer in memory to send it whole.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }
func (w *bufferedResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *bufferedResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// bytes renders the answer as HTTP/1.1, closing the connection as net/http
// does after a request it could not parse.
func (w *bufferedResponse) bytes() []byte {
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", w.status, http.StatusText(w.status))
	w.header.Set("Content-Length", strconv.Itoa(w.body.Len()))
	w.header.Set("Connection", "close")
	keys := make([]string, 0, len(w.header))
	for k := range w.header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range w.header[k] {
			fmt.Fprintf(bw, "%s: %s\r\n", k, v)
		}
	}
	bw.WriteString("\r\n")
	bw.Write(w.body.Bytes())
	bw.Flush()
	return b.Bytes()
}
