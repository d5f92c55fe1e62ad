package ranking

import (
	"context"
	"math"
	"slices"
	"time"
)

// A rank card of a sharded board (contract 17) answers what an unsharded
// board's card answers (card.go). What is the member's own (its codes in every
// period the card shows, its segment record, its name) is read on its
// shard; the ranks, totals and neighbours are counted on every shard at
// those codes (slice.lua "card", "before", "nearn"), all in one round trip
// that also reads the member's codes again on its shard: when they moved
// in between, the round starts over, so the headline, the neighbours, the
// history and the views of one card rank the same codes. A period read
// twice (the headline's is also in the history, and in the views when it
// is current) is counted once.
//
// Round trips: on the member's shard its part of every read, its record
// and the windows' markers; on the other shards the counts and
// neighbours (and, with shared ties, the first neighbour's rank). Who
// passed the member comes from the view's overtakes as read this tick
// (Store.recentMoves).

// cardRead is one period of one view and segment board a card reads.
type cardRead struct {
	v      View
	seg    Segment
	p      Period
	r      *shardRead
	window bool     // a window whose built markers are checked
	built  []bool   // per shard, when window
	code   *float64 // the member's code (nil: no score)

	total, rank int64
	kept        *HistoryPoint // a final chart point this store keeps: not read
	cardOp      int
	countOp     int // before (ties first) or, shared, lower codes; near for the headline
	readable    bool
}

// rankCardMerged is RankCard on a sharded board, for q as RankCard made it
// (periods, around, history length; its segment record not yet read).
func (s *Store) rankCardMerged(ctx context.Context, q *cardQuery, moves []Move) (*RankCard, error) {
	b, v, cal := q.b, q.v, s.cfg.Calendar
	own := ShardOf(q.member, b.Shards)
	ownKeys := s.shardKeys(b, own)
	if len(b.Segments) > 0 {
		// A guess checked in the first round trip ("" when none is kept).
		q.checkSegs = true
		if rec, ok := s.cardSegRecord(b, q.member); ok {
			q.segRec, q.segs = rec, parseMemberSegments(rec)
		}
	}
	shared := b.Ties == TiesShared

	for round := 0; round < cardRounds; round++ {
		now, err := s.Now(ctx)
		if err != nil {
			return nil, err
		}
		hp := cal.PeriodAt(v, now)
		if q.fixed != nil {
			hp = *q.fixed
		}
		hist := make([]Period, q.n)
		hist[q.n-1] = hp
		for i := q.n - 2; i >= 0; i-- {
			hist[i] = cal.Prev(v, hist[i+1])
		}
		var reads []*cardRead
		byKey := map[string]*cardRead{}
		at := func(ov View, sg Segment, p Period) *cardRead {
			key := ov.Name + sg.tag() + ":" + p.ID
			if cr := byKey[key]; cr != nil {
				return cr
			}
			cr := &cardRead{v: ov, seg: sg, p: p, r: s.shardRead(b, ov, sg, p), window: ov.Kind == Window && !q.unchecked[key]}
			byKey[key] = cr
			reads = append(reads, cr)
			return cr
		}
		head := at(v, q.seg, hp)
		histR := make([]*cardRead, q.n)
		for i, p := range hist {
			histR[i] = at(v, q.seg, p)
		}
		viewR := make([]*cardRead, len(b.Views))
		viewP := make([]Period, len(b.Views))
		for i, ov := range b.Views {
			viewP[i] = cal.PeriodAt(ov, now)
			viewR[i] = at(ov, q.seg, viewP[i])
		}
		segR := make([]*cardRead, len(q.segs))
		for i, sg := range q.segs {
			segR[i] = at(v, sg, hp)
		}
		// The chart's final points this store keeps are not read; a
		// period also read as a view or the headline always is.
		pts, ok := s.charts.lookup(b, v, q.seg, q.versions, q.member, hist, now.Add(chartMargin).UnixMilli())
		for i, cr := range histR {
			if ok[i] && cr != head && !slices.Contains(viewR, cr) && !slices.Contains(segR, cr) {
				cr.kept = &pts[i]
			}
		}
		var live []*cardRead // the reads sent to Redis
		for _, cr := range reads {
			if cr.kept == nil {
				live = append(live, cr)
			}
		}
		reads = live

		// 1. On the member's shard, its part of every read (its code, the
		// total, the count before it, the headline's neighbours), its
		// record and the shard's version, read together; every shard's
		// window markers.
		ops := head.r.ops()
		recOp := -1
		if q.checkSegs {
			recOp = ops[own].hget(ownKeys.memberSegments(), q.member)
		}
		builtOps := make([][]int, len(reads))
		mineOps := make([]int, len(reads))
		for j, cr := range reads {
			if cr.window {
				builtOps[j] = make([]int, b.Shards)
				for i, o := range ops {
					builtOps[j][i] = o.exists(s.shardKeys(b, i).segBuilt(cr.v, cr.seg, cr.p.ID))
				}
			}
			k := -1
			if cr == head {
				k = q.around
			}
			mineOps[j] = ops[own].mine(cr.r.zkeys[own], q.member, shared, k)
		}
		versionOps := make([]int, b.Shards)
		versionOps[own] = ops[own].get(ownKeys.finalVersion())
		reps, err := s.runSlices(ctx, ops)
		if err != nil {
			return nil, err
		}
		if q.checkSegs {
			if rec := reps[own].str(recOp); rec != q.segRec {
				s.keepCardSegRecord(b, q.member, rec)
				q.segRec, q.segs = rec, parseMemberSegments(rec)
				continue
			}
		}
		var headOwn nearPart
		for j, cr := range reads {
			code, total, before, es, err := reps[own].minePart(mineOps[j])
			if err != nil {
				return nil, err
			}
			cr.code, cr.total, cr.rank = code, total, 0
			if code != nil && cr != head {
				cr.rank = 1 + before
			}
			if cr == head {
				headOwn = nearPart{before: before, es: es}
			}
			cr.readable = true
			if cr.window {
				cr.built = make([]bool, b.Shards)
				anyBuilt := false
				for i := range b.Shards {
					cr.built[i] = reps[i].int(builtOps[j][i]) == 1
					anyBuilt = anyBuilt || cr.built[i]
				}
				// A past window of the chart: absent when no shard built
				// it, as on a board of one shard.
				cr.readable = anyBuilt
			}
		}
		each := make([]string, b.Shards)
		each[own] = reps[own].str(versionOps[own])
		// The headline's, the views' and the segment boards' windows must
		// be built on every shard, or be read as they are when they no
		// longer can be. So must a chart's window built on some shards
		// only: the board built it (a segment value's write marks only
		// its own shard's window built when the value is new there).
		must := append(append([]*cardRead{head}, viewR...), segR...)
		for _, cr := range histR {
			if cr.readable {
				must = append(must, cr)
			}
		}
		again := false
		for _, cr := range must {
			if !cr.window || allTrue(cr.built) {
				continue
			}
			seen, err := s.segmentKnown(ctx, b, cr.seg)
			if err != nil {
				return nil, err
			}
			tomorrow := cal.Next(cr.v, cal.PeriodAt(cr.v, now))
			if seen && round < cardRounds/2 && !cr.p.End.After(tomorrow.End) && now.UnixMilli() < s.entry(b, cr.v, cr.p).expireAt {
				if err := s.ensureSegWindow(ctx, b, cr.v, cr.seg, cr.p); err != nil {
					return nil, err
				}
			} else {
				q.unchecked[cr.v.Name+cr.seg.tag()+":"+cr.p.ID] = true
			}
			again = true
		}
		if again {
			continue
		}
		if head.code == nil {
			return nil, Errorf(ENOTFOUND, "member %q has no score in %s %s of board %q", q.member, v.Name, hp.ID, b.ID)
		}

		// 2. On every other shard, at the codes read: totals, counts
		// before them, the headline's neighbours with their names, the
		// version; and the name of whoever passed the member. The member's
		// shard's part was read with its codes in one call, so the card
		// ranks the same codes everywhere.
		passed := passedIn(moves, hp.ID, q.member)
		ops = head.r.ops()
		others := slices.Delete(slices.Clone(ops), own, own+1)
		for _, cr := range reads {
			if !cr.readable {
				continue
			}
			// The other shards have the same ops, so an op's index is the
			// same on each.
			for i, o := range others {
				cr.cardOp = o.card(cr.r.zkeys[otherShard(i, own)])
				switch me := (shardEntry{member: q.member, code: derefCode(cr.code)}); {
				case cr.code == nil:
				case cr == head:
					cr.countOp = o.nearNamed(cr.r.zkeys[otherShard(i, own)], me, q.around)
				default:
					cr.countOp = o.before(cr.r.zkeys[otherShard(i, own)], shared, []shardEntry{me})
				}
			}
		}
		for i, o := range ops {
			if i != own {
				versionOps[i] = o.get(s.shardKeys(b, i).finalVersion())
			}
		}
		passerOp, passerShard := -1, 0
		if passed != nil {
			passerShard = ShardOf(passed.Member, b.Shards)
			passerOp = ops[passerShard].names([]string{passed.Member})
		}
		if reps, err = s.runSlices(ctx, ops); err != nil {
			return nil, err
		}
		parts := []nearPart{headOwn}
		for _, cr := range reads {
			if !cr.readable {
				continue
			}
			for i := range reps {
				if i == own {
					continue
				}
				cr.total += reps[i].int(cr.cardOp)
				if cr.code != nil && cr != head {
					cr.rank += reps[i].ints(cr.countOp)[0]
				}
				if cr == head {
					before, es, err := reps[i].nearEntries(cr.countOp)
					if err != nil {
						return nil, err
					}
					parts = append(parts, nearPart{before: before, es: es})
				}
			}
		}
		for i := range reps {
			if i != own {
				each[i] = reps[i].str(versionOps[i])
			}
		}
		versions := joinVersions(each)
		if versions != q.versions && slices.ContainsFunc(histR, func(cr *cardRead) bool { return cr.kept != nil }) {
			// A removal moved some shard's version since those points
			// were kept: read them.
			s.charts.setVersion(b, versions)
			q.versions = versions
			continue
		}
		names := map[string]string{}
		if passerOp >= 0 {
			if name := reps[passerShard].strs(passerOp)[0]; name != "" {
				names[passed.Member] = name
			}
		}
		pos, list, start := mergeNearParts(parts, int64(q.around))
		for _, e := range list {
			if name, ok := e.name.(string); ok {
				names[e.member] = name
			}
		}

		// 3. With shared ties, the first neighbour's rank.
		firstRank := start + 1
		if shared && start > 0 {
			ranks, err := head.r.ranks(ctx, list[:1])
			if err != nil {
				return nil, err
			}
			firstRank = ranks[0]
		}
		rc, err := s.mergedCard(q, now, hp, head, list, names, firstRank, start, pos, histR, viewR, viewP, segR, passed)
		if err != nil {
			return nil, err
		}
		var keep []keptPoint
		for i, cr := range histR {
			pt := rc.History.Points[i]
			if cr.kept == nil && cr != head {
				keep = s.appendKept(keep, q, cr.p, now, cr.readable, pt, derefCode(cr.code))
			}
		}
		s.keepChart(ctx, b, v, q.seg, q.member, versions, each, keep)
		return rc, nil
	}
	return nil, Errorf(EINTERNAL, "card: the member's codes or windows of board %q kept changing", b.ID)
}

// mergedCard lays out a merged card's reads as decodeCard reads cardTx.raw's.
func (s *Store) mergedCard(q *cardQuery, now time.Time, hp Period, head *cardRead, list []shardEntry, names map[string]string,
	firstRank, start, pos int64, histR, viewR []*cardRead, viewP []Period, segR []*cardRead, passed *Move) (*RankCard, error) {
	b, v := q.b, q.v
	st := Standing{Board: b, View: v, Period: hp, Final: b.Final(hp, now), Total: head.total, Now: now}
	rc := &RankCard{Card: Card{Standing: st}}
	c := &rc.Card
	c.Member = q.member
	c.Name = names[q.member]
	c.Score, _ = b.decode(v.Name, *head.code)
	var err error
	c.Around, err = s.entries(b, v, firstRank, int(start), flatOf(list, names))
	if err != nil {
		return nil, err
	}
	if pos-start >= int64(len(c.Around)) || c.Around[pos-start].Member != q.member {
		return nil, Errorf(EINTERNAL, "card: the member is not among its neighbours")
	}
	c.Rank = c.Around[pos-start].Rank
	c.TopPercent = math.Round(10000*float64(c.Rank)/float64(c.Total)) / 100
	head.rank = c.Rank

	point := func(cr *cardRead, view string) HistoryPoint {
		if cr.kept != nil {
			return *cr.kept
		}
		pt := HistoryPoint{Period: cr.p}
		if !cr.readable || cr.total == 0 {
			return pt
		}
		pt.Total = cr.total
		if cr.code != nil {
			pt.Rank = cr.rank
			pt.Score, _ = b.decode(view, *cr.code)
			pt.Present = true
		}
		return pt
	}
	rc.History = &History{Board: b, View: v, Member: q.member, Now: now, Points: make([]HistoryPoint, len(histR))}
	for i, cr := range histR {
		rc.History.Points[i] = point(cr, v.Name)
	}
	rc.Views = make([]ViewStanding, len(b.Views))
	for i, ov := range b.Views {
		pt := point(viewR[i], ov.Name)
		rc.Views[i] = ViewStanding{View: ov, Period: viewP[i], Final: b.Final(viewP[i], now), Total: pt.Total,
			Score: pt.Score, Rank: pt.Rank, Present: pt.Present}
	}
	for i, sg := range q.segs {
		if pt := point(segR[i], v.Name); pt.Present {
			rc.Segments = append(rc.Segments, SegmentRank{Segment: sg, Total: pt.Total, Rank: pt.Rank, Score: pt.Score})
		}
	}
	if passed != nil {
		passed.Name = names[passed.Member]
		passed.PassedName = c.Name
		rc.PassedBy = passed
	}
	return rc, nil
}

func allTrue(xs []bool) bool {
	for _, x := range xs {
		if !x {
			return false
		}
	}
	return true
}

func derefCode(c *float64) float64 {
	if c == nil {
		return 0
	}
	return *c
}

// otherShard is the shard index of the i-th shard other than own.
func otherShard(i, own int) int {
	if i >= own {
		return i + 1
	}
	return i
}

// nearPart is one shard's part of a member's neighbours: how many of its
// entries rank before the member's position, and the up to around
// entries before that position and around+1 from it.
type nearPart struct {
	before int64
	es     []shardEntry
}

// mergeNearParts merges the shards' parts into the member's neighbours:
// pos, the entries before the member on the merged period; list, up to
// around entries before it, the member, and up to around after; first,
// the position of list[0].
func mergeNearParts(parts []nearPart, around int64) (pos int64, list []shardEntry, first int64) {
	var above, below [][]shardEntry
	for _, p := range parts {
		pos += p.before
		nb := min(p.before, around) // entries before the position this shard gave
		above = append(above, p.es[:nb])
		below = append(below, p.es[nb:])
	}
	up := merge(above)
	up = up[max(0, int64(len(up))-around):]
	down := merge(below)
	down = down[:min(int64(len(down)), around+1)]
	return pos, append(up, down...), pos - int64(len(up))
}
