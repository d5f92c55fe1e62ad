package ranking

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Entry is one row of a board.
type Entry struct {
	Rank   int64
	Member string
	Name   string // display name; empty when none is known
	Score  int64  // scaled
	// PrevRank is the member's rank in the previous period of the view
	// (for a window, the window that ended yesterday; for all, at the last
	// local midnight): a rank, PrevNew when it had no score then, or
	// PrevUnknown.
	PrevRank int64
}

// Entry.PrevRank values besides a rank.
const (
	PrevUnknown = 0  // not read, or not known (below an all view's snapshot)
	PrevNew     = -1 // no score in the previous period
)

// setPrevs sets entries' previous ranks from read.lua's prevs (none when
// empty).
func setPrevs(es []Entry, prevs []any) {
	if len(prevs) != len(es) {
		return
	}
	for k := range es {
		switch p := asInt(prevs[k]); {
		case p > 0:
			es[k].PrevRank = p
		case p == 0:
			es[k].PrevRank = PrevNew
		case p == -2:
			es[k].PrevRank = es[k].Rank
		}
	}
}

// Standing describes the period a read looked at.
type Standing struct {
	Board  *Board
	View   View
	Period Period
	Final  bool
	Total  int64
	Now    time.Time // Redis's clock at the read
}

// Page is a slice of one period of one view.
type Page struct {
	Standing
	Offset  int
	Entries []Entry
	// Next is where the page after this one starts: an export passes it
	// as the next query's After (see PageQuery.After).
	Next *Cursor
}

// Cursor marks the end of a page: its position and last entry.
type Cursor struct {
	offset int
	member string
	code   string
}

// Card is one member's standing in one period of one view.
type Card struct {
	Standing
	Entry              // the member's own row
	TopPercent float64 // 100 × rank / total, rounded to 2 decimals
	Around     []Entry // neighbours and the member, in rank order
}

// Read limits.
const (
	MaxLimit  = 1000
	MaxAround = 50
)

// PageQuery says which slice of which period a Page read answers. The
// zero value, with a Limit, reads the board itself in the current period.
type PageQuery struct {
	// Segment is the segment board read; the zero Segment is the board
	// itself. An unknown segment name is EINVALID; a value never seen
	// reads as an empty period.
	Segment Segment
	// Period is any form ParsePeriod accepts, or "" for the current
	// period by Redis's clock.
	Period string
	Offset int // 0-based position of the first entry
	Limit  int // 1..MaxLimit entries
	// NoPrevRanks leaves previous ranks out (PrevRank is PrevUnknown):
	// for exports, which read every row and show no movement.
	NoPrevRanks bool
	// After, the Next of the page before (same board, view, segment and
	// period, Offset its end), lets a sharded board start where that page
	// ended instead of counting its way down to Offset: an export of a
	// whole period is then one streamed merge. Other boards ignore it.
	After *Cursor
}

// Page reads entries [Offset, Offset+Limit) of a view's period. An empty,
// future or expired period has Total 0.
func (s *Store) Page(ctx context.Context, boardID, viewName string, q PageQuery) (*Page, error) {
	seg, period, offset, limit := q.Segment, q.Period, q.Offset, q.Limit
	if offset < 0 {
		return nil, Errorf(EINVALID, "offset must be >= 0, got %d", offset)
	}
	if limit < 1 || limit > MaxLimit {
		return nil, Errorf(EINVALID, "limit must be from 1 to %d, got %d", MaxLimit, limit)
	}
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return nil, err
	}
	if err := b.ValidateSegment(seg); err != nil {
		return nil, err
	}
	mode := "page"
	if q.NoPrevRanks {
		mode = "rows"
	}
	args := []string{mode, itoa(int64(offset)), itoa(int64(limit))}
	if a := q.After; a != nil && a.offset == offset && b.Sharded() {
		args = append(args, a.member, a.code)
	}
	st, rep, err := s.readSeg(ctx, b, v, seg, period, args...)
	if err != nil {
		return nil, err
	}
	pg := &Page{Standing: st, Offset: offset}
	pg.Entries, err = s.entries(b, v, rep.firstRank, offset, rep.flat)
	setPrevs(pg.Entries, rep.prevs)
	if n := len(rep.flat); n >= 3 {
		m, _ := rep.flat[n-3].(string)
		code, _ := rep.flat[n-2].(string)
		pg.Next = &Cursor{offset: offset + n/3, member: m, code: code}
	}
	return pg, err
}

// MaxMembersList bounds a member list ("friends") read.
const MaxMembersList = 100

// MembersQuery says which period a Members read looks at. The zero value
// reads the board itself in the current period.
type MembersQuery struct {
	Segment Segment // the segment board read; zero: the board itself
	Period  string  // as PageQuery.Period
}

// Members reads the ranked ones among members (1..MaxMembersList valid
// ids; repeats count once) in one period of a view, in rank order, each
// with its rank on the whole period; the Page's Total is the period's.
// Members without a score are left out.
func (s *Store) Members(ctx context.Context, boardID, viewName string, members []string, q MembersQuery) (*Page, error) {
	seg, period := q.Segment, q.Period
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return nil, err
	}
	if err := b.ValidateSegment(seg); err != nil {
		return nil, err
	}
	if len(members) == 0 || len(members) > MaxMembersList {
		return nil, Errorf(EINVALID, "members must list 1 to %d member ids, got %d", MaxMembersList, len(members))
	}
	seen := make(map[string]bool, len(members))
	args := []string{"members", ""}
	for _, m := range members {
		if err := ValidateMember(m); err != nil {
			return nil, err
		}
		if !seen[m] {
			seen[m] = true
			args = append(args, m)
		}
	}
	args[1] = itoa(int64(len(args) - 2))
	st, rep, err := s.readSeg(ctx, b, v, seg, period, args...)
	if err != nil {
		return nil, err
	}
	pg := &Page{Standing: st}
	for k := 0; k+3 < len(rep.flat); k += 4 {
		m, _ := rep.flat[k+1].(string)
		code, err := parseCode(rep.flat[k+2])
		if err != nil {
			return nil, err
		}
		name, _ := rep.flat[k+3].(string)
		score, _ := b.decode(v.Name, code)
		pg.Entries = append(pg.Entries, Entry{Rank: asInt(rep.flat[k]), Member: m, Name: name, Score: score})
	}
	setPrevs(pg.Entries, rep.prevs)
	return pg, nil
}

// MemberQuery says which period a Member read looks at and how many
// neighbours it brings. The zero value reads the member alone on the
// board itself in the current period.
type MemberQuery struct {
	Segment Segment // the segment board read; zero: the board itself
	Period  string  // as PageQuery.Period
	Around  int     // neighbours on each side, 0..MaxAround
}

// Member reads one member's card: its row and up to Around neighbours on
// each side; ranks, total and neighbours are those of the board read. A
// member without a score in that period is ENOTFOUND.
func (s *Store) Member(ctx context.Context, boardID, viewName, member string, q MemberQuery) (*Card, error) {
	seg, period, around := q.Segment, q.Period, q.Around
	if around < 0 || around > MaxAround {
		return nil, Errorf(EINVALID, "around must be from 0 to %d, got %d", MaxAround, around)
	}
	if err := ValidateMember(member); err != nil {
		return nil, err
	}
	b, v, err := s.boardView(boardID, viewName)
	if err != nil {
		return nil, err
	}
	if err := b.ValidateSegment(seg); err != nil {
		return nil, err
	}
	st, rep, err := s.readSeg(ctx, b, v, seg, period, "member", member, itoa(int64(around)))
	if err != nil {
		return nil, err
	}
	pos := rep.rank - 1
	if pos < 0 {
		return nil, Errorf(ENOTFOUND, "member %q has no score in %s %s of board %q", member, v.Name, st.Period.ID, b.ID)
	}
	code, err := parseCode(rep.code)
	if err != nil {
		return nil, err
	}
	c := &Card{Standing: st}
	c.Member = member
	c.Name = rep.name
	c.Score, _ = b.decode(v.Name, code)
	start := max(pos-int64(around), 0)
	c.Around, err = s.entries(b, v, rep.firstRank, int(start), rep.flat)
	if err != nil {
		return nil, err
	}
	c.Rank = c.Around[pos-start].Rank
	c.TopPercent = math.Round(10000*float64(c.Rank)/float64(c.Total)) / 100
	return c, nil
}

// read runs read.lua for one view, resolving the period by Redis's clock
// when it is not given.
func (s *Store) read(ctx context.Context, b *Board, v View, period string, mode ...string) (Standing, readReply, error) {
	return s.readSeg(ctx, b, v, Segment{}, period, mode...)
}

// readSeg is read on a segment board. A window of a segment value never
// written is not built (a read must not create keys for any value a
// client names); it reads as empty.
func (s *Store) readSeg(ctx context.Context, b *Board, v View, seg Segment, period string, mode ...string) (Standing, readReply, error) {
	if b.Sharded() {
		return s.readMerged(ctx, b, v, seg, period, mode...)
	}
	cal := s.cfg.Calendar
	var fixed *Period
	if period != "" {
		p, err := cal.ParsePeriod(v, period)
		if err != nil {
			return Standing{}, readReply{}, err
		}
		fixed = &p
	}
	check := v.Kind == Window
	for attempt := 0; ; attempt++ {
		var cands []Period
		now, err := s.Now(ctx)
		if err != nil {
			return Standing{}, readReply{}, err
		}
		if fixed != nil {
			cands = []Period{*fixed}
		} else {
			cur := cal.PeriodAt(v, now)
			cands = []Period{cur}
			if v.Kind != All {
				cands = append(cands, cal.Prev(v, cur), cal.Next(v, cur))
			}
		}
		// An explicit period is read whatever the time.
		keys, args := s.readRequest(b, v, seg, cands, fixed != nil, check, now, mode...)
		local := s.clock()
		raw, err := s.readsOf(b).run(ctx, readScript, keys, args...).Slice()
		if err != nil {
			return Standing{}, readReply{}, wrapRedis(err)
		}
		rep, err := decodeRead(raw, mode[0])
		if err != nil {
			return Standing{}, rep, err
		}
		s.learnNow(rep.nowMS, local)
		now = time.UnixMilli(rep.nowMS).In(cal.Location())
		if rep.chosen == readUnbuilt {
			// A window nobody built yet: build it if it can still be built
			// (not in the future, not past its retention), then read again.
			p := cands[rep.unbuilt-1]
			tomorrow := cal.Next(v, cal.PeriodAt(v, now))
			seen, err := s.segmentKnown(ctx, b, seg)
			if err != nil {
				return Standing{}, readReply{}, err
			}
			if seen && attempt < 3 && !p.End.After(tomorrow.End) && now.UnixMilli() < s.entry(b, v, p).expireAt {
				if err := s.ensureSegWindow(ctx, b, v, seg, p); err != nil {
					return Standing{}, readReply{}, err
				}
			} else {
				check = false
			}
			continue
		}
		if rep.chosen == readNoClock {
			if attempt < 3 {
				continue
			}
			return Standing{}, readReply{}, Errorf(EINTERNAL, "could not agree on the current period with Redis")
		}
		p := cands[rep.chosen-1]
		return Standing{Board: b, View: v, Period: p, Final: b.Final(p, now), Total: rep.total, Now: now}, rep, nil
	}
}

// entries decodes flat (member, code, name) triples starting at 0-based
// position start, whose first entry has rank firstRank.
func (s *Store) entries(b *Board, v View, firstRank any, start int, flat []any) ([]Entry, error) {
	out := make([]Entry, 0, len(flat)/3)
	rank := asInt(firstRank)
	var prevCode float64
	for k := 0; k+2 < len(flat); k += 3 {
		m, _ := flat[k].(string)
		code, err := parseCode(flat[k+1])
		if err != nil {
			return nil, err
		}
		name, _ := flat[k+2].(string)
		if k > 0 {
			pos := int64(start + k/3)
			if b.Ties == TiesShared && code == prevCode {
				// same score, same rank
			} else {
				rank = pos + 1
			}
		}
		prevCode = code
		score, _ := b.decode(v.Name, code)
		out = append(out, Entry{Rank: rank, Member: m, Name: name, Score: score})
	}
	return out, nil
}

func parseCode(v any) (float64, error) {
	switch x := v.(type) {
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return 0, fmt.Errorf("bad score %q: %w", x, err)
		}
		return f, nil
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	}
	return 0, fmt.Errorf("bad score %v", v)
}

func parseInt(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

// RemoveMember removes a member from every view and retained period of a
// board and amends every recorded result that lists it. It reports whether
// the member was on any period or in any result.
func (s *Store) RemoveMember(ctx context.Context, boardID, member string) (bool, error) {
	b, err := s.board(boardID)
	if err != nil {
		return false, err
	}
	if err := ValidateMember(member); err != nil {
		return false, err
	}
	// The registry is read first so that remove.lua can declare every key
	// it touches; a write that registers a period in between makes the
	// script answer removeChanged, and the removal is tried again (as it
	// is after removeClock, with Redis's clock learned from the answer). On a
	// sharded board both are the member's shard's, and the member's results
	// index, on the board's own tag, is counted first.
	for range 5 {
		entries, err := s.rdb.ZRange(ctx, s.memberKeys(b, member).registry(), 0, -1).Result()
		if err != nil {
			return false, wrapRedis(err)
		}
		listed := ""
		if b.Sharded() {
			n, err := s.rdb.ZCard(ctx, s.keysOf(b).memberResults(member)).Result()
			if err != nil {
				return false, wrapRedis(err)
			}
			listed = itoa(n)
		}
		now, err := s.Now(ctx)
		if err != nil {
			return false, err
		}
		keys, args := s.removeRequest(b, member, entries, listed, now)
		// Not keyed: a second run would answer "not there" for a member
		// this call removed, so a removal of unknown outcome is the caller's
		// to retry.
		local := s.clock()
		val, err := s.runWrite(ctx, removeScript, false, keys, args...)
		if err != nil {
			return false, err
		}
		raw, ok := val.([]any)
		if !ok {
			return false, Errorf(EINTERNAL, "remove.lua answered %T", val)
		}
		rep, err := decodeRemove(raw)
		if err != nil {
			return false, err
		}
		s.learnNow(rep.nowMS, local)
		if rep.removed == removeChanged || rep.removed == removeClock {
			continue
		}
		if rep.removed == 0 && rep.listed == 0 {
			return false, nil
		}
		// Amended now so the next results read shows it (a league member's
		// cohort results are listed apart; on a sharded board a result
		// being recorded from a read of the shards may list the member, and
		// the amendment's count makes it read again), and its overtakes
		// forgotten; a failure here is retried by the relay from the
		// member.removed outbox entry, so the removal itself stands. That
		// entry (webhooks, and the amendment again) is relayed now rather
		// than at the recorder's next pass.
		_, _ = s.amendRemoved(ctx, b, member, rep.nowMS)
		s.KickRelay()
		return true, nil
	}
	return false, Errorf(EUNAVAILABLE, "the board kept changing during the removal; try again")
}
