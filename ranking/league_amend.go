package ranking

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Amendments of recorded league cohort results after a removal, with the
// period amendments' guarantees (results_amend.go): RemoveMember amends at
// once, and the member.removed outbox entry makes the relay run it again,
// a no-op by then. leaguerecord.lua lists each recorded cohort result in
// every listed member's lc:<member>, with the result's expiry, so the
// listing outlives the member's record (lm:) and seats, which the removal
// deletes. A cohort result is only ever dropped from, never read again
// from the round: its outcomes were decided once, at the close. On a
// sharded board the listing, the result and the result.amended entry are
// the member's shard's (its lc:, lg:<round>:rs: and out).

//go:embed scripts/leagueamend.lua
var leagueAmendLua string

var leagueAmendScript = newScript(leagueAmendLua)

// leagueamend.lua's answers.
const (
	leagueAmendAmended = "amended"
	leagueAmendGone    = "gone"  // the result expired
	leagueAmendMoved   = "moved" // the stored result is not the one read
	leagueAmendStale   = "stale" // Redis's now is too far from amended_at
)

// leagueAmendRequest builds KEYS and ARGV for leagueamend.lua: old is the
// stored result as read, r the amended one.
func (s *Store) leagueAmendRequest(b *Board, member, listing, key string, old []byte, r *CohortResult, amendedMS int64) (keys []string, args []any) {
	k := s.memberKeys(b, member)
	sum := sha1.Sum(old)
	keys = []string{key, k.outbox(), k.leagueMemberResults(member)}
	args = []any{hex.EncodeToString(sum[:]), string(marshalNoHTML(r)), r.Digest, r.Round, r.Tier,
		itoa(int64(r.Cohort)), itoa(amendedMS), listing}
	return keys, args
}

// amendCohorts amends every recorded cohort result of board b that lists
// member and was recorded no later than removedMS, as amendRemoved does for
// period results. It returns how many it amended; running it again amends
// none.
func (s *Store) amendCohorts(ctx context.Context, b *Board, member string, removedMS int64) (int, error) {
	listings, err := s.rdb.ZRange(ctx, s.memberKeys(b, member).leagueMemberResults(member), 0, -1).Result()
	if err != nil {
		return 0, wrapRedis(err)
	}
	amended := 0
	var errs []error
	for _, l := range listings {
		ok, err := s.amendCohortListed(ctx, b, member, removedMS, l)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			amended++
		}
	}
	return amended, errors.Join(errs...)
}

// amendCohortListed amends the one cohort result a listing names, if it
// still lists the member and was recorded before the removal. A listing
// whose result is gone (expired), or no longer lists the member, is
// forgotten.
func (s *Store) amendCohortListed(ctx context.Context, b *Board, member string, removedMS int64, listing string) (bool, error) {
	k := s.memberKeys(b, member)
	lc := k.leagueMemberResults(member)
	forget := func() (bool, error) { return false, wrapRedis(s.rdb.ZRem(ctx, lc, listing).Err()) }
	parts := strings.Split(listing, "\n")
	if len(parts) != 3 || b.League == nil {
		return forget()
	}
	level, err1 := strconv.Atoi(parts[1])
	cohort, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || level < 1 || cohort < 1 || cohort > MaxCohortNumber {
		return forget()
	}
	key := k.leagueResult(parts[0], level, cohort) // the shard's own cohort number
	for attempt := 0; attempt < amendAttempts; attempt++ {
		raw, err := s.rdb.Get(ctx, key).Bytes()
		if errors.Is(err, redis.Nil) {
			return forget()
		}
		if err != nil {
			return false, wrapRedis(err)
		}
		var old CohortResult
		if err := json.Unmarshal(raw, &old); err != nil {
			return false, Errorf(EINTERNAL, "stored result of cohort %s of board %q: %v", listing, b.ID, err)
		}
		recorded, err := time.Parse(resultTimeLayout, old.RecordedAt)
		if err != nil {
			return false, Errorf(EINTERNAL, "stored result of cohort %s of board %q: recorded_at %q", listing, b.ID, old.RecordedAt)
		}
		if recorded.UnixMilli() > removedMS {
			// Recorded after the removal, so listed since it came back
			// (it took a new seat in a round still open).
			return false, nil
		}
		at := slices.IndexFunc(old.Entries, func(e CohortResultEntry) bool { return e.Member == member })
		if at < 0 {
			return forget()
		}
		now, err := s.rdb.Time(ctx).Result()
		if err != nil {
			return false, wrapRedis(err)
		}
		r := dropCohortEntry(old, at)
		r.AmendedAt = formatResultTime(now.UnixMilli())
		r.Digest = r.ComputeDigest()
		keys, args := s.leagueAmendRequest(b, member, listing, key, raw, r, now.UnixMilli())
		ans, err := leagueAmendScript.Run(ctx, s.rdb, keys, args...).Text()
		if err != nil {
			return false, wrapRedis(err)
		}
		switch ans {
		case leagueAmendAmended:
			return true, nil
		case leagueAmendGone:
			return false, nil
		case leagueAmendMoved, leagueAmendStale:
			continue
		default:
			return false, Errorf(EINTERNAL, "leagueamend: unexpected reply %q", ans)
		}
	}
	return false, Errorf(EUNAVAILABLE, "the result of cohort %s of board %q kept changing while it was amended; try again", listing, b.ID)
}

// dropCohortEntry is r without its entry at: the ranks after it one less,
// which is how the board ranks the rest (a tie partner keeps its shared
// rank; ranks without ties are distinct). Outcomes stay as decided.
func dropCohortEntry(r CohortResult, at int) *CohortResult {
	gone := r.Entries[at]
	entries := make([]CohortResultEntry, 0, len(r.Entries)-1)
	for i, e := range r.Entries {
		if i == at {
			continue
		}
		if e.Rank > gone.Rank {
			e.Rank--
		}
		entries = append(entries, e)
	}
	r.Entries = entries
	return &r
}
