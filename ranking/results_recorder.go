package ranking

import (
	"context"
	"errors"
	"time"
)

// MaxRecordsPerPass bounds the results one recorder pass records; the rest
// wait for the next pass.
const MaxRecordsPerPass = 200

// RunResultRecorder records every final, still retained, unrecorded period
// result, relays the outboxes to the results stream and decides the
// cohorts of ended league rounds, every interval
// until ctx ends (first at once: missed results are recorded on start).
// Every instance may run it: each result is recorded and relayed once.
func (s *Store) RunResultRecorder(ctx context.Context, every time.Duration, onError func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.RecordResults(ctx); err != nil && onError != nil && ctx.Err() == nil {
			onError(err)
		}
		if _, err := s.RelayResults(ctx); err != nil && onError != nil && ctx.Err() == nil {
			onError(err)
		}
		if _, err := s.DecideLeagues(ctx); err != nil && onError != nil && ctx.Err() == nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.hooks.kick:
		}
	}
}

// RecordResults is one recorder pass: it returns how many results it
// recorded. Errors of one view do not stop the others; the first is
// returned.
func (s *Store) RecordResults(ctx context.Context) (int, error) {
	// Which periods are final is Redis's call: measure its clock once per
	// pass rather than trust the estimate.
	if err := s.SyncClock(ctx); err != nil {
		return 0, err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return 0, err
	}
	recorded, budget := 0, MaxRecordsPerPass
	var errs []error
	for _, b := range s.cfg.Boards {
		if b.ResultsKeep == 0 {
			continue
		}
		for _, v := range b.Views {
			if !resultsView(v) || budget == 0 {
				continue
			}
			missing, err := s.unrecorded(ctx, b, v, now)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, p := range missing {
				if budget == 0 {
					break
				}
				budget--
				ok, err := s.recordResult(ctx, b, v, p)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if ok {
					recorded++
				}
			}
		}
	}
	return recorded, errors.Join(errs...)
}

// unrecorded lists the final periods of a view still retained at now and
// not yet in its results index, oldest first: from the newest final period
// back at most results_keep periods.
func (s *Store) unrecorded(ctx context.Context, b *Board, v View, now time.Time) ([]Period, error) {
	cal := s.cfg.Calendar
	p := cal.PeriodAt(v, now)
	for !b.Final(p, now) {
		p = cal.Prev(v, p)
	}
	var cands []Period
	for len(cands) < b.ResultsKeep && now.UnixMilli() < s.entry(b, v, p).expireAt {
		cands = append(cands, p)
		p = cal.Prev(v, p)
	}
	if len(cands) == 0 {
		return nil, nil
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	scores, err := s.rdb.ZMScore(ctx, s.keysOf(b).resultsIndex(v.Name), ids...).Result()
	if err != nil {
		return nil, wrapRedis(err)
	}
	var out []Period
	for i := len(cands) - 1; i >= 0; i-- {
		if scores[i] == 0 { // absent (a start of 0 ms, 1970, is never retained)
			out = append(out, cands[i])
		}
	}
	return out, nil
}

// relayBatch bounds the outbox entries one relay pass reads per board.
const relayBatch = 100

// RelayResults drains every board's outbox, each entry once: result
// events (result.recorded, result.amended) go to the results stream; a
// member.removed event first amends the results that list the member (so a
// removal whose process died before amending is still amended); every
// event goes to the webhooks that take it. Entries are deleted from the
// outbox once handled. It returns how many stream entries it appended.
func (s *Store) RelayResults(ctx context.Context) (int, error) {
	appended := 0
	for _, b := range s.cfg.Boards {
		n, err := s.relayOutbox(ctx, b, s.keysOf(b).outbox(), "")
		appended += n
		if err != nil {
			return appended, err
		}
		if !b.Sharded() {
			continue
		}
		// A sharded board's member.removed entries are in its members'
		// shards' outboxes, each written with its removal.
		for i := range b.Shards {
			n, err := s.relayOutbox(ctx, b, s.shardKeys(b, i).outbox(), "/"+itoa(int64(i)))
			appended += n
			if err != nil {
				return appended, err
			}
		}
	}
	return appended, nil
}

// relayOutbox relays up to relayBatch entries of one outbox of board b;
// suffix tells its entries' ids apart from another outbox's of the board.
func (s *Store) relayOutbox(ctx context.Context, b *Board, outbox, suffix string) (int, error) {
	msgs, err := s.rdb.XRangeN(ctx, outbox, "-", "+", relayBatch).Result()
	if err != nil {
		return 0, wrapRedis(err)
	}
	appended := 0
	for _, m := range msgs {
		added, err := s.relayEntry(ctx, b, m, m.ID+suffix)
		if err != nil {
			return appended, err
		}
		if added {
			appended++
		}
		if s.afterRelay != nil {
			if err := s.afterRelay(); err != nil {
				return appended, err
			}
		}
		// Deleted only once handled: a crash before this line handles the
		// entry again; relay.lua drops a duplicate copy, and an amendment
		// already made is not made twice.
		if err := s.rdb.XDel(ctx, outbox, m.ID).Err(); err != nil {
			return appended, wrapRedis(err)
		}
	}
	return appended, nil
}
