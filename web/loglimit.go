package web

import (
	"log/slog"
	"sync"
	"time"
)

// Failed requests are logged at most errLogBurst at once and then one per
// errLogEvery, so that a Redis outage under load cannot flood the log.
const (
	errLogBurst = 10
	errLogEvery = time.Second
)

// logLimiter is a token bucket in front of a logger. What it drops it
// counts, and the next line it lets through is preceded by a line saying
// how many similar errors were suppressed.
type logLimiter struct {
	logger *slog.Logger
	burst  float64
	every  time.Duration
	now    func() time.Time

	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed int
}

func newLogLimiter(logger *slog.Logger, burst int, every time.Duration) *logLimiter {
	return &logLimiter{logger: logger, burst: float64(burst), every: every, now: time.Now, tokens: float64(burst)}
}

// log writes one line at level unless the budget is spent.
func (l *logLimiter) log(level slog.Level, msg string, args ...any) {
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+float64(now.Sub(l.last))/float64(l.every))
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	l.tokens--
	n := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	if n > 0 {
		l.logger.Warn("similar errors suppressed", "suppressed", n)
	}
	l.logger.Log(nil, level, msg, args...) //nolint:staticcheck // no context to pass
}
