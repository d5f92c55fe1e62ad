package web

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLogLimiter: a burst of lines, then one per interval, and each line
// after a gap says how many were suppressed.
func TestLogLimiter(t *testing.T) {
	var buf bytes.Buffer
	l := newLogLimiter(slog.New(slog.NewTextHandler(&buf, nil)), 3, time.Second)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	for range 100 {
		l.log(slog.LevelWarn, "request failed")
	}
	if got := strings.Count(buf.String(), "request failed"); got != 3 {
		t.Fatalf("%d lines logged of a burst of 100, want 3:\n%s", got, buf.String())
	}
	now = now.Add(time.Second)
	buf.Reset()
	for range 10 {
		l.log(slog.LevelWarn, "request failed")
	}
	want := "suppressed=97"
	if got := buf.String(); strings.Count(got, "request failed") != 1 || !strings.Contains(got, want) {
		t.Fatalf("after a second: want one line and %s, got\n%s", want, got)
	}
}
