package ranking

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"
)

// Merged reads of a sharded board (contract 17): every read answers what
// the same board with one shard would, built from the shards' sorted sets
// by slice.lua calls, one per shard per round trip, sent at once.
//
//   - total: the sum of the shards' ZCARDs.
//   - a page at offset o: each shard's part of the first o entries (the
//     cut) is narrowed by counting, not by reading what lies above it
//     (shardRead.cutAt), then each shard is read from where its cut may
//     start, through the page, and the parts are merged. A page near the top
//     (o+limit <= shardLimits.shallow) reads each shard's first o+limit
//     entries at once.
//   - a member's rank: 1 + the entries of every shard that rank before its
//     (code, member id); with ties: shared, 1 + those with a lower code.
//     Its neighbours are the merge of each shard's entries around that
//     position (slice.lua "nearn").
//   - names come from each entry's own shard, for the entries answered.
//
// A merged read is not one snapshot: shards are read one after another
// within the read (a result of a final period is exact all the same).

// shardLimits are a store's thresholds of merged reads.
type shardLimits struct {
	// shallow is the deepest page end read by merging each shard's top.
	shallow int64
	// window is the most entries (all shards together) between the
	// bounds of a cut that a page reads with its rows rather than count
	// further.
	window int64
}

var defaultShardLimits = shardLimits{shallow: 1000, window: 256}

// shardRead is one merged read: a view's period on every shard.
type shardRead struct {
	s      *Store
	b      *Board
	zkeys  []string // the period's sorted set on each shard
	shared bool
}

func (s *Store) shardRead(b *Board, v View, seg Segment, p Period) *shardRead {
	r := &shardRead{s: s, b: b, zkeys: make([]string, b.Shards), shared: b.Ties == TiesShared}
	for i := range r.zkeys {
		r.zkeys[i] = s.shardKeys(b, i).segPeriod(v, seg, p.ID)
	}
	return r
}

// ops returns a fresh, empty op list per shard.
func (r *shardRead) ops() []*sliceOps {
	ops := make([]*sliceOps, r.b.Shards)
	for i := range ops {
		ops[i] = newSliceOps(r.s.shardKeys(r.b, i))
	}
	return ops
}

// merge merges the shards' sorted parts.
func merge(parts [][]shardEntry) []shardEntry {
	var out []shardEntry
	for _, p := range parts {
		out = append(out, p...)
	}
	slices.SortFunc(out, func(a, b shardEntry) int {
		if entryLess(a, b) {
			return -1
		}
		if entryLess(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// cards reads every shard's entry count.
func (r *shardRead) cards(ctx context.Context) ([]int64, error) {
	ops := r.ops()
	for i, o := range ops {
		o.card(r.zkeys[i])
	}
	reps, err := r.s.runSlices(ctx, ops)
	if err != nil {
		return nil, err
	}
	cards := make([]int64, len(ops))
	for i := range reps {
		cards[i] = reps[i].int(0)
	}
	return cards, nil
}

// cutPivot is a place in the merged order counted on the shards to place
// a cut: an entry of a shard at a known index, or (shard -1) a code,
// placed before every entry with that code, which no read has to find and
// costs each shard one ZCOUNT.
type cutPivot struct {
	shard int
	index int64
	e     shardEntry
}

// codePivots is how many codes a counting round places, and codeGap how
// many entries (all shards together) the estimate puts between two
// neighbours: the first round's codes then cover an estimate about a
// hundred entries off either way, and leave a few tens to read.
const (
	codePivots = 12
	codeGap    = 16
)

// cutBound is one side of what counting has found of a cut: per shard,
// the entries before a pivot (at), and that pivot (set: one was counted).
type cutBound struct {
	at  []int64
	key shardEntry
	set bool
}

func sumOf(xs []int64) (t int64) {
	for _, x := range xs {
		t += x
	}
	return t
}

// cutAt narrows, per shard, how many of its entries are among the first
// offset of the merged order (0 <= offset <= the total) to [lo[i], hi[i]],
// the widths of all shards together at most shardLimits.window (lo equal
// to hi when exact), by counting pivots on every shard, one round trip a
// round. first are entries already read (at guessed places): the first
// round counts them and codes placed where they say the cut falls. Later
// rounds count codes spread between the bounds found, or, when the bounds'
// codes leave no room (ties) or spreading them narrowed the bounds less
// than half (clustered codes), entries read where the cut should be if
// members are spread evenly (which a hash makes likely).
func (r *shardRead) cutAt(ctx context.Context, cards []int64, offset int64, first []cutPivot) (lo, hi []int64, err error) {
	n := len(cards)
	low, high := cutBound{at: make([]int64, n)}, cutBound{at: slices.Clone(cards)}
	var pivots []cutPivot
	codes := true // whether spreading codes still narrows the bounds
	if len(first) > 0 {
		pivots = append(slices.Clone(first), estimatePivots(first, offset)...)
	}
	for range 64 {
		need, width := offset-sumOf(low.at), sumOf(high.at)-sumOf(low.at)
		switch {
		case need == 0:
			return low.at, low.at, nil
		case need == width:
			return high.at, high.at, nil
		case pivots == nil && width <= r.s.shardLimits.window:
			return low.at, high.at, nil
		}
		spread := false
		if pivots == nil && codes {
			pivots = spreadPivots(low, high)
			spread = pivots != nil
		}
		if pivots == nil {
			// Entries where the cut would fall on each shard, and a step
			// each side of it, so that one round usually brackets it.
			frac := float64(need) / float64(width)
			step := int64(math.Sqrt(float64(width)/float64(n))) + 1
			idx := make([][]int64, n)
			for i := range n {
				if high.at[i] <= low.at[i] {
					continue
				}
				p := low.at[i] + int64(frac*float64(high.at[i]-low.at[i]))
				for _, x := range []int64{p - step, p, p + step} {
					if x = min(max(x, low.at[i]), high.at[i]-1); len(idx[i]) == 0 || idx[i][len(idx[i])-1] != x {
						idx[i] = append(idx[i], x)
					}
				}
			}
			if pivots, err = r.fetchPivots(ctx, idx); err != nil {
				return nil, nil, err
			}
		}
		at, err := r.countPivots(ctx, pivots)
		if err != nil {
			return nil, nil, err
		}
		for q, pv := range pivots {
			switch rank := sumOf(at[q]); {
			case rank == offset:
				return at[q], at[q], nil
			case rank < offset && rank >= sumOf(low.at):
				low = cutBound{at: at[q], key: pv.e, set: true}
			case rank > offset && rank <= sumOf(high.at):
				high = cutBound{at: at[q], key: pv.e, set: true}
			}
		}
		// Codes clustered near one bound narrow it little: entries then.
		if spread && 2*(sumOf(high.at)-sumOf(low.at)) > width {
			codes = false
		}
		pivots = nil
	}
	return nil, nil, Errorf(EINTERNAL, "could not find offset %d on the shards of board %q", offset, r.b.ID)
}

// countPivots counts, on every shard, its entries before each pivot:
// at[pivot][shard]. An entry's count on its own shard is its index; a
// code is counted on every shard.
func (r *shardRead) countPivots(ctx context.Context, pivots []cutPivot) ([][]int64, error) {
	n := r.b.Shards
	ops := r.ops()
	entryOp, codeOp := make([]int, n), make([]int, n)
	entryQ, codeQ := make([][]int, n), make([][]int, n) // per shard: the pivots each op counts
	for i, o := range ops {
		var es, cs []shardEntry
		for q, pv := range pivots {
			switch pv.shard {
			case -1:
				codeQ[i] = append(codeQ[i], q)
				cs = append(cs, pv.e)
			case i:
			default:
				entryQ[i] = append(entryQ[i], q)
				es = append(es, pv.e)
			}
		}
		entryOp[i], codeOp[i] = -1, -1
		if len(es) > 0 {
			entryOp[i] = o.before(r.zkeys[i], false, es)
		}
		if len(cs) > 0 {
			// Those with a lower code: the entries before (code, "").
			codeOp[i] = o.before(r.zkeys[i], true, cs)
		}
	}
	reps, err := r.s.runSlices(ctx, ops)
	if err != nil {
		return nil, err
	}
	at := make([][]int64, len(pivots))
	for q, pv := range pivots {
		at[q] = make([]int64, n)
		if pv.shard >= 0 {
			at[q][pv.shard] = pv.index
		}
	}
	for i := range ops {
		if entryOp[i] >= 0 {
			for j, c := range reps[i].ints(entryOp[i]) {
				at[entryQ[i][j]][i] = c
			}
		}
		if codeOp[i] >= 0 {
			for j, c := range reps[i].ints(codeOp[i]) {
				at[codeQ[i][j]][i] = c
			}
		}
	}
	return at, nil
}

// estimatePivots places codes around where the entries read (each at its
// index on its shard) say the offset falls: each shard's index of a code
// is interpolated between its entries (and beyond, at their slope), the
// shards' indexes summed, and the code whose sum is offset found by
// bisection. None when the entries tell no slope (one code, or one entry
// a shard).
func estimatePivots(read []cutPivot, offset int64) []cutPivot {
	type point struct{ x, c float64 }
	type shardPoints struct {
		ps    []point // by index
		slope float64 // indexes per code
	}
	var per []*shardPoints // in the order of the shards' first entries, so that sums repeat
	of := map[int]*shardPoints{}
	cmin, cmax := math.Inf(1), math.Inf(-1)
	for _, pv := range read {
		sp := of[pv.shard]
		if sp == nil {
			sp = &shardPoints{}
			of[pv.shard] = sp
			per = append(per, sp)
		}
		sp.ps = append(sp.ps, point{float64(pv.index), pv.e.code})
		cmin, cmax = min(cmin, pv.e.code), max(cmax, pv.e.code)
	}
	var slope float64 // merged entries per code
	for _, sp := range per {
		slices.SortFunc(sp.ps, func(a, b point) int { return cmp.Compare(a.x, b.x) })
		if f, l := sp.ps[0], sp.ps[len(sp.ps)-1]; l.c > f.c {
			sp.slope = (l.x - f.x) / (l.c - f.c)
			slope += sp.slope
		}
	}
	if !(slope > 0) || !(cmax > cmin) {
		return nil
	}
	at := func(c float64) (t float64) {
		for _, sp := range per {
			ps := sp.ps
			f, l := ps[0], ps[len(ps)-1]
			switch {
			case c <= f.c:
				t += max(0, f.x-(f.c-c)*sp.slope)
			case c >= l.c:
				t += l.x + (c-l.c)*sp.slope
			default:
				for k := 1; k < len(ps); k++ {
					if a, b := ps[k-1], ps[k]; c <= b.c {
						t += a.x + (c-a.c)/(b.c-a.c)*(b.x-a.x)
						break
					}
				}
			}
		}
		return t
	}
	span := cmax - cmin
	lo, hi := cmin-span, cmax+span
	for range 100 {
		if hi-lo <= 0.5 {
			break
		}
		if mid := (lo + hi) / 2; at(mid) < float64(offset) {
			lo = mid
		} else {
			hi = mid
		}
	}
	delta := codeGap / slope
	var out []cutPivot
	for j := range codePivots {
		c := math.Round(min(max(hi+(float64(j)-float64(codePivots-1)/2)*delta, cmin-span), cmax+span))
		if len(out) == 0 || out[len(out)-1].e.code != c {
			out = append(out, cutPivot{shard: -1, e: shardEntry{code: c}})
		}
	}
	return out
}

// spreadPivots spreads codes evenly between the bounds' codes (both
// excluded, so that each narrows the bounds); none when they leave no
// room for one.
func spreadPivots(low, high cutBound) []cutPivot {
	if !low.set || !high.set {
		return nil
	}
	lc, hc := low.key.code, high.key.code
	var out []cutPivot
	for j := 1; j <= codePivots; j++ {
		c := math.Floor(lc + (hc-lc)*float64(j)/float64(codePivots+1))
		if c > lc && c < hc && (len(out) == 0 || out[len(out)-1].e.code != c) {
			out = append(out, cutPivot{shard: -1, e: shardEntry{code: c}})
		}
	}
	return out
}

// fetchPivots reads the entries at idx[i] of each shard i.
func (r *shardRead) fetchPivots(ctx context.Context, idx [][]int64) ([]cutPivot, error) {
	ops := r.ops()
	for i, o := range ops {
		for _, x := range idx[i] {
			o.rng(r.zkeys[i], x, x)
		}
	}
	reps, err := r.s.runSlices(ctx, ops)
	if err != nil {
		return nil, err
	}
	var pivots []cutPivot
	for i, rep := range reps {
		ps, err := pivotsOf(rep, i, 0, idx[i])
		if err != nil {
			return nil, err
		}
		pivots = append(pivots, ps...)
	}
	return pivots, nil
}

// pivotsOf decodes range ops from index op on (one entry each, at idx) of
// shard i's reply; an index past the shard's end gives none.
func pivotsOf(rep sliceReply, i, op int, idx []int64) ([]cutPivot, error) {
	var out []cutPivot
	for j, x := range idx {
		es, err := rep.entries(op + j)
		if err != nil {
			return nil, err
		}
		if len(es) == 1 {
			out = append(out, cutPivot{shard: i, index: x, e: es[0]})
		}
	}
	return out, nil
}

// before counts, on every shard, the entries before each pivot:
// counts[shard][pivot].
func (r *shardRead) before(ctx context.Context, pivots []shardEntry, shared bool) ([][]int64, error) {
	ops := r.ops()
	counts := make([][]int64, len(ops))
	if len(pivots) == 0 {
		return counts, nil
	}
	for i, o := range ops {
		o.before(r.zkeys[i], shared, pivots)
	}
	reps, err := r.s.runSlices(ctx, ops)
	if err != nil {
		return nil, err
	}
	for i, rep := range reps {
		counts[i] = rep.ints(0)
	}
	return counts, nil
}

// ranks returns the rank of each entry on the merged period: 1 + the
// entries before it (ties: shared, before its code).
func (r *shardRead) ranks(ctx context.Context, es []shardEntry) ([]int64, error) {
	counts, err := r.before(ctx, es, r.shared)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(es))
	for q := range es {
		out[q] = 1
		for i := range counts {
			out[q] += counts[i][q]
		}
	}
	return out, nil
}

// byOwner groups members by shard.
func (r *shardRead) byOwner(members []string) [][]string {
	per := make([][]string, r.b.Shards)
	for _, m := range members {
		sh := ShardOf(m, r.b.Shards)
		per[sh] = append(per[sh], m)
	}
	return per
}

// codes reads the codes of members in the period (absent: not listed).
func (r *shardRead) codes(ctx context.Context, members []string) (map[string]float64, error) {
	per := r.byOwner(members)
	ops := r.ops()
	for i, o := range ops {
		if len(per[i]) > 0 {
			o.score(r.zkeys[i], per[i])
		}
	}
	reps, err := r.s.runSlices(ctx, ops)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for i, rep := range reps {
		if len(rep) == 0 {
			continue
		}
		cs, err := rep.codes(0)
		if err != nil {
			return nil, err
		}
		for j, c := range cs {
			if c != nil {
				out[per[i][j]] = *c
			}
		}
	}
	return out, nil
}

// names reads the display names of members, each on its shard.
func (r *shardRead) names(ctx context.Context, members []string) (map[string]string, error) {
	per := r.byOwner(members)
	ops := r.ops()
	for i, o := range ops {
		if len(per[i]) > 0 {
			o.names(per[i])
		}
	}
	reps, err := r.s.runSlices(ctx, ops)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, rep := range reps {
		if len(rep) == 0 {
			continue
		}
		for j, name := range rep.strs(0) {
			if name != "" {
				out[per[i][j]] = name
			}
		}
	}
	return out, nil
}

// flatOf lays entries out as read.lua does: (member, code, name) triples,
// names from the map or (nil map) from the entries.
func flatOf(es []shardEntry, names map[string]string) []any {
	flat := make([]any, 0, 3*len(es))
	for _, e := range es {
		name := e.name
		if n, ok := names[e.member]; ok {
			name = n
		}
		flat = append(flat, e.member, fmtCode(e.code), name)
	}
	return flat
}

func membersOf(es []shardEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.member
	}
	return out
}

// page reads entries [offset, offset+limit) and the total.
func (r *shardRead) page(ctx context.Context, offset, limit int64) (int64, []shardEntry, error) {
	return r.pageRows(ctx, offset, limit, nil, nil)
}

// pageRows reads entries [offset, offset+limit) with their names, and
// with prev (the previous period's sorted set per shard, or nil) their
// codes there; and the total. after, when given, is the entry at offset-1
// (the end of the page before): each shard's cut is then counted from it
// in one round.
//
// Near the top (offset+limit <= shardLimits.shallow) the shards are read
// from their first entry; deeper, from each shard's cut (its entries
// among the first offset), taken from after or narrowed by counting
// (cutAt) to bounds whose entries are read with the page.
func (r *shardRead) pageRows(ctx context.Context, offset, limit int64, prev []string, after *shardEntry) (total int64, es []shardEntry, err error) {
	n := len(r.zkeys)
	if offset+limit <= r.s.shardLimits.shallow {
		return r.collect(ctx, make([]int64, n), nil, nil, offset, limit, prev)
	}
	// The first round reads the counts with the cursor's place, or with
	// guessed pivots: where the cut falls if the shards are the same size,
	// and about 2.5 standard deviations of a shard's share each side.
	var cut []int64
	guess := make([][]int64, n)
	if after == nil {
		share := offset / int64(n)
		step := int64(2.5*math.Sqrt(float64(share))) + 1
		for i := range guess {
			for _, x := range []int64{share - step, share, share + step} {
				if x >= 0 {
					guess[i] = append(guess[i], x)
				}
			}
		}
	}
	ops := r.ops()
	for i, o := range ops {
		o.card(r.zkeys[i])
		if after != nil {
			o.before(r.zkeys[i], false, []shardEntry{*after})
		}
		for _, x := range guess[i] {
			o.rng(r.zkeys[i], x, x)
		}
	}
	reps, err := r.s.runSlices(ctx, ops)
	if err != nil {
		return 0, nil, err
	}
	cards := make([]int64, n)
	if after != nil {
		cut = make([]int64, n)
	}
	var sum int64
	var first []cutPivot
	for i, rep := range reps {
		cards[i] = rep.int(0)
		total += cards[i]
		if after != nil {
			// Entries up to and with the page before's last one.
			cut[i] = rep.ints(1)[0]
			if ShardOf(after.member, r.b.Shards) == i {
				cut[i]++
			}
			sum += cut[i]
		}
		ps, err := pivotsOf(rep, i, 1, guess[i])
		if err != nil {
			return 0, nil, err
		}
		first = append(first, ps...)
	}
	if offset >= total {
		return total, nil, nil
	}
	lo, hi := cut, cut
	if cut == nil || sum != offset {
		// No cursor, or the board changed since the page before: count.
		if lo, hi, err = r.cutAt(ctx, cards, offset, first); err != nil {
			return 0, nil, err
		}
	}
	// One round reads what is left between the bounds and the page.
	_, es, err = r.collect(ctx, lo, hi, cards, offset-sumOf(lo), limit, prev)
	return total, es, err
}

// collect merges the shards' entries from base[i] on and returns the
// total and entries [skip, skip+take) of the merge. Each shard is first
// asked for its share of skip+take with a margin (members hash evenly),
// or, with upto (each shard's most entries among the first skip from
// base), for those and its share of take with a margin; and again only
// when it gave all it was asked for and its last entry still ranks within
// them. cards nil: read them in the first round.
func (r *shardRead) collect(ctx context.Context, base, upto, cards []int64, skip, take int64, prev []string) (total int64, es []shardEntry, err error) {
	prevOf := func(i int) string {
		if prev == nil {
			return ""
		}
		return prev[i]
	}
	end := skip + take
	n := int64(len(r.zkeys))
	parts := make([][]shardEntry, n)
	ops := r.ops()
	readCards := cards == nil
	if readCards {
		cards = make([]int64, n)
	}
	// A shard's expected part of k entries, and about 2 standard deviations more.
	share := func(k int64) int64 {
		s := k / n
		return s + 2*int64(math.Sqrt(float64(s))) + 4
	}
	ask := func(i int) int64 {
		if upto == nil {
			return min(end, share(end))
		}
		// max: a board written between the counts may cross the bounds.
		return min(end, max(upto[i]-base[i], 0)+share(take))
	}
	for i, o := range ops {
		if readCards {
			o.card(r.zkeys[i])
		}
		if readCards || base[i] < cards[i] {
			o.rows(r.zkeys[i], base[i], base[i]+ask(i)-1, prevOf(i))
		}
	}
	reps, err := r.s.runSlices(ctx, ops)
	if err != nil {
		return 0, nil, err
	}
	for i, rep := range reps {
		op := 0
		if readCards {
			cards[i] = rep.int(0)
			op = 1
		}
		if len(rep) > op {
			if parts[i], err = rep.rowEntries(op); err != nil {
				return 0, nil, err
			}
		}
	}
	for _, c := range cards {
		total += c
	}
	for {
		all := merge(parts)
		// A shard may hold more of them if it has more entries than it
		// gave and its last one ranks within the first end of the merge.
		var more []int
		for i := range parts {
			got := int64(len(parts[i]))
			if got > 0 && base[i]+got < cards[i] && got < end && (int64(len(all)) < end || !entryLess(all[end-1], parts[i][got-1])) {
				more = append(more, i)
			}
		}
		if len(more) == 0 {
			if int64(len(all)) <= skip {
				return total, nil, nil
			}
			return total, all[skip:min(int64(len(all)), end)], nil
		}
		ops := make([]*sliceOps, n)
		for _, i := range more {
			ops[i] = newSliceOps(r.s.shardKeys(r.b, i))
			ops[i].rows(r.zkeys[i], base[i]+int64(len(parts[i])), base[i]+end-1, prevOf(i))
		}
		if reps, err = r.s.runSlices(ctx, ops); err != nil {
			return 0, nil, err
		}
		for _, i := range more {
			es, err := reps[i].rowEntries(0)
			if err != nil {
				return 0, nil, err
			}
			parts[i] = append(parts[i], es...)
		}
	}
}

// firstRank is the rank of es[0] at 0-based position pos.
func (r *shardRead) firstRank(ctx context.Context, es []shardEntry, pos int64) (int64, error) {
	if len(es) == 0 {
		return 0, nil
	}
	if !r.shared || pos == 0 {
		return pos + 1, nil
	}
	ranks, err := r.ranks(ctx, es[:1])
	if err != nil {
		return 0, err
	}
	return ranks[0], nil
}

// readMerged answers readSeg's request for a sharded board: the same
// readReply read.lua gives for one shard.
func (s *Store) readMerged(ctx context.Context, b *Board, v View, seg Segment, period string, mode ...string) (Standing, readReply, error) {
	cal := s.cfg.Calendar
	now, err := s.Now(ctx)
	if err != nil {
		return Standing{}, readReply{}, err
	}
	p := cal.PeriodAt(v, now)
	if period != "" {
		if p, err = cal.ParsePeriod(v, period); err != nil {
			return Standing{}, readReply{}, err
		}
	}
	r := s.shardRead(b, v, seg, p)
	if v.Kind == Window {
		built, err := s.shardsBuilt(ctx, b, v, seg, p)
		if err != nil {
			return Standing{}, readReply{}, err
		}
		if !built {
			// As readSeg: build a window that can still be built, else it
			// reads as what its shards hold.
			tomorrow := cal.Next(v, cal.PeriodAt(v, now))
			seen, err := s.segmentKnown(ctx, b, seg)
			if err != nil {
				return Standing{}, readReply{}, err
			}
			if seen && !p.End.After(tomorrow.End) && now.UnixMilli() < s.entry(b, v, p).expireAt {
				if err := s.ensureSegWindow(ctx, b, v, seg, p); err != nil {
					return Standing{}, readReply{}, err
				}
			}
		}
	}
	rep := readReply{nowMS: now.UnixMilli(), chosen: 1}
	switch mode[0] {
	case "page", "rows":
		offset, limit := mustInt(mode[1]), mustInt(mode[2])
		// A calendar or window view's previous ranks come from the
		// previous period's codes, read with the page.
		var prev *shardRead
		if mode[0] == "page" && v.Kind != All {
			if prev, err = s.prevRead(ctx, b, v, seg, p, now); err != nil {
				return Standing{}, rep, err
			}
		}
		var prevKeys []string
		if prev != nil {
			prevKeys = prev.zkeys
		}
		var after *shardEntry
		if len(mode) == 5 {
			c, err := parseCode(mode[4])
			if err != nil {
				return Standing{}, rep, err
			}
			after = &shardEntry{member: mode[3], code: c}
		}
		total, es, err := r.pageRows(ctx, offset, limit, prevKeys, after)
		if err != nil {
			return Standing{}, rep, err
		}
		rep.total = total
		fr, err := r.firstRank(ctx, es, offset)
		if err != nil {
			return Standing{}, rep, err
		}
		rep.firstRank = fr
		rep.flat = flatOf(es, nil)
		switch {
		case prev != nil:
			if rep.prevs, err = prev.prevRanks(ctx, es); err != nil {
				return Standing{}, rep, err
			}
		case mode[0] == "page" && len(es) > 0:
			if rep.prevs, err = s.prevsMerged(ctx, b, v, seg, p, now, membersOf(es)); err != nil {
				return Standing{}, rep, err
			}
		}
	case "members":
		if err := r.members(ctx, mode[2:], &rep); err != nil {
			return Standing{}, rep, err
		}
		found := make([]string, 0, len(rep.flat)/4)
		for k := 1; k < len(rep.flat); k += 4 {
			found = append(found, rep.flat[k].(string))
		}
		if rep.prevs, err = s.prevsMerged(ctx, b, v, seg, p, now, found); err != nil {
			return Standing{}, rep, err
		}
	default:
		if err := r.member(ctx, mode[1], mustInt(mode[2]), &rep); err != nil {
			return Standing{}, rep, err
		}
	}
	return Standing{Board: b, View: v, Period: p, Final: b.Final(p, now), Total: rep.total, Now: now}, rep, nil
}

func mustInt(s string) int64 {
	n, _ := parseInt(s)
	return n
}

// shardsBuilt reports whether window p is built on every shard.
func (s *Store) shardsBuilt(ctx context.Context, b *Board, v View, seg Segment, p Period) (bool, error) {
	n, err := s.shardsBuiltCount(ctx, b, v, seg, p)
	return n == b.Shards, err
}

// shardsBuiltCount counts the shards on which window p is built.
func (s *Store) shardsBuiltCount(ctx context.Context, b *Board, v View, seg Segment, p Period) (int, error) {
	ops := make([]*sliceOps, b.Shards)
	for i := range ops {
		k := s.shardKeys(b, i)
		ops[i] = newSliceOps(k)
		ops[i].exists(k.segBuilt(v, seg, p.ID))
	}
	reps, err := s.runSlices(ctx, ops)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, rep := range reps {
		n += int(rep.int(0))
	}
	return n, nil
}

// total sums the shards' counts.
func (r *shardRead) total(ctx context.Context) (int64, error) {
	cards, err := r.cards(ctx)
	if err != nil {
		return 0, err
	}
	var t int64
	for _, c := range cards {
		t += c
	}
	return t, nil
}

// member fills rep as read.lua's member mode: the member's rank, code and
// name, and up to around neighbours each side.
func (r *shardRead) member(ctx context.Context, member string, around int64, rep *readReply) error {
	own := ShardOf(member, r.b.Shards)
	ops := r.ops()
	for i, o := range ops {
		o.card(r.zkeys[i])
	}
	scoreOp := ops[own].score(r.zkeys[own], []string{member})
	reps, err := r.s.runSlices(ctx, ops)
	if err != nil {
		return err
	}
	for _, x := range reps {
		rep.total += x.int(0)
	}
	codes, err := reps[own].codes(scoreOp)
	if err != nil {
		return err
	}
	if codes[0] == nil {
		rep.rank, rep.firstRank = 0, 0
		return nil
	}
	me := shardEntry{member: member, code: *codes[0]}
	ops = r.ops()
	for i, o := range ops {
		o.nearNamed(r.zkeys[i], me, int(around))
	}
	if reps, err = r.s.runSlices(ctx, ops); err != nil {
		return err
	}
	pos, list, first, err := mergeNear(reps, 0, around)
	if err != nil {
		return err
	}
	rep.rank = pos + 1 // a position, as read.lua's: Store.Member ranks the list
	rep.code = fmtCode(me.code)
	for _, e := range list {
		if e.member == member {
			rep.name, _ = e.name.(string)
		}
	}
	fr, err := r.firstRank(ctx, list, first)
	if err != nil {
		return err
	}
	rep.firstRank = fr
	rep.flat = flatOf(list, nil)
	return nil
}

// mergeNear merges every shard's nearNamed reply (op) into the member's
// neighbours: pos, the entries before the member on the merged period;
// list, up to around entries before it, the member, and up to around
// after; first, the position of list[0].
func mergeNear(reps []sliceReply, op int, around int64) (pos int64, list []shardEntry, first int64, err error) {
	parts := make([]nearPart, len(reps))
	for i, x := range reps {
		if parts[i].before, parts[i].es, err = x.nearEntries(op); err != nil {
			return 0, nil, 0, err
		}
	}
	pos, list, first = mergeNearParts(parts, around)
	return pos, list, first, nil
}

// members fills rep as read.lua's members mode: the ranked ones among
// members, in rank order, (rank, member, code, name) each.
func (r *shardRead) members(ctx context.Context, members []string, rep *readReply) error {
	total, err := r.total(ctx)
	if err != nil {
		return err
	}
	rep.total = total
	codes, err := r.codes(ctx, members)
	if err != nil {
		return err
	}
	var found []shardEntry
	for m, c := range codes {
		found = append(found, shardEntry{member: m, code: c})
	}
	found = merge([][]shardEntry{found})
	ranks, err := r.ranks(ctx, found)
	if err != nil {
		return err
	}
	names, err := r.names(ctx, membersOf(found))
	if err != nil {
		return err
	}
	for q, e := range found {
		var name any
		if n, ok := names[e.member]; ok {
			name = n
		}
		rep.flat = append(rep.flat, ranks[q], e.member, fmtCode(e.code), name)
	}
	return nil
}

// prevsMerged gives each member's previous rank as read.lua's prevs:
// the rank in the view's previous period on the merged board, 0 when it
// had no score then; nil when the view keeps none (all views for now, and
// a previous period expired or, for a window, not built on every shard;
// segment boards' all views). An all view's are its ranks at the last
// local midnight (snapshotPrevs).
func (s *Store) prevsMerged(ctx context.Context, b *Board, v View, seg Segment, p Period, now time.Time, members []string) ([]any, error) {
	if len(members) == 0 || (v.Kind == All && !seg.IsZero()) {
		return nil, nil
	}
	if v.Kind == All {
		return s.snapshotPrevs(ctx, b, v, now, members)
	}
	r, err := s.prevRead(ctx, b, v, seg, p, now)
	if r == nil || err != nil {
		return nil, err
	}
	codes, err := r.codes(ctx, members)
	if err != nil {
		return nil, err
	}
	var found []shardEntry
	for _, m := range members {
		if c, ok := codes[m]; ok {
			found = append(found, shardEntry{member: m, code: c})
		}
	}
	ranks, err := r.ranks(ctx, found)
	if err != nil {
		return nil, err
	}
	rankOf := map[string]int64{}
	for q, e := range found {
		rankOf[e.member] = ranks[q]
	}
	out := make([]any, len(members))
	for j, m := range members {
		out[j] = rankOf[m] // 0: no score then
	}
	return out, nil
}

// prevRead is the period before p of a calendar or window view on every
// shard, or nil when entries get no previous rank from it: expired, or a
// window no shard built (one that some shard built is built on the others
// too: a shard without the window's events may not have).
func (s *Store) prevRead(ctx context.Context, b *Board, v View, seg Segment, p Period, now time.Time) (*shardRead, error) {
	prev := s.cfg.Calendar.Prev(v, p)
	if exp := s.entry(b, v, prev).expireAt; exp != 0 && now.UnixMilli() >= exp {
		return nil, nil
	}
	if v.Kind == Window {
		built, err := s.shardsBuiltCount(ctx, b, v, seg, prev)
		if err != nil || built == 0 {
			return nil, err
		}
		if built < b.Shards {
			if err := s.ensureSegWindow(ctx, b, v, seg, prev); err != nil {
				return nil, err
			}
		}
	}
	return s.shardRead(b, v, seg, prev), nil
}

// prevRanks gives entries read with their codes in this (previous) period
// their ranks there, 0 for those without a code, as read.lua's prevs.
func (r *shardRead) prevRanks(ctx context.Context, es []shardEntry) ([]any, error) {
	var found []shardEntry
	for _, e := range es {
		if e.prev != nil {
			found = append(found, shardEntry{member: e.member, code: *e.prev})
		}
	}
	ranks, err := r.ranks(ctx, found)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(es))
	q := 0
	for j, e := range es {
		out[j] = int64(0)
		if e.prev != nil {
			out[j] = ranks[q]
			q++
		}
	}
	return out, nil
}

// rankWrites sets the rank of every applied event's views on the merged
// board (apply.lua on one shard knows that shard's ranks only): one round
// reads the members' codes on their shards, one counts on every shard
// what ranks before them, for every (view, period) of the batch at once.
func (s *Store) rankWrites(ctx context.Context, b *Board, results []WriteResult) error {
	type at struct{ res, view int }
	type group struct {
		r        *shardRead
		ats      []at
		members  [][]string // by shard
		scoreOp  []int      // by shard: the score op's index, -1 none
		found    []shardEntry
		beforeOp int
	}
	var groups []*group
	byPeriod := map[[2]string]*group{}
	for i, res := range results {
		if res.Err != nil {
			continue
		}
		for vi, vs := range res.Views {
			key := [2]string{vs.View, vs.Period}
			g := byPeriod[key]
			if g == nil {
				v, _ := b.View(vs.View)
				g = &group{r: s.shardRead(b, v, Segment{}, Period{ID: vs.Period}), members: make([][]string, b.Shards)}
				byPeriod[key] = g
				groups = append(groups, g)
			}
			g.ats = append(g.ats, at{i, vi})
			sh := ShardOf(res.Member, b.Shards)
			g.members[sh] = append(g.members[sh], res.Member)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	ops := groups[0].r.ops()
	for _, g := range groups {
		g.scoreOp = make([]int, b.Shards)
		for i, o := range ops {
			g.scoreOp[i] = -1
			if len(g.members[i]) > 0 {
				g.scoreOp[i] = o.score(g.r.zkeys[i], g.members[i])
			}
		}
	}
	reps, err := s.runSlices(ctx, ops)
	if err != nil {
		return err
	}
	for _, g := range groups {
		seen := map[string]bool{}
		for i := range ops {
			if g.scoreOp[i] < 0 {
				continue
			}
			codes, err := reps[i].codes(g.scoreOp[i])
			if err != nil {
				return err
			}
			for j, c := range codes {
				if m := g.members[i][j]; c != nil && !seen[m] {
					seen[m] = true
					g.found = append(g.found, shardEntry{member: m, code: *c})
				}
			}
		}
	}
	ops = groups[0].r.ops()
	for _, g := range groups {
		g.beforeOp = -1
		if len(g.found) == 0 {
			continue
		}
		for i, o := range ops {
			g.beforeOp = o.before(g.r.zkeys[i], g.r.shared, g.found)
		}
	}
	if reps, err = s.runSlices(ctx, ops); err != nil {
		return err
	}
	for _, g := range groups {
		rankOf := map[string]int64{}
		if g.beforeOp >= 0 {
			for q, e := range g.found {
				rank := int64(1)
				for i := range reps {
					rank += reps[i].ints(g.beforeOp)[q]
				}
				rankOf[e.member] = rank
			}
		}
		for _, a := range g.ats {
			results[a.res].Views[a.view].Rank = rankOf[results[a.res].Member]
		}
	}
	return nil
}

// snapshotPrevs gives members' ranks on the all view at the last local
// midnight, as read.lua's "s" kind does on one shard: the rank when in
// the best SnapshotTop then, -1 (unknown) when below them, 0 when unranked,
// -2 (unchanged) when nothing was written since. Each shard kept its own
// best SnapshotTop codes at its first write of the day (apply.lua); a
// shard not written since midnight is its own snapshot. A member in the
// merged best SnapshotTop is in its shard's, and fewer than SnapshotTop
// entries of any shard rank before it, so counting within the shards'
// snapshots is exact for it.
func (s *Store) snapshotPrevs(ctx context.Context, b *Board, v View, now time.Time, members []string) ([]any, error) {
	var day Period
	for _, d := range snapshotDays(s.cfg.Calendar, now) {
		if !now.Before(d.Start) && now.Before(d.End) {
			day = d
		}
	}
	cur := s.shardRead(b, v, Segment{}, Period{ID: AllPeriodID})
	snap := &shardRead{s: s, b: b, zkeys: make([]string, b.Shards), shared: cur.shared}
	per := cur.byOwner(members)
	ops := cur.ops()
	for i, o := range ops {
		k := s.shardKeys(b, i)
		snap.zkeys[i] = k.snapshotCodes(v.Name, day.ID)
		o.get(k.snapshotCount(v.Name, day.ID))
		o.card(cur.zkeys[i])
		if len(per[i]) > 0 {
			o.score(snap.zkeys[i], per[i])
			o.score(cur.zkeys[i], per[i])
		}
	}
	reps, err := s.runSlices(ctx, ops)
	if err != nil {
		return nil, err
	}
	// Each shard's midnight state: its snapshot, or its current entries.
	var total int64
	taken := false
	zkeys := make([]string, len(reps))
	codes := map[string]float64{}
	for i, rep := range reps {
		n, ok := rep[0].(string)
		var shardCodes []*float64
		if ok {
			taken = true
			c, _ := parseInt(n)
			total += c
			zkeys[i] = snap.zkeys[i]
			if len(per[i]) > 0 {
				shardCodes, err = rep.codes(2)
			}
		} else {
			total += rep.int(1)
			zkeys[i] = cur.zkeys[i]
			if len(per[i]) > 0 {
				shardCodes, err = rep.codes(3)
			}
		}
		if err != nil {
			return nil, err
		}
		for j, c := range shardCodes {
			if c != nil {
				codes[per[i][j]] = *c
			}
		}
	}
	out := make([]any, len(members))
	if !taken {
		for j := range out {
			out[j] = int64(-2)
		}
		return out, nil
	}
	full := total > SnapshotTop
	var found []shardEntry
	for _, m := range members {
		if c, ok := codes[m]; ok {
			found = append(found, shardEntry{member: m, code: c})
		}
	}
	mid := &shardRead{s: s, b: b, zkeys: zkeys, shared: cur.shared}
	pos, err := mid.before(ctx, found, false)
	if err != nil {
		return nil, err
	}
	var lower [][]int64
	if mid.shared {
		if lower, err = mid.before(ctx, found, true); err != nil {
			return nil, err
		}
	}
	rankOf := map[string]int64{}
	for q, e := range found {
		p, r := int64(1), int64(1)
		for i := range pos {
			p += pos[i][q]
			if lower != nil {
				r += lower[i][q]
			}
		}
		if p > SnapshotTop {
			continue // below the snapshot, as if not in it
		}
		if lower == nil {
			r = p
		}
		rankOf[e.member] = r
	}
	for j, m := range members {
		switch r, ok := rankOf[m]; {
		case ok:
			out[j] = r
		case full:
			out[j] = int64(-1)
		default:
			out[j] = int64(0)
		}
	}
	return out, nil
}
