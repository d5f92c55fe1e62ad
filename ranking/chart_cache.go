package ranking

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A rank card's chart is mostly final periods, and a final period's point
// (the member's rank and score, the period's total) cannot change: a late
// event past the board's lateness is refused on Redis's clock. Only a
// removal changes one, and every removal bumps a version on the removed
// member's shard (the "fv" key, in remove.lua's call). So the store keeps
// final points it read, under the versions it read beside them, and a
// card sends Redis only the periods it does not keep: the versions are
// read in the card's own snapshot (its transaction) or in its counting round (a
// sharded card), and a version that moved drops every point kept under
// the old one (they are keyed by it).
//
// A version key that is missing (a new board, a flushed database) is
// created with a random value, never reused, so that points read before a
// flush never match data written after it. Points of windows nobody built,
// or that could not be built, are not kept: a later build fills them.
// Expired periods read as absent, so a kept point is dropped at its
// period's expiry.

// chartMargin is how long after a period is final (end + lateness) its
// points are kept: the reading node's clock decides late events, and on a
// sharded board the shards' clocks may differ by this much.
const chartMargin = time.Minute

// maxChartPoints bounds the kept points (24 bytes each, plus about 100 per
// member's chart): about 35 MB when full.
const maxChartPoints = 1 << 20

// chartCache keeps final chart points. Two generations of maps make it an
// approximate LRU: lookups promote, and a full current generation becomes
// the old one, dropping the one before.
type chartCache struct {
	mu       sync.Mutex
	versions map[string]string // board -> the shards' versions as last read ("" = unknown)
	cur, old map[string]*chart // chartKey -> the member's kept points
	points   int               // points in cur
	totals   map[string]chartTotal
}

// chart is one member's kept points in one view of one board.
type chart struct {
	points []chartPoint // by start, ascending
}

// chartPoint is a member's standing in a final period: rank 0 when it had
// no score there.
type chartPoint struct {
	start int64 // the period's start, ms (its identity within the view)
	rank  int64
	code  float64
}

// chartTotal is a final period's total and expiry, shared by every member.
type chartTotal struct {
	total, expireAt int64
}

func newChartCache() *chartCache {
	return &chartCache{versions: map[string]string{}, cur: map[string]*chart{}, old: map[string]*chart{}, totals: map[string]chartTotal{}}
}

// chartKey names one member's chart of view v (its segment board seg) of
// board b, under the board's versions.
func chartKey(b *Board, v View, seg Segment, versions, member string) string {
	return b.ID + "\x00" + versions + "\x00" + v.Name + seg.tag() + "\x00" + member
}

func totalKey(b *Board, v View, seg Segment, versions string, start int64) string {
	return b.ID + "\x00" + versions + "\x00" + v.Name + seg.tag() + "\x00" + strconv.FormatInt(start, 10)
}

// version is the board's versions as last read ("" = unknown: nothing is
// kept or used).
func (c *chartCache) version(b *Board) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.versions[b.ID]
}

// setVersion notes the board's versions as just read; points kept under
// other versions are no longer found.
func (c *chartCache) setVersion(b *Board, versions string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.versions[b.ID] = versions
}

// lookup returns the member's kept points of periods ps (ok[i] false
// where none is kept) at Redis's now nowMS.
func (c *chartCache) lookup(b *Board, v View, seg Segment, versions, member string, ps []Period, nowMS int64) (pts []HistoryPoint, ok []bool) {
	pts, ok = make([]HistoryPoint, len(ps)), make([]bool, len(ps))
	if versions == "" {
		return pts, ok
	}
	key := chartKey(b, v, seg, versions, member)
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.cur[key]
	if ch == nil {
		if ch = c.old[key]; ch != nil {
			delete(c.old, key)
			c.put(key, ch)
		} else {
			ch = &chart{}
		}
	}
	for i, p := range ps {
		start := p.Start.UnixMilli()
		t, known := c.totals[totalKey(b, v, seg, versions, start)]
		if !known || nowMS >= t.expireAt {
			continue
		}
		if t.total == 0 {
			// Nobody scored in it: every member's point is known.
			pts[i], ok[i] = HistoryPoint{Period: p}, true
			continue
		}
		j, found := searchPoints(ch.points, start)
		if !found {
			continue
		}
		cp := ch.points[j]
		pts[i] = HistoryPoint{Period: p, Total: t.total}
		if cp.rank > 0 {
			pts[i].Rank = cp.rank
			pts[i].Score, _ = b.decode(v.Name, cp.code)
			pts[i].Present = true
		}
		ok[i] = true
	}
	return pts, ok
}

// keep stores final points of the member read under versions: each
// point's code (NaN-free; rank 0 = absent), total and period expiry.
func (c *chartCache) keep(b *Board, v View, seg Segment, versions, member string, kept []keptPoint) {
	if versions == "" || len(kept) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.totals) >= maxChartPoints/16 {
		clear(c.totals)
	}
	var ch *chart
	for _, k := range kept {
		c.totals[totalKey(b, v, seg, versions, k.point.start)] = chartTotal{total: k.total, expireAt: k.expireAt}
		if k.total == 0 {
			continue // known for every member by its total
		}
		if ch == nil {
			ch = c.chart(chartKey(b, v, seg, versions, member))
		}
		j, found := searchPoints(ch.points, k.point.start)
		if found {
			ch.points[j] = k.point
			continue
		}
		ch.points = append(ch.points, chartPoint{})
		copy(ch.points[j+1:], ch.points[j:])
		ch.points[j] = k.point
		c.points++
	}
	// A chart longer than the longest history is trimmed from its oldest
	// end: those periods have left every chart.
	if ch == nil {
		return
	}
	if over := len(ch.points) - 2*MaxHistory; over > 0 {
		ch.points = append(ch.points[:0], ch.points[over:]...)
		c.points -= over
	}
}

// chart returns the kept chart of key, made (empty) when there is none.
func (c *chartCache) chart(key string) *chart {
	ch := c.cur[key]
	if ch == nil {
		if ch = c.old[key]; ch != nil {
			delete(c.old, key)
		} else {
			ch = &chart{}
		}
		c.put(key, ch)
	}
	return ch
}

// put adds a chart to the current generation, turning generations over
// when it is full.
func (c *chartCache) put(key string, ch *chart) {
	if c.points >= maxChartPoints/2 {
		c.old, c.cur, c.points = c.cur, map[string]*chart{}, 0
	}
	c.cur[key] = ch
	c.points += len(ch.points)
}

// keptPoint is one point to keep, with its period's total and expiry.
type keptPoint struct {
	point           chartPoint
	total, expireAt int64
}

func searchPoints(ps []chartPoint, start int64) (int, bool) {
	lo, hi := 0, len(ps)
	for lo < hi {
		m := (lo + hi) / 2
		if ps[m].start < start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(ps) && ps[lo].start == start
}

// appendKept appends to keep the point pt (code: its code when present) of
// period p of q's chart, read at Redis's now, when it may be kept: final
// for chartMargin, and not a window read as it is (built false: nobody
// built it; or one that could not be built).
func (s *Store) appendKept(keep []keptPoint, q *cardQuery, p Period, now time.Time, built bool, pt HistoryPoint, code float64) []keptPoint {
	b, v := q.b, q.v
	if p.IsAll() || now.Before(p.End.Add(b.Lateness+chartMargin)) {
		return keep
	}
	if v.Kind == Window && (!built || q.unchecked[v.Name+q.seg.tag()+":"+p.ID]) {
		return keep
	}
	kp := keptPoint{point: chartPoint{start: p.Start.UnixMilli()}, total: pt.Total, expireAt: s.entry(b, v, p).expireAt}
	if pt.Present {
		kp.point.rank, kp.point.code = pt.Rank, code
	}
	return append(keep, kp)
}

// joinVersions is a sharded board's versions as one string ("" when some
// shard has none yet).
func joinVersions(vs []string) string {
	for _, v := range vs {
		if v == "" {
			return ""
		}
	}
	return strings.Join(vs, ",")
}

// createVersions gives each of the board's shards without a version one
// (a random value, so that one never repeats after a flush).
func (s *Store) createVersions(ctx context.Context, b *Board, missing []int) error {
	for _, i := range missing {
		key := s.keysOf(b).finalVersion()
		if b.Sharded() {
			key = s.shardKeys(b, i).finalVersion()
		}
		if err := s.rdb.SetNX(ctx, key, strconv.FormatUint(rand.Uint64()>>2, 10), 0).Err(); err != nil {
			return wrapRedis(err)
		}
	}
	return nil
}

// keepChart notes the versions a card read (each: per shard, joined:
// versions) and keeps its final points under them. A board or shard
// without a version gets one, for the next card: this one keeps nothing.
func (s *Store) keepChart(ctx context.Context, b *Board, v View, seg Segment, member, versions string, each []string, keep []keptPoint) {
	var missing []int
	for i, e := range each {
		if e == "" {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		// A failure leaves the next card to try: this one is right
		// either way.
		_ = s.createVersions(ctx, b, missing)
		return
	}
	s.charts.setVersion(b, versions)
	s.charts.keep(b, v, seg, versions, member, keep)
}
