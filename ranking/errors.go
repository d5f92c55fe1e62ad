package ranking

import (
	"errors"
	"fmt"
)

// Error codes. The web layer maps each to one HTTP status; nothing else
// should inspect them.
const (
	EINVALID     = "invalid_argument" // bad input: a value the contract refuses
	ENOTFOUND    = "not_found"        // unknown board, view, or member without a score
	ECONFLICT    = "conflict"         // an idempotency id reused with different content
	EUNAVAILABLE = "unavailable"      // Redis unreachable
	EINTERNAL    = "internal"         // anything else; a bug or an unexpected reply
)

// Outcomes of a write that failed for want of Redis (EUNAVAILABLE).
const (
	// OutcomeUnknown: the write was sent and no answer came in time (a
	// timeout, a connection dropped mid-call); Redis may apply it later.
	OutcomeUnknown = "unknown"
	// OutcomeNotApplied: provably nothing reached Redis (no connection, a
	// context that ended before sending, a refusal such as TRYAGAIN).
	OutcomeNotApplied = "not_applied"
)

// Error is a domain error that carries an application code and a message
// safe to show to the caller.
type Error struct {
	Code    string
	Message string
	// Outcome is set on an EUNAVAILABLE error of a write: OutcomeUnknown
	// or OutcomeNotApplied. Reads leave it empty.
	Outcome string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, or EINTERNAL when err carries none.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-safe message of err; internal errors get a
// generic text so that nothing about the machinery leaks.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// ErrorOutcome returns the outcome of a failed write (OutcomeUnknown or
// OutcomeNotApplied), or "" when err says nothing about one.
func ErrorOutcome(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Outcome
	}
	return ""
}

// NotApplied marks an EUNAVAILABLE error of a step before a write was sent
// (the clock, a window build, the write budget) as the write's "not
// applied" outcome; other errors come back as they are.
func NotApplied(err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Code != EUNAVAILABLE || e.Outcome != "" {
		return err
	}
	return &Error{Code: EUNAVAILABLE, Outcome: OutcomeNotApplied, Message: "the score store (Redis) is unavailable; the write was not applied; try again shortly"}
}
