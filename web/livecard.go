package web

import (
	"context"
	"sync"

	"github.com/standings/standings/ranking"
)

// liveHistories keeps, per live rank card topic, the chart as last read,
// so that a live card re-renders from a script call that reads only the
// current period's point of the chart: 1 period instead of cardHistory.
//
// A past period changes only through a late event, a removal or a window
// built late. Each reaches the hub as a change message naming that
// period, and when a kept chart shows it the hub forgets every kept chart
// (invalidate). It also forgets them at every refresh (Options.LiveRefresh) and
// when it subscribes again after a lost connection, so a lost message
// costs at most one refresh of staleness, as it does for everything
// live.
type liveHistories struct {
	mu      sync.Mutex
	gen     uint64                              // moves on at every invalidation, which empties entries
	entries map[topicKey][]ranking.HistoryPoint // oldest first; the last is the current period as read
	past    map[boardView]map[string]struct{}   // the past periods kept charts show
}

// maxLiveHistories bounds the kept charts: one per live card topic, and
// topics are bounded by the live connections.
const maxLiveHistories = DefaultLiveMaxConns

func newLiveHistories() *liveHistories {
	return &liveHistories{entries: map[topicKey][]ranking.HistoryPoint{}, past: map[boardView]map[string]struct{}{}}
}

// get returns key's kept chart, or nil, and the generation a read that
// starts now must be kept under.
func (lh *liveHistories) get(key topicKey) ([]ranking.HistoryPoint, uint64) {
	lh.mu.Lock()
	defer lh.mu.Unlock()
	return lh.entries[key], lh.gen
}

// put keeps key's chart as read under generation gen, unless an
// invalidation came in between.
func (lh *liveHistories) put(key topicKey, gen uint64, points []ranking.HistoryPoint) {
	lh.mu.Lock()
	defer lh.mu.Unlock()
	if gen != lh.gen || len(points) == 0 {
		return
	}
	if _, ok := lh.entries[key]; !ok && len(lh.entries) >= maxLiveHistories {
		lh.forget()
	}
	lh.entries[key] = points
	bv := key.viewOf()
	ids := lh.past[bv]
	if ids == nil {
		ids = map[string]struct{}{}
		lh.past[bv] = ids
	}
	for _, p := range points[:len(points)-1] {
		ids[p.Period.ID] = struct{}{}
	}
}

// invalidate forgets every kept chart when ch names a period that a kept
// chart shows as past; a nil ch forgets them all.
func (lh *liveHistories) invalidate(ch *ranking.Change) {
	lh.mu.Lock()
	defer lh.mu.Unlock()
	if ch != nil {
		hit := false
		for _, vp := range ch.Periods {
			if _, ok := lh.past[boardView{ch.Board, vp.View, vp.Segment}][vp.Period]; ok {
				hit = true
				break
			}
		}
		if !hit {
			return
		}
	}
	lh.forget()
}

func (lh *liveHistories) forget() {
	lh.gen++
	clear(lh.entries)
	clear(lh.past)
}

// liveRankCard reads the rank card of a live card topic: with a kept chart
// whose last period is still the current one, only that period's point is
// read, and the rest of the chart is the kept one.
func (s *Server) liveRankCard(ctx context.Context, b *ranking.Board, v ranking.View, key topicKey) (*ranking.RankCard, error) {
	kept, gen := s.histories.get(key)
	if len(kept) > 0 {
		rc, err := s.store.RankCard(ctx, b.ID, v.Name, key.member, ranking.RankCardQuery{Segment: key.segment, Around: cardAround, History: 1})
		if err != nil {
			return nil, err
		}
		if rc.History != nil && len(rc.History.Points) == 1 && rc.History.Points[0].Period.ID == kept[len(kept)-1].Period.ID {
			points := make([]ranking.HistoryPoint, 0, len(kept))
			points = append(points, kept[:len(kept)-1]...)
			points = append(points, rc.History.Points[0])
			rc.History.Points = points // the kept chart stays: its past and its period are these
			return rc, nil
		}
		// The period turned since: read the whole chart.
	}
	rc, err := s.store.RankCard(ctx, b.ID, v.Name, key.member, ranking.RankCardQuery{Segment: key.segment, Around: cardAround, History: cardHistory})
	if err != nil {
		return nil, err
	}
	if rc.History != nil {
		s.histories.put(key, gen, rc.History.Points)
	}
	return rc, nil
}
