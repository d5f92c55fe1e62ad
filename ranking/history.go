package ranking

import (
	"context"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"
)

// MaxHistory is the most periods History reads.
const MaxHistory = 60

// HistoryPoint is a member's standing in one period.
type HistoryPoint struct {
	Period  Period
	Score   int64 // scaled
	Rank    int64 // 0 when absent
	Total   int64
	Present bool
}

// History is a member's standing over consecutive periods of one view.
type History struct {
	Board  *Board
	View   View
	Member string
	Now    time.Time      // Redis's clock
	Points []HistoryPoint // oldest first
}

// ViewStanding is a member's standing in the current period of one view.
type ViewStanding struct {
	View    View
	Period  Period
	Final   bool
	Total   int64
	Score   int64 // scaled
	Rank    int64 // 0 when absent
	Present bool
}

// History reads a member's score and rank in the n periods of a view that
// end with period (any form ParsePeriod accepts, or "" for the current
// one), oldest first, in one round trip. The all view has one period.
// Periods that expired, or windows that were never built, read as absent;
// reading history never builds a window.
func (s *Store) History(ctx context.Context, boardID, viewName, member, period string, n int) (*History, error) {
	if n < 1 || n > MaxHistory {
		return nil, Errorf(EINVALID, "n must be from 1 to %d, got %d", MaxHistory, n)
	}
	if err := ValidateMember(member); err != nil {
		return nil, err
	}
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return nil, err
	}
	cal := s.cfg.Calendar
	var last Period
	if period != "" {
		if last, err = cal.ParsePeriod(v, period); err != nil {
			return nil, err
		}
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	if period == "" {
		last = cal.PeriodAt(v, now)
	}
	if v.Kind == All {
		n = 1
	}
	periods := make([]Period, n)
	periods[n-1] = last
	for i := n - 2; i >= 0; i-- {
		periods[i] = cal.Prev(v, periods[i+1])
	}
	cmds := make([]*redis.Cmd, n)
	pipe := s.rdb.Pipeline()
	for i, p := range periods {
		cmds[i] = readScript.EvalSha(ctx, pipe, []string{s.keyPrefix(b)}, s.memberArgs(b, v, p, member)...)
	}
	if _, err := pipe.Exec(ctx); err != nil && !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return nil, wrapRedis(err)
	}
	h := &History{Board: b, View: v, Member: member, Now: now, Points: make([]HistoryPoint, n)}
	for i, p := range periods {
		raw, err := cmds[i].Slice()
		if redis.HasErrorPrefix(err, "NOSCRIPT") {
			// First use on this server: load the script and read again.
			raw, err = readScript.Run(ctx, s.rdb, []string{s.keyPrefix(b)}, s.memberArgs(b, v, p, member)...).Slice()
		}
		if err != nil {
			return nil, wrapRedis(err)
		}
		h.Points[i], err = s.point(b, v, p, raw)
		if err != nil {
			return nil, err
		}
	}
	return h, nil
}

// memberArgs are read.lua's arguments for one member in one explicit
// period, without neighbours; windows must be built (else "absent").
func (s *Store) memberArgs(b *Board, v View, p Period, member string) []any {
	return []any{v.Name, string(b.Ties), boolArg(v.Kind == Window), "1",
		p.ID, "0", itoa(int64(math.MaxInt64 / 2)), "member", member, "0"}
}

// point decodes read.lua's member answer for one period.
func (s *Store) point(b *Board, v View, p Period, raw []any) (HistoryPoint, error) {
	pt := HistoryPoint{Period: p}
	if len(raw) < 3 || asInt(raw[1]) == -2 {
		return pt, nil // an unbuilt window
	}
	pt.Total = asInt(raw[2])
	if asInt(raw[3]) == 0 {
		return pt, nil
	}
	code, err := parseCode(raw[4])
	if err != nil {
		return pt, err
	}
	es, err := s.entries(b, v, raw[6], int(asInt(raw[3])-1), raw[7:])
	if err != nil || len(es) == 0 {
		return pt, err
	}
	pt.Score, _ = b.decode(v.Name, code)
	pt.Rank, pt.Present = es[0].Rank, true
	return pt, nil
}

// MemberViews reads a member's standing in the current period of every view
// of the board, in the board's view order. Views where the member has no
// score are included with Present false. The reads run concurrently, so
// they cost about one round trip.
func (s *Store) MemberViews(ctx context.Context, boardID, member string) ([]ViewStanding, error) {
	if err := ValidateMember(member); err != nil {
		return nil, err
	}
	b, err := s.board(boardID)
	if err != nil {
		return nil, err
	}
	out := make([]ViewStanding, len(b.Views))
	g, gctx := errgroup.WithContext(ctx)
	for i, v := range b.Views {
		g.Go(func() error {
			st, raw, err := s.read(gctx, b, v, "", "member", member, "0")
			if err != nil {
				return err
			}
			pt, err := s.point(b, v, st.Period, raw)
			if err != nil {
				return err
			}
			out[i] = ViewStanding{View: v, Period: st.Period, Final: st.Final, Total: st.Total,
				Score: pt.Score, Rank: pt.Rank, Present: pt.Present}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}
