package web

import (
	"context"
	"fmt"

	"github.com/standings/standings/ranking"
)

// zoneLine says how far a member of the current period is from the next
// zone up: "12 points to reach Prize" (in the board's format and unit);
// "" on a board without zones, outside the current period, and for a
// member in the first zone. It reads the zone's last row, shared for a
// tick like the page reads, so a card costs one more small read only on
// a board with zones.
func (s *Server) zoneLine(ctx context.Context, b *ranking.Board, v ranking.View, seg ranking.Segment, card *ranking.Card, current bool) (string, error) {
	if !current {
		return "", nil
	}
	z, ok := b.ZoneAbove(card.Rank)
	if !ok {
		return "", nil
	}
	var store pageReader = s.reads
	pg, err := store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Segment: seg, Offset: z.Top - 1, Limit: 1})
	if err != nil || len(pg.Entries) == 0 || pg.Period.ID != card.Period.ID {
		return "", err // nobody to reach there, or the period just rolled over
	}
	last := pg.Entries[0]
	if last.Member == card.Member {
		return "", nil // the member moved into the zone since its card was read
	}
	f := facts{asc: b.Order == ranking.Asc, duration: b.Format == "duration", unit: 1, format: func(v int64) string { return scoreText(b, v) }}
	f.one, f.many = unitWords(b)
	d := last.Score - card.Score
	if f.asc {
		d = card.Score - last.Score
	}
	if b.Ties != ranking.TiesShared {
		// An equal score reached later ranks below the zone's last member.
		d += f.unit
	}
	if d <= 0 {
		return "", nil
	}
	switch {
	case f.asc && f.duration:
		return fmt.Sprintf("%s faster to reach %s", f.amount(d), z.Title), nil
	case f.asc:
		return fmt.Sprintf("%s lower to reach %s", f.amount(d), z.Title), nil
	}
	return fmt.Sprintf("%s to reach %s", f.amount(d), z.Title), nil
}
