package ranking

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Move is one overtake: a write moved Member up to Rank in a view's
// current period, past Passed (the member now right behind it), within
// the best MovesTop ranks.
type Move struct {
	Member     string
	Name       string // display name; empty when none is known
	Passed     string
	PassedName string
	Rank       int64
	At         time.Time // the event's time
	Period     string
}

// MaxMoves is the most overtakes one read answers.
const MaxMoves = MovesTop

// Moves reads the newest overtakes (up to limit, 1..MaxMoves) of a view's
// current period by Redis's clock, newest first. apply.lua records them in
// the same step as the writes (see MovesTop); segment boards have none.
func (s *Store) Moves(ctx context.Context, boardID, viewName string, limit int) ([]Move, Period, error) {
	if limit < 1 || limit > MaxMoves {
		return nil, Period{}, Errorf(EINVALID, "limit must be from 1 to %d, got %d", MaxMoves, limit)
	}
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return nil, Period{}, err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, Period{}, err
	}
	cur := s.cfg.Calendar.PeriodAt(v, now)
	raw, err := s.rdb.LRange(ctx, s.movesKey(b, v), 0, MovesTop-1).Result()
	if err != nil {
		return nil, cur, wrapRedis(err)
	}
	var out []Move
	var ids []string
	for _, line := range raw {
		f := strings.Split(line, "\t")
		if len(f) != 5 || f[0] != cur.ID {
			continue
		}
		rank, _ := strconv.ParseInt(f[3], 10, 64)
		at, _ := strconv.ParseInt(f[4], 10, 64)
		out = append(out, Move{Member: f[1], Passed: f[2], Rank: rank, At: time.UnixMilli(at).In(s.cfg.Calendar.Location()), Period: f[0]})
		ids = append(ids, f[1], f[2])
		if len(out) == limit {
			break
		}
	}
	if len(out) == 0 {
		return nil, cur, nil
	}
	names, err := s.rdb.HMGet(ctx, s.boardKey(b, "n"), ids...).Result()
	if err != nil {
		return nil, cur, wrapRedis(err)
	}
	for i := range out {
		out[i].Name, _ = names[2*i].(string)
		out[i].PassedName, _ = names[2*i+1].(string)
	}
	return out, cur, nil
}
