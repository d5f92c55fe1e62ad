package ranking

import (
	"context"
	"time"
)

// Rolling windows: how they are kept.
//
// An event writes its day total and every *built* window whose days include
// the event's day, up to tomorrow's (if prepared): a constant number of writes
// whatever N is (late events reach at most lateness-in-days more windows).
// A window is built by `ensure.lua`:
//
//    window(e) = window(e-1) - day(e-N) + day(e)      if window(e-1) is built
//    window(e) = day(e-N+1) + ... + day(e)            otherwise
//
// re-encoding each member's latest change time to the new window's base
// (windows use the usual code with span = longest N days); a member whose
// latest change fell on the day that left had no other event and is dropped.
// `PrepareWindows` (every minute, any instance) builds today's window and, in
// the last hour of the day, tomorrow's, so the first read after midnight is
// ordinary. A write that finds today's window unbuilt gets `-2` from
// `apply.lua` with nothing written, builds it, and retries; a read does the
// same for any window still within its retention. Day totals expire when the
// last window that covers them does. A zero increment changes nothing, so a
// window's tie time is exactly the latest non-zero event however it was built.
// A build is O(members of the window) inside one script: it blocks Redis for
// that long once a day per window (a few hundred ms for 100k members).

// PrepareLead is how long before a local midnight PrepareWindows builds the
// next day's windows, so the first read after midnight is complete.
const PrepareLead = time.Hour

// PrepareWindows builds today's window of every rolling view (if a process
// missed it) and, within PrepareLead of midnight, tomorrow's. It is
// idempotent and safe to run from several app instances at once; writes
// may continue meanwhile (each build is one atomic script).
func (s *Store) PrepareWindows(ctx context.Context) error { return s.prepareWindows(ctx, PrepareLead) }

// PrepareTomorrow builds today's and tomorrow's windows now, whatever the
// hour (for tools and benchmarks that want the state of a day's last hour).
func (s *Store) PrepareTomorrow(ctx context.Context) error {
	return s.prepareWindows(ctx, 48*time.Hour)
}

func (s *Store) prepareWindows(ctx context.Context, lead time.Duration) error {
	cal := s.cfg.Calendar
	for _, b := range s.cfg.Boards {
		for _, v := range b.Views {
			if v.Kind != Window {
				continue
			}
			now, err := s.Now(ctx)
			if err != nil {
				return err
			}
			cur := cal.PeriodAt(v, now)
			if err := s.ensureWindow(ctx, b, v, cur); err != nil {
				return err
			}
			if !now.Before(cur.End.Add(-lead)) {
				if err := s.ensureWindow(ctx, b, v, cal.Next(v, cur)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// RunWindowPreparer calls PrepareWindows every interval until ctx ends,
// reporting failures to onError (which may be nil).
func (s *Store) RunWindowPreparer(ctx context.Context, every time.Duration, onError func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := s.PrepareWindows(ctx); err != nil && onError != nil && ctx.Err() == nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ensureWindowID builds the window of view named id of a segment board (or
// of the board, for the zero Segment), if needed.
func (s *Store) ensureWindowID(ctx context.Context, b *Board, viewName string, seg Segment, id string) error {
	v, ok := b.View(viewName)
	if !ok || v.Kind != Window {
		return Errorf(EINTERNAL, "no rolling view %q on board %q", viewName, b.ID)
	}
	p, err := s.cfg.Calendar.ParsePeriod(v, id)
	if err != nil {
		return err
	}
	return s.ensureSegWindow(ctx, b, v, seg, p)
}
