package ranking

import (
	_ "embed"
	"fmt"
	"slices"
	"time"
)

// The apply.lua protocol: KEYS and ARGV of a batch of events, and the
// reply. Nothing else knows apply.lua's argument layout or reply indexes.

//go:embed scripts/apply.lua
var applyLua string

var applyScript = newScript(applyLua)

// applyRequest builds KEYS and ARGV for apply.lua: the board, a period
// table with the candidate current periods of each view around now
// (previous, current, next) plus the periods of every explicit event time,
// then the events; KEYS declares every key of those rows and events, in
// the order the script reads them. On a league board, rounds lists the
// rounds apply.lua asked for (applyRounds) besides those around now;
// originals, the periods its duplicates answered first (applyOriginals)
// that are not among the rows.
func (s *Store) applyRequest(b *Board, shard int, events []Event, idx []int, now time.Time, opts ApplyOptions, rounds []string, originals []viewPeriod) (keys []string, args []any) {
	exact := false
	if b.Update == Latest {
		for _, v := range b.Views {
			if b.Ties == TiesShared || b.codecs[v.Name].unit.ms > 1 {
				exact = true
			}
		}
		if b.League != nil && (b.Ties == TiesShared || b.codecs[leagueViewName].unit.ms > 1) {
			exact = true
		}
	}
	views := b.Views
	if b.hasWindows() {
		views = append(views[:len(views):len(views)], dayTotals)
	}
	keys = make([]string, 5, 5+len(views)*8+len(idx))
	k := s.shardKeys(b, shard)
	keys[0], keys[1], keys[2], keys[3], keys[4] = k.names(), k.registry(), k.nameIndex(), k.indexBounds(), k.indexBlocks()
	args = make([]any, 0, 16+len(views)*24+len(idx)*5)
	args = append(args, string(b.Update), string(b.Ties), string(b.Order), itoa(b.Min), itoa(b.Max),
		itoa(b.Lateness.Milliseconds()), itoa(DedupeWindow.Milliseconds()), s.Channel(), b.ID, boolArg(exact), itoa(int64(b.Decimals)), boolArg(!opts.NoRanks), itoa(int64(len(views))))
	rows := make([][]periodEntry, len(views))
	for vi, v := range views {
		cd := b.codecs[v.Name]
		switch {
		case v.Kind == Window:
			rows[vi] = s.windowRows(b, v, events, idx, now)
		case v == dayTotals:
			rows[vi] = s.dayRows(b, events, idx, now)
		default:
			rows[vi] = s.periodRows(b, v, events, idx, now)
		}
		kind := "p"
		switch {
		case v == dayTotals:
			kind = "h"
		case v.Kind == Window:
			kind = "w"
		}
		args = append(args, v.Name, itoa(max(cd.unit.ms, 1)), itoa(cd.span), kind, itoa(int64(v.Days)), itoa(cd.lo), itoa(cd.hi), itoa(int64(len(rows[vi]))))
		for _, r := range rows[vi] {
			args = append(args, r.period.ID, itoa(r.startMS), itoa(r.endMS), itoa(r.base), itoa(r.expireAt), itoa(r.lastDay))
			keys = append(keys, k.period(v.Name, r.period.ID))
			if exact {
				keys = append(keys, k.exactTimes(v.Name, r.period.ID))
			}
			if kind == "w" {
				keys = append(keys, k.built(v.Name, r.period.ID))
			}
		}
	}
	if b.League != nil {
		keys, args = s.leagueRows(b, k, now, rounds, exact, keys, args)
	} else {
		args = append(args, "0")
	}
	keys, args = originalRows(k, views, rows, originals, keys, args)
	// Segment boards the events name, in order of first use: each has the
	// board's period table, so only its keys are listed (z per row, r per
	// window row; exact times share the board's x hash, see apply.lua).
	segIndex := map[Segment]int{}
	var segs []Segment
	evSegs := make([][]Segment, len(idx))
	for j, i := range idx {
		evSegs[j] = b.eventSegments(events[i].Segments)
		for _, sg := range evSegs[j] {
			if _, ok := segIndex[sg]; !ok {
				segs = append(segs, sg)
				segIndex[sg] = len(segs)
			}
		}
	}
	args = append(args, itoa(int64(len(segs))))
	for _, sg := range segs {
		args = append(args, sg.tag(), sg.Name, sg.Value)
		for vi, v := range views {
			for _, r := range rows[vi] {
				keys = append(keys, k.segPeriod(v, sg, r.period.ID))
				if v.Kind == Window {
					keys = append(keys, k.segBuilt(v, sg, r.period.ID))
				}
			}
		}
	}
	// The member record and the values index of each segment name, on
	// every board with segments: an event without segments changes the
	// record too (the member is no longer pure in any name: see Mirrors in
	// apply.lua).
	if len(b.Segments) > 0 {
		args = append(args, itoa(int64(len(b.Segments))), itoa(MaxSegmentValues))
		keys = append(keys, k.memberSegments())
		for _, name := range b.Segments {
			args = append(args, name)
			keys = append(keys, k.segValues(name))
		}
	} else {
		args = append(args, "0", itoa(MaxSegmentValues))
	}
	args = append(args, itoa(int64(len(idx))))
	for j, i := range idx {
		ev := events[i]
		at := ""
		if !ev.At.IsZero() {
			at = itoa(ev.At.UnixMilli())
		}
		memberKey := foldSearch(ev.Member)
		// An event at Redis's now without name or id whose id folds to
		// itself is plain: three arguments instead of eight, or with
		// segment values "s" and their count instead of the seven.
		short := at == "" && ev.Name == "" && ev.ID == "" && memberKey == ev.Member
		if short && len(evSegs[j]) == 0 {
			args = append(args, ev.Member, itoa(ev.Value), "")
		} else {
			if short {
				args = append(args, ev.Member, itoa(ev.Value), "s")
			} else {
				nameKey := ""
				if ev.Name != "" {
					nameKey = foldSearch(ev.Name)
				}
				args = append(args, ev.Member, itoa(ev.Value), "1", at, ev.Name, nameKey, memberKey, ev.ID)
			}
			args = append(args, itoa(int64(len(evSegs[j]))))
			for _, sg := range evSegs[j] {
				args = append(args, itoa(int64(segIndex[sg])))
			}
		}
		if b.League != nil {
			keys = append(keys, k.leagueMember(ev.Member))
		}
		if ev.ID != "" {
			keys = append(keys, k.idempotency(ev.ID))
		}
	}
	// Movement: the overtakes list of each view, and the all view's day
	// snapshots around now (apply.lua picks the day holding Redis's now).
	// A shard sees its own members only: a sharded board finds overtakes
	// and previous ranks from merged reads instead (shard_read.go).
	if b.Sharded() {
		args = append(args, "0")
	} else {
		args = append(args, itoa(MovesTop))
	}
	allIdx := 0
	for vi, v := range views {
		if v == dayTotals {
			continue
		}
		if !b.Sharded() {
			keys = append(keys, k.moves(v.Name))
		}
		if v.Kind == All {
			allIdx = vi + 1
		}
	}
	if allIdx == 0 {
		return keys, append(args, "0")
	}
	args = append(args, itoa(SnapshotTop), itoa(int64(allIdx)))
	return s.snapshotDaysArgs(b, k, views[allIdx-1].Name, now, keys, args)
}

// MovesTop bounds overtakes: only moves within the best MovesTop ranks of
// a view's current period are kept, and each view keeps its newest
// MovesTop.
const MovesTop = 100

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// apply.lua's reply status; any other (-1: Redis's now is in no listed
// period) is answered by trying again.
const (
	applyDone    = 1
	applyUnbuilt = -2 // today's window is not built
	applyRounds  = -3 // a member's last round is not listed
	applyCohorts = -4 // a member's last cohort is not decided
	// applyOriginals: a duplicate's original periods are not listed.
	applyOriginals = -5
)

// viewPeriod names a period of a view: one a duplicate's original event
// answered.
type viewPeriod struct{ view, period string }

// originalRows appends apply.lua's original rows: each period of
// originals not already among its view's rows, with its sorted set. The
// key is named from the remembered id without parsing it: a period past
// its retention has no key left and reads as absent.
func originalRows(k boardKeys, views []View, rows [][]periodEntry, originals []viewPeriod, keys []string, args []any) ([]string, []any) {
	n := len(args)
	args = append(args, "0")
	count := 0
	for _, o := range originals {
		vi := slices.IndexFunc(views, func(v View) bool { return v.Name == o.view })
		if vi < 0 || slices.ContainsFunc(rows[vi], func(r periodEntry) bool { return r.period.ID == o.period }) {
			continue
		}
		args = append(args, o.view, o.period)
		keys = append(keys, k.period(o.view, o.period))
		count++
	}
	args[n] = itoa(int64(count))
	return keys, args
}

// applyReply is apply.lua's reply, decoded.
type applyReply struct {
	status  int64
	nowMS   int64
	unbuilt []unbuiltWindow // applyUnbuilt: the windows to build
	rounds  []string        // applyRounds: the rounds to list
	cohorts []leagueCohort  // applyCohorts: the cohorts to decide
	origs   []viewPeriod    // applyOriginals: the periods to list
	results []WriteResult   // applyDone: one per event sent
}

// unbuiltWindow names today's window of a board or segment board that
// apply.lua needs built.
type unbuiltWindow struct {
	view, window string
	seg          Segment
}

// decodeApply decodes apply.lua's reply for events[idx...]; ranked says
// whether the script answered ranks.
func decodeApply(b *Board, events []Event, idx []int, raw []any, ranked bool) (applyReply, error) {
	if len(raw) < 2 {
		return applyReply{}, fmt.Errorf("apply: malformed reply %v", raw)
	}
	rep := applyReply{status: asInt(raw[0]), nowMS: asInt(raw[1])}
	switch rep.status {
	case applyUnbuilt:
		if len(raw) < 6 || (len(raw)-2)%4 != 0 {
			return rep, fmt.Errorf("apply: malformed reply %v", raw)
		}
		for k := 2; k+3 < len(raw); k += 4 {
			var u unbuiltWindow
			u.view, _ = raw[k].(string)
			u.window, _ = raw[k+1].(string)
			u.seg.Name, _ = raw[k+2].(string)
			u.seg.Value, _ = raw[k+3].(string)
			rep.unbuilt = append(rep.unbuilt, u)
		}
	case applyRounds:
		for _, r := range raw[2:] {
			id, _ := r.(string)
			rep.rounds = append(rep.rounds, id)
		}
	case applyCohorts:
		if len(raw) < 5 || (len(raw)-2)%3 != 0 {
			return rep, fmt.Errorf("apply: malformed reply %v", raw)
		}
		for k := 2; k+2 < len(raw); k += 3 {
			round, _ := raw[k].(string)
			rep.cohorts = append(rep.cohorts, leagueCohort{round: round, level: asInt(raw[k+1]), cohort: asInt(raw[k+2])})
		}
	case applyOriginals:
		if len(raw) < 4 || len(raw)%2 != 0 {
			return rep, fmt.Errorf("apply: malformed reply %v", raw)
		}
		for k := 2; k+1 < len(raw); k += 2 {
			var o viewPeriod
			o.view, _ = raw[k].(string)
			o.period, _ = raw[k+1].(string)
			rep.origs = append(rep.origs, o)
		}
	case applyDone:
		if len(raw) != 4 {
			return rep, fmt.Errorf("apply: malformed reply %v", raw)
		}
		periods, _ := raw[2].([]any)
		flat, _ := raw[3].([]any)
		rep.results = make([]WriteResult, len(idx))
		p := 0
		var last []any // the header of the last applied event's result in full
		for j, i := range idx {
			// Each result: its length, then its entries; a negative length
			// is an applied event with last's event time and periods.
			if p >= len(flat) {
				return rep, fmt.Errorf("apply: %d results for %d events", j, len(idx))
			}
			n := int(asInt(flat[p]))
			short := n < 0
			if short {
				n = -n
			}
			if p+1+n > len(flat) || (short && last == nil) {
				return rep, fmt.Errorf("apply: malformed results %v", flat)
			}
			row := flat[p+1 : p+1+n]
			if short {
				row = append(slices.Clip(last), row...)
			} else if len(row) >= 4 && asInt(row[0]) == 1 && asInt(row[1]) == 0 {
				last = row[:4]
			}
			rep.results[j] = decodeResult(b, events[i].Member, periods, row, ranked)
			p += 1 + n
		}
		if p != len(flat) {
			return rep, fmt.Errorf("apply: results for more than %d events", len(idx))
		}
	}
	return rep, nil
}

// decodeResult decodes one event's result; its period ids are in periods,
// the list the batch's results share, from the index it gives.
func decodeResult(b *Board, member string, periods []any, raw any, ranked bool) WriteResult {
	r := WriteResult{Member: member}
	row, ok := raw.([]any)
	if !ok || len(row) < 2 {
		r.Err = fmt.Errorf("apply: malformed result %v", raw)
		return r
	}
	if asInt(row[0]) == 0 {
		code, _ := row[1].(string)
		msg := ""
		if len(row) > 2 {
			msg, _ = row[2].(string)
		}
		r.Err = &Error{Code: code, Message: msg}
		if len(row) > 3 {
			r.At = time.UnixMilli(asInt(row[3]))
		}
		return r
	}
	r.Duplicate = asInt(row[1]) == 1
	if ms := asInt(row[2]); ms != 0 {
		r.At = time.UnixMilli(ms)
	}
	stride := 1 // score
	if ranked {
		stride = 2 // score, rank
	}
	at := int(asInt(row[3])) - 1 // 1-based in Lua
	if len(row) < 4+len(b.Views)*stride || at < 0 || at+len(b.Views) > len(periods) {
		r.Err = fmt.Errorf("apply: short result %v", raw)
		return r
	}
	r.Views = make([]ViewScore, len(b.Views))
	for vi, v := range b.Views {
		k := 4 + vi*stride
		pid, _ := periods[at+vi].(string)
		r.Views[vi] = ViewScore{View: v.Name, Period: pid, Score: asInt(row[k])}
		if ranked {
			r.Views[vi].Rank = asInt(row[k+1])
		}
	}
	return r
}

// leagueRows appends apply.lua's league section: the rounds' codec and
// rules, and a row per round (the one before, holding and after now by
// the estimate of Redis's clock, and each of extra) with its keys.
func (s *Store) leagueRows(b *Board, k boardKeys, now time.Time, extra []string, exact bool, keys []string, args []any) ([]string, []any) {
	l, cal := b.League, s.cfg.Calendar
	lv := l.leagueView()
	cur := cal.PeriodAt(lv, now)
	rounds := []Period{cal.Prev(lv, cur), cur, cal.Next(lv, cur)}
	for _, id := range extra {
		if p, err := cal.ParsePeriod(lv, id); err == nil && !slices.ContainsFunc(rounds, func(q Period) bool { return q.ID == p.ID }) {
			rounds = append(rounds, p)
		}
	}
	cd := b.codecs[lv.Name]
	args = append(args, itoa(int64(len(rounds))), itoa(max(cd.unit.ms, 1)), itoa(cd.span), itoa(cd.lo), itoa(cd.hi),
		itoa(int64(l.CohortSize)), itoa(int64(l.Promote)), itoa(int64(l.Demote)), itoa(int64(len(l.Tiers))))
	for _, p := range rounds {
		r := s.entry(b, lv, p)
		args = append(args, p.ID, itoa(r.startMS), itoa(r.endMS), itoa(r.base), itoa(r.expireAt))
		keys = append(keys, k.period(lv.Name, p.ID))
		if exact {
			keys = append(keys, k.exactTimes(lv.Name, p.ID))
		}
		keys = append(keys, k.leaguePlaces(p.ID), k.leagueRound(p.ID))
	}
	return append(keys, k.leagueRounds()), args
}
