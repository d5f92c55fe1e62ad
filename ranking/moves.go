package ranking

import (
	"context"
	_ "embed"
	"strconv"
	"strings"
	"sync"
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
// the same step as the writes (see MovesTop); a sharded board's are found
// by comparing its merged top once per tick (shard_moves.go); segment
// boards have none.
func (s *Store) Moves(ctx context.Context, boardID, viewName string, limit int) ([]Move, Period, error) {
	if limit < 1 || limit > MaxMoves {
		return nil, Period{}, Errorf(EINVALID, "limit must be from 1 to %d, got %d", MaxMoves, limit)
	}
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return nil, Period{}, err
	}
	all, cur, err := s.currentMoves(ctx, b, v)
	if err != nil {
		return nil, cur, err
	}
	out := all[:min(limit, len(all))]
	return out, cur, s.nameMoves(ctx, b, out)
}

// PassedBy is the newest overtake of the view's current period in which
// member was passed, or nil: names are read for that one only.
func (s *Store) PassedBy(ctx context.Context, boardID, viewName, member string) (*Move, error) {
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return nil, err
	}
	all, _, err := s.currentMoves(ctx, b, v)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Passed == member {
			return &all[i], s.nameMoves(ctx, b, all[i:i+1])
		}
	}
	return nil, nil
}

// currentMoves reads a view's kept overtakes of its current period (by
// Redis's clock), newest first, without names.
func (s *Store) currentMoves(ctx context.Context, b *Board, v View) ([]Move, Period, error) {
	now, err := s.Now(ctx)
	if err != nil {
		return nil, Period{}, err
	}
	cur := s.cfg.Calendar.PeriodAt(v, now)
	if b.Sharded() {
		if err := s.compareTop(ctx, b, v); err != nil {
			return nil, cur, err
		}
	}
	raw, err := s.rdb.LRange(ctx, s.keysOf(b).moves(v.Name), 0, MovesTop-1).Result()
	if err != nil {
		return nil, cur, wrapRedis(err)
	}
	var out []Move
	for _, line := range raw {
		if m, ok := s.parseMove(line); ok && m.Period == cur.ID {
			out = append(out, m)
		}
	}
	return out, cur, nil
}

// parseMove reads one overtake as apply.lua keeps it:
// "<period>\t<mover>\t<passed>\t<rank>\t<at_ms>", without names.
func (s *Store) parseMove(line string) (Move, bool) {
	f := strings.Split(line, "\t")
	if len(f) != 5 {
		return Move{}, false
	}
	rank, err1 := strconv.ParseInt(f[3], 10, 64)
	at, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil {
		return Move{}, false
	}
	return Move{Member: f[1], Passed: f[2], Rank: rank, At: time.UnixMilli(at).In(s.cfg.Calendar.Location()), Period: f[0]}, true
}

// nameMoves fills in the display names of moves in one HMGET (on a
// sharded board, one call per shard).
func (s *Store) nameMoves(ctx context.Context, b *Board, moves []Move) error {
	if len(moves) == 0 {
		return nil
	}
	ids := make([]string, 0, 2*len(moves))
	for _, m := range moves {
		ids = append(ids, m.Member, m.Passed)
	}
	if b.Sharded() {
		// The overtakes list is the board's; names live on each member's shard.
		got, err := (&shardRead{s: s, b: b}).names(ctx, ids)
		if err != nil {
			return err
		}
		for i := range moves {
			moves[i].Name, moves[i].PassedName = got[moves[i].Member], got[moves[i].Passed]
		}
		return nil
	}
	names, err := s.rdb.HMGet(ctx, s.keysOf(b).names(), ids...).Result()
	if err != nil {
		return wrapRedis(err)
	}
	for i := range moves {
		moves[i].Name, _ = names[2*i].(string)
		moves[i].PassedName, _ = names[2*i+1].(string)
	}
	return nil
}

// movesMaxAge is how old the overtakes a rank card looks in may be: they
// are read once per page tick (200 ms) and view, not once per card.
const movesMaxAge = 200 * time.Millisecond

// recentMoves keeps each view's overtakes list as last read.
type recentMoves struct {
	mu    sync.Mutex
	lists map[string]movesRead // board + "\x00" + view
}

type movesRead struct {
	moves []Move
	at    time.Time
}

// recentMoves returns the view's kept overtakes of any period, newest
// first, without names, read again when older than movesMaxAge.
func (s *Store) recentMoves(ctx context.Context, b *Board, v View) ([]Move, error) {
	key := b.ID + "\x00" + v.Name
	s.moves.mu.Lock()
	r, ok := s.moves.lists[key]
	s.moves.mu.Unlock()
	if ok && time.Since(r.at) < movesMaxAge {
		return r.moves, nil
	}
	at := time.Now()
	raw, err := s.rdb.LRange(ctx, s.keysOf(b).moves(v.Name), 0, MovesTop-1).Result()
	if err != nil {
		return nil, wrapRedis(err)
	}
	moves := make([]Move, 0, len(raw))
	for _, line := range raw {
		if m, ok := s.parseMove(line); ok {
			moves = append(moves, m)
		}
	}
	s.moves.mu.Lock()
	if s.moves.lists == nil {
		s.moves.lists = map[string]movesRead{}
	}
	s.moves.lists[key] = movesRead{moves: moves, at: at}
	s.moves.mu.Unlock()
	return moves, nil
}

// passedIn returns the newest of moves in period in which member was
// passed, or nil.
func passedIn(moves []Move, period, member string) *Move {
	for i := range moves {
		if moves[i].Period == period && moves[i].Passed == member {
			m := moves[i]
			return &m
		}
	}
	return nil
}

//go:embed scripts/forgetmoves.lua
var forgetMovesLua string

var forgetMovesScript = newScript(forgetMovesLua)

// forgetMovesRequest builds forgetmoves.lua's KEYS and ARGV: every view
// of board b, for member removed from it at removedMS.
func (s *Store) forgetMovesRequest(b *Board, member string, removedMS int64) (keys []string, args []any) {
	k := s.keysOf(b)
	args = append(make([]any, 0, 4+len(b.Views)), member, itoa(removedMS), s.Channel(), b.ID)
	for _, v := range b.Views {
		keys = append(keys, k.moves(v.Name), k.movesTop(v.Name))
		args = append(args, v.Name)
	}
	return keys, args
}

// forgetMoves forgets a member removed at removedMS in its board's
// overtakes (see forgetmoves.lua). It is idempotent, so it may be sent
// again.
func (s *Store) forgetMoves(ctx context.Context, b *Board, member string, removedMS int64) error {
	keys, args := s.forgetMovesRequest(b, member, removedMS)
	_, err := s.runWrite(ctx, forgetMovesScript, true, keys, args...)
	return err
}
