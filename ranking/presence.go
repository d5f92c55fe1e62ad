package ranking

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// MaxScored is the most members one Scored call looks up.
const MaxScored = 1000

// Scored reports, for each of members, whether it has a score in the
// current period of a view of segment board seg (the zero Segment: the
// board itself). It is one ZMSCORE on one key, however many
// members (on a sharded board, one call per shard holding some of them): the live feed asks it which of the members its "not ranked"
// viewers follow have started scoring, so that thousands of such viewers
// cost one cheap read per tick rather than one card read each.
//
// The current period is chosen by the estimate of Redis's clock, not by a
// script: at a period boundary the answer may be a few milliseconds stale,
// which a caller that asks again every tick does not notice. A rolling
// window nobody has built reads as empty (writes build today's window
// before they change anything, so a member that scored is in it).
func (s *Store) Scored(ctx context.Context, boardID, viewName string, seg Segment, members []string) ([]bool, error) {
	if len(members) > MaxScored {
		return nil, Errorf(EINVALID, "at most %d members at once, got %d", MaxScored, len(members))
	}
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return nil, err
	}
	if err := b.ValidateSegment(seg); err != nil {
		return nil, err
	}
	out := make([]bool, len(members))
	if len(members) == 0 {
		return out, nil
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	p := s.cfg.Calendar.PeriodAt(v, now)
	if b.Sharded() {
		// One ZMSCORE-like op per shard, on the shards of the members asked.
		codes, err := s.shardRead(b, v, seg, p).codes(ctx, members)
		if err != nil {
			return nil, err
		}
		for i, m := range members {
			_, out[i] = codes[m]
		}
		return out, nil
	}
	key := s.keysOf(b).segPeriod(v, seg, p.ID)
	args := make([]any, 0, 2+len(members))
	args = append(args, "ZMSCORE", key)
	for _, m := range members {
		args = append(args, m)
	}
	// Raw replies: a member without a score is nil, which a float reply
	// would turn into 0, a code a member can have.
	scores, err := s.rdb.Do(ctx, args...).Slice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrapRedis(err)
	}
	for i := range min(len(scores), len(out)) {
		out[i] = scores[i] != nil
	}
	return out, nil
}
