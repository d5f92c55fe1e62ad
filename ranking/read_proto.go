package ranking

import (
	_ "embed"
	"fmt"
	"math"
	"time"
)

// The read.lua protocol: KEYS and ARGV of a page or member read, and the
// reply. Nothing else knows read.lua's argument layout or reply indexes.

//go:embed scripts/read.lua
var readLua string

var readScript = newScript(readLua)

// readRequest builds KEYS and ARGV for read.lua over the candidate periods
// of view v. fixed: the one candidate is an explicit period, read whatever
// the time. check: a window must be built (else the reply is "unbuilt").
// mode is "page", offset, limit or "member", member, around.
// seg picks a segment board's keys (the board's for the zero Segment).
func (s *Store) readRequest(b *Board, v View, seg Segment, cands []Period, fixed, check bool, now time.Time, mode ...string) (keys []string, args []any) {
	window := v.Kind == Window
	keys = make([]string, 1, 1+4*len(cands))
	k := s.keysOf(b)
	keys[0] = k.names()
	args = make([]any, 0, 8+len(cands)*3+len(mode))
	args = append(args, v.Name, string(b.Ties), boolArg(window), boolArg(check && window), itoa(int64(len(cands))))
	for _, p := range cands {
		start, end := int64(0), int64(math.MaxInt64/2)
		if !fixed && !p.IsAll() {
			start, end = p.Start.UnixMilli(), p.End.UnixMilli()
		}
		args = append(args, p.ID, itoa(start), itoa(end))
		keys = append(keys, k.segPeriod(v, seg, p.ID))
		if window {
			keys = append(keys, k.segBuilt(v, seg, p.ID))
		}
	}
	if m := mode[0]; m == "page" || m == "members" {
		keys, args = s.prevRequest(b, v, seg, cands, now, keys, args)
	} else {
		args = append(args, "") // rows (exports) and member reads answer no previous ranks
	}
	for _, m := range mode {
		args = append(args, m)
	}
	return keys, args
}

// SnapshotTop is how many of the best ranks of an all view apply.lua
// keeps at the day's first write, for the rank change against the last
// local midnight.
const SnapshotTop = 1000

// prevRequest appends read.lua's previous-rank block: the previous period
// of each candidate (a calendar view's, or the window that ended the day
// before, with its expiry: read.lua gives none once it has expired), or
// for all the day snapshots around now (segment boards' all views give
// none).
func (s *Store) prevRequest(b *Board, v View, seg Segment, cands []Period, now time.Time, keys []string, args []any) ([]string, []any) {
	cal := s.cfg.Calendar
	k := s.keysOf(b)
	switch {
	case v.Kind == All:
		if !seg.IsZero() {
			return keys, append(args, "")
		}
		days := snapshotDays(cal, now)
		args = append(args, "s", itoa(SnapshotTop), itoa(int64(len(days))))
		for _, d := range days {
			args = append(args, itoa(d.Start.UnixMilli()), itoa(d.End.UnixMilli()))
			keys = append(keys, k.snapshot(v.Name, d.ID))
		}
		return keys, args
	}
	kind := "z"
	if v.Kind == Window {
		kind = "w"
	}
	args = append(args, kind)
	for _, p := range cands {
		args = append(args, itoa(s.entry(b, v, cal.Prev(v, p)).expireAt))
	}
	for _, p := range cands {
		prev := cal.Prev(v, p)
		keys = append(keys, k.segPeriod(v, seg, prev.ID))
		if kind == "w" {
			keys = append(keys, k.segBuilt(v, seg, prev.ID))
		}
	}
	return keys, args
}

// snapshotDays are the local days around now: the scripts pick the one
// holding Redis's now.
func snapshotDays(cal *Calendar, now time.Time) []Period {
	day := View{Name: "~snap", Kind: Day}
	cur := cal.PeriodAt(day, now)
	return []Period{cal.Prev(day, cur), cur, cal.Next(day, cur)}
}

// snapshotDaysArgs appends the all view's day snapshots around now, as
// apply.lua and remove.lua take them (keep_snapshot in lib.lua keeps the
// one of the day holding Redis's now): to args the shape ("h", or "z" on
// a shard of a sharded board), the number of days and per day its start
// and end in ms; to keys per day the snapshot hash, or the shard's codes
// and count.
func (s *Store) snapshotDaysArgs(b *Board, k boardKeys, allView string, now time.Time, keys []string, args []any) ([]string, []any) {
	days := snapshotDays(s.cfg.Calendar, now)
	shape := "h"
	if b.Sharded() {
		shape = "z"
	}
	args = append(args, shape, itoa(int64(len(days))))
	for _, d := range days {
		args = append(args, itoa(d.Start.UnixMilli()), itoa(d.End.UnixMilli()))
		if b.Sharded() {
			keys = append(keys, k.snapshotCodes(allView, d.ID), k.snapshotCount(allView, d.ID))
		} else {
			keys = append(keys, k.snapshot(allView, d.ID))
		}
	}
	return keys, args
}

// read.lua's choice of candidate, besides a 1-based index.
const (
	readNoClock = 0  // Redis's now is in no candidate
	readUnbuilt = -2 // the chosen window is not built
)

// readReply is read.lua's reply, decoded.
type readReply struct {
	nowMS     int64
	chosen    int64 // 1-based candidate; readNoClock; readUnbuilt
	unbuilt   int64 // readUnbuilt: the 1-based candidate not built
	total     int64
	rank      int64 // member: 0 = absent
	code      any   // member: its code
	name      string
	firstRank any   // rank of the first entry
	flat      []any // (member, code, name) triples; members: (rank, member, code, name)
	prevs     []any // page, members: each entry's previous rank (see read.lua)
}

// decodeRead decodes read.lua's reply in the given mode.
func decodeRead(raw []any, mode string) (readReply, error) {
	bad := fmt.Errorf("read: malformed reply %v", raw)
	if len(raw) < 2 {
		return readReply{}, bad
	}
	r := readReply{nowMS: asInt(raw[0]), chosen: asInt(raw[1])}
	switch {
	case r.chosen == readUnbuilt:
		if len(raw) < 3 {
			return r, bad
		}
		r.unbuilt = asInt(raw[2])
	case r.chosen == readNoClock:
	case mode == "page" || mode == "rows":
		if len(raw) < 5 {
			return r, bad
		}
		r.total, r.firstRank, r.flat = asInt(raw[2]), raw[3], raw[5:]
		r.prevs, _ = raw[4].([]any)
	case mode == "members":
		if len(raw) < 4 || (len(raw)-4)%4 != 0 {
			return r, bad
		}
		r.total, r.flat = asInt(raw[2]), raw[4:]
		r.prevs, _ = raw[3].([]any)
	default:
		if len(raw) < 7 {
			return r, bad
		}
		r.total, r.rank, r.code, r.firstRank, r.flat = asInt(raw[2]), asInt(raw[3]), raw[4], raw[6], raw[7:]
		r.name, _ = raw[5].(string)
	}
	return r, nil
}
