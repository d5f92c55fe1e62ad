package ranking

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Amendments after a removal.
//
// Amendment (contract 9, `results_amend.go`): `Store.RemoveMember` runs
// remove.lua, then amends at once (so the next results read is amended); the
// `member.removed` outbox entry stays until the relay has run the amendment
// again (a no-op by then), so a process dying between the two still amends.
// A member counts as present (200) when it is listed in a result even if
// every period that held it has expired. `amendRemoved(board, member,
// removed_ms)` walks `rm:<member>`; for each listed result still stored,
// still listing the member and with `recorded_at` ≤ `removed_ms` (a result
// read after the removal can list the member only if it came back: it
// returns only by writes, never into a period already final, so the
// removal's own millisecond is safe), it builds the amended result:
//
// - period still retained (Redis's now < the period's expiry, as the recorder
//   decides): read again exactly as recording does (read.lua, top
//   `results_top` and total);
// - else: the member's entry dropped, the ranks after it one less (a tie
//   partner keeps its shared rank), total − 1.
//
// `recorded_at` stays, `amended_at` = Redis's now (the read's for a
// recomputation, `TIME` for a drop), new digest (the canonical form does not
// cover the timestamps). amend.lua then, atomically: `gone` if the result was
// trimmed meanwhile (and forgets the listing); `moved` if the stored
// string's `redis.sha1hex` differs from the one Go read; `stale` as
// record.lua; `changed` if a recomputation finds the period expired or its
// ZCARD/top not as read, or a drop finds the period still retained; else SET
// rs, XADD `result.amended`, ZREM the listing from the removed member's `rm`,
// and ZADD it to the `rm` of every member newly listed. Go retries
// `moved`/`changed`/`stale` up to 5 times per result. A result no longer
// listing the member is skipped (its listing forgotten), so running the
// amendment twice amends once. A member listed in the period but below
// `results_top` does not make its removal amend the result (the contract
// amends results that list it); the next amendment of that result, if any,
// recomputes the total without it.
//
// On a sharded board the recomputation reads the merged period and checks
// the board's removal count instead of the period (as recording does);
// `amendRemoved` first increments that count.
//
// On a league board `amendRemoved` then walks `lc:<member>` the same way
// for the recorded cohort results listing the member (league_amend.go:
// `amendCohorts`, leagueamend.lua): each is only dropped from, as above
// but with no total, and its outcomes stay as decided at the close.
//
// The `rm` horizon: a result leaves its view's index when the
// `results_keep`-th newer period is recorded, so `rm` keys get
// `PEXPIREAT` ≥ end + lateness + (`results_keep` + 1) × the view's step
// (measured at the period, + 1/8 for month and DST lengths) + 1 day. While
// some instance runs the recorder that outlasts every listing; after a
// downtime longer than that (results are trimmed only as new ones are
// recorded) a removal may miss results older than the horizon.

// amendAttempts bounds retries of one result's amendment when the stored
// result, the period or Redis's clock moves between the read and
// amend.lua.
const amendAttempts = 5

// amendRemoved amends every recorded result of board b that lists member
// and was recorded no later than removedMS (Redis's clock at the removal): a
// member removed and later back on the board stays in the newer results.
// The member's reverse index names the results, so nothing else is
// scanned; on a league board its cohort listing names the recorded cohort
// results too. It returns how many results it amended; running it again
// amends none. Errors of one result do not stop the others.
func (s *Store) amendRemoved(ctx context.Context, b *Board, member string, removedMS int64) (int, error) {
	if err := s.forgetMoves(ctx, b, member, removedMS); err != nil {
		return 0, err
	}
	if b.Sharded() {
		// Counted after the member left its shard and before its
		// listings are read: a result read from the shards before the
		// removal and stored after this walk would go unamended, so
		// record.lua and amend.lua refuse one whose read began before the
		// count moved.
		if err := s.rdb.Incr(ctx, s.keysOf(b).removals()).Err(); err != nil {
			return 0, wrapRedis(err)
		}
	}
	listings, err := s.rdb.ZRange(ctx, s.keysOf(b).memberResults(member), 0, -1).Result()
	if err != nil {
		return 0, wrapRedis(err)
	}
	amended := 0
	var errs []error
	for _, l := range listings {
		ok, err := s.amendListed(ctx, b, member, removedMS, l)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			amended++
		}
	}
	if b.League != nil {
		n, err := s.amendCohorts(ctx, b, member, removedMS)
		amended += n
		errs = append(errs, err)
	}
	return amended, errors.Join(errs...)
}

// amendListed amends the one result a reverse index listing names, if it
// still lists the member and was recorded before the removal. A listing
// whose result is gone (trimmed), or no longer lists the member, is
// forgotten.
func (s *Store) amendListed(ctx context.Context, b *Board, member string, removedMS int64, listing string) (bool, error) {
	rm := s.keysOf(b).memberResults(member)
	forget := func() (bool, error) { return false, wrapRedis(s.rdb.ZRem(ctx, rm, listing).Err()) }
	viewName, periodID, ok := strings.Cut(listing, "\n")
	v, known := b.View(viewName)
	if !ok || !known || !resultsView(v) {
		return forget() // a view no longer configured: its results are not served
	}
	p, err := s.cfg.Calendar.ParsePeriod(v, periodID)
	if err != nil {
		return forget()
	}
	for attempt := 0; attempt < amendAttempts; attempt++ {
		raw, err := s.rdb.Get(ctx, s.keysOf(b).result(v.Name, p.ID)).Bytes()
		if errors.Is(err, redis.Nil) {
			return forget()
		}
		if err != nil {
			return false, wrapRedis(err)
		}
		var old Result
		if err := json.Unmarshal(raw, &old); err != nil {
			return false, Errorf(EINTERNAL, "stored result %s %s of board %q: %v", v.Name, p.ID, b.ID, err)
		}
		recorded, err := time.Parse(resultTimeLayout, old.RecordedAt)
		if err != nil {
			return false, Errorf(EINTERNAL, "stored result %s %s of board %q: recorded_at %q", v.Name, p.ID, b.ID, old.RecordedAt)
		}
		if recorded.UnixMilli() > removedMS {
			// Read after the removal, so listed since it came back. A read in
			// the removal's own millisecond cannot list it again: a member
			// returns only by writes, never to a period already final.
			return false, nil
		}
		at := slices.IndexFunc(old.Entries, func(e ResultEntry) bool { return e.Member == member })
		if at < 0 {
			return forget()
		}
		a, err := s.amendmentOf(ctx, b, v, p, raw, &old, at)
		if err != nil {
			return false, err
		}
		keys, args := s.amendRequest(b, v, p, a)
		ans, err := amendScript.Run(ctx, s.rdb, keys, args...).Text()
		if err != nil {
			return false, wrapRedis(err)
		}
		switch ans {
		case amendAmended:
			return true, nil
		case amendGone:
			return false, nil
		case amendMoved, amendChanged, amendStale:
			continue
		default:
			return false, Errorf(EINTERNAL, "amend: unexpected reply %q", ans)
		}
	}
	return false, Errorf(EUNAVAILABLE, "the result of %s %s of board %q kept changing while it was amended; try again", v.Name, p.ID, b.ID)
}

// amendmentOf builds the amended result of p without the member at
// old.Entries[at]: read again from the period while it is retained, as
// recordResult reads it; else that entry dropped, the ranks after it one
// less and the total one less. recorded_at stays; amended_at is Redis's
// now.
func (s *Store) amendmentOf(ctx context.Context, b *Board, v View, p Period, raw []byte, old *Result, at int) (*amendment, error) {
	now, err := s.rdb.Time(ctx).Result()
	if err != nil {
		return nil, wrapRedis(err)
	}
	r := *old
	a := &amendment{old: raw, result: &r, removed: old.Entries[at].Member, expireMS: s.entry(b, v, p).expireAt, amendedMS: now.UnixMilli()}
	if a.amendedMS < a.expireMS {
		removals, markMS, err := s.removalMark(ctx, b)
		if err != nil {
			return nil, err
		}
		st, rep, err := s.read(ctx, b, v, p.ID, "page", "0", itoa(int64(b.ResultsTop)))
		if err != nil {
			return nil, err
		}
		if b.Sharded() {
			rep.nowMS, a.removals = markMS, removals
		}
		if r.Entries, err = s.resultEntries(b, v, rep); err != nil {
			return nil, err
		}
		r.Total, a.flat, a.recompute, a.amendedMS = st.Total, rep.flat, true, rep.nowMS
		for _, e := range r.Entries {
			if !slices.ContainsFunc(old.Entries, func(o ResultEntry) bool { return o.Member == e.Member }) {
				a.added = append(a.added, e.Member)
			}
		}
	} else {
		gone := old.Entries[at]
		r.Entries = make([]ResultEntry, 0, len(old.Entries)-1)
		for i, e := range old.Entries {
			if i == at {
				continue
			}
			if e.Rank > gone.Rank { // a tie partner keeps its shared rank
				e.Rank--
			}
			r.Entries = append(r.Entries, e)
		}
		r.Total--
	}
	r.AmendedAt = formatResultTime(a.amendedMS)
	r.Digest = r.ComputeDigest()
	return a, nil
}
