// Package testsupport holds what the tests of several packages share.
// Only *_test.go files import it.
package testsupport

import (
	"testing"
	"time"
)

// WaitTimeout bounds every WaitFor: long enough for a loaded machine under
// -race, and only ever reached by a failing test.
const WaitTimeout = 30 * time.Second

// WaitFor polls cond until it holds, failing tb after WaitTimeout. It polls
// often at first, so that a condition that holds soon is seen at once, and
// then every 50 ms, so that a slow one (a browser round trip, a sender's
// retry) does not spin.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", WaitTimeout, what)
		}
		time.Sleep(pause)
	}
}
