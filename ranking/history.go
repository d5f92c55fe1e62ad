package ranking

import (
	"context"
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
		keys, args := s.memberRequest(b, v, p, member)
		cmds[i] = readScript.EvalSha(ctx, pipe, keys, args...)
	}
	if _, err := pipe.Exec(ctx); err != nil && !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return nil, wrapRedis(err)
	}
	h := &History{Board: b, View: v, Member: member, Now: now, Points: make([]HistoryPoint, n)}
	for i, p := range periods {
		raw, err := cmds[i].Slice()
		if redis.HasErrorPrefix(err, "NOSCRIPT") {
			// First use on this server: load the script and read again.
			keys, args := s.memberRequest(b, v, p, member)
			raw, err = readScript.Run(ctx, s.rdb, keys, args...).Slice()
		}
		if err != nil {
			return nil, wrapRedis(err)
		}
		rep, err := decodeRead(raw, "member")
		if err != nil {
			return nil, err
		}
		h.Points[i], err = s.point(b, v, p, rep)
		if err != nil {
			return nil, err
		}
	}
	return h, nil
}

// memberRequest is read.lua's request for one member in one explicit
// period, without neighbours; windows must be built (else "absent").
func (s *Store) memberRequest(b *Board, v View, p Period, member string) ([]string, []any) {
	return s.readRequest(b, v, []Period{p}, true, true, "member", member, "0")
}

// point decodes read.lua's member answer for one period.
func (s *Store) point(b *Board, v View, p Period, rep readReply) (HistoryPoint, error) {
	pt := HistoryPoint{Period: p}
	if rep.chosen == readUnbuilt {
		return pt, nil // an unbuilt window
	}
	pt.Total = rep.total
	if rep.rank == 0 {
		return pt, nil
	}
	code, err := parseCode(rep.code)
	if err != nil {
		return pt, err
	}
	es, err := s.entries(b, v, rep.firstRank, int(rep.rank-1), rep.flat)
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
			st, rep, err := s.read(gctx, b, v, "", "member", member, "0")
			if err != nil {
				return err
			}
			pt, err := s.point(b, v, st.Period, rep)
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
