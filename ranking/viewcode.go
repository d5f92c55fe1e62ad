package ranking

import (
	"fmt"
	"time"
)

// ViewCode is how one period of a view keeps its scores in Redis, for
// tools that read or write the period's sorted set directly (the
// benchmark's floors write a board's own keys with it). The code of a
// member whose scaled score v was reached at instant t is
//
//	(Hi − v) × Span + Tie(t)   on a desc board
//	(v − Lo) × Span + Tie(t)   on an asc board
//
// (see codec). With ties: shared, Span is 1 and Tie is 0.
type ViewCode struct {
	Key    string // the period's sorted set
	Desc   bool
	Span   int64 // tie units per score step
	Lo, Hi int64 // the scores the codes hold, scaled
	unitMS int64 // 0: ties shared
	base   int64 // the tie unit at which the period's time part counts 0
}

// Tie is the time part of a code for a score reached at t: tie units
// since the period's start.
func (c ViewCode) Tie(t time.Time) int64 {
	if c.unitMS == 0 {
		return 0
	}
	return floorDiv(t.UnixMilli(), c.unitMS) - c.base
}

// Code is the code of scaled score v reached at t.
func (c ViewCode) Code(v int64, t time.Time) int64 {
	if c.Desc {
		return (c.Hi-v)*c.Span + c.Tie(t)
	}
	return (v-c.Lo)*c.Span + c.Tie(t)
}

// ViewCode returns the layout of boardID's view in the period holding at.
// A sharded board keeps each period in one key per shard: it has none.
func (s *Store) ViewCode(boardID, view string, at time.Time) (ViewCode, error) {
	b, v, err := s.boardView(boardID, view)
	if err != nil {
		return ViewCode{}, err
	}
	if b.Sharded() {
		return ViewCode{}, fmt.Errorf("board %q is sharded: a period has one key per shard", boardID)
	}
	p := s.cfg.Calendar.PeriodAt(v, at)
	cd, e := b.codecs[v.Name], s.entry(b, v, p)
	return ViewCode{Key: s.keysOf(b).period(v.Name, p.ID), Desc: b.Order == Desc, Span: cd.span,
		Lo: cd.lo, Hi: cd.hi, unitMS: cd.unit.ms, base: e.base}, nil
}
