package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// Rank card reads: neighbours on each side, and how many periods the
// chart covers.
const (
	cardAround  = 5
	cardHistory = 12
)

// cardReader is what the rank card needs of the store.
type cardReader interface {
	RankCard(ctx context.Context, boardID, viewName, member string, q ranking.RankCardQuery) (*ranking.RankCard, error)
}

// handleRankCard serves GET /boards/{board}/{view}/members/{member}?period=&segment=.
func (s *Server) handleRankCard(c echo.Context) error {
	var store cardReader = s.store
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	member, err := pathParam(c, "member")
	if err != nil {
		return err
	}
	if err := ranking.ValidateMember(member); err != nil {
		return err
	}
	seg, err := segmentParam(c, b)
	if err != nil {
		return err
	}
	v, _ := b.View(view)
	period := c.QueryParam("period")
	if period != "" {
		if _, err := s.cfg.Calendar.ParsePeriod(v, period); err != nil {
			return err
		}
	}
	// One read, so the headline, the neighbours, the chart and every view
	// show the same moment even while scores change.
	rc, err := store.RankCard(c.Request().Context(), b.ID, view, member, ranking.RankCardQuery{Segment: seg, Period: period, Around: cardAround, History: cardHistory})
	if err != nil {
		return err
	}
	p := s.cardModel(b, v, seg, rc)
	p.Image = absURL(c, previewPath(b.ID, v.Name, rc.Card.Member, p.Period, seg))
	cacheFor(c, rc.Final)
	return s.renderPage(c, http.StatusOK, views.Card(p))
}

// cardModel lays out a rank card, of the board or of one of its segment
// boards (every link keeps the segment).
func (s *Server) cardModel(b *ranking.Board, v ranking.View, seg ranking.Segment, rc *ranking.RankCard) views.CardPage {
	card, hist, others := &rc.Card, rc.History, rc.Views
	loc := s.cfg.Calendar.Location()
	sg := seg.String()
	name := card.Name
	if name == "" {
		name = card.Member
	}
	nav := s.periodNav(b, v, card.Standing, func(p string) string {
		return withQuery(cardPath(b.ID, v.Name, card.Member), "period", p, "segment", sg)
	})
	linkPeriod := card.Period.ID
	if nav.IsCurrent {
		linkPeriod = ""
	}
	p := views.CardPage{
		Layout:     s.layout(name + " · " + boardTitle(b, seg)),
		BoardID:    b.ID,
		BoardTitle: boardTitle(b, seg),
		BoardURL:   withQuery(boardPath(b.ID, v.Name), "period", linkPeriod, "segment", sg),
		Segment:    segmentLabel(seg),
		ViewLabel:  periodPhrase(v, card.Period, nav.IsCurrent, loc),
		Period:     nav,
		Member:     card.Member,
		Name:       name,
	}
	if !seg.IsZero() {
		p.WholeURL = withQuery(cardPath(b.ID, v.Name, card.Member), "period", linkPeriod)
	}
	for _, ov := range b.Views {
		p.Tabs = append(p.Tabs, views.Link{Label: viewLabel(ov), URL: withQuery(cardPath(b.ID, ov.Name, card.Member), "segment", sg), Current: ov.Name == v.Name})
	}
	p.Description = cardDescription(b, v, seg, card, name, nav.IsCurrent, loc)
	p.Summary = s.cardSummary(b, v, card, hist, nav.IsCurrent)
	if nav.IsCurrent {
		p.Summary.Passed = passedLine(rc.PassedBy, rc.Now)
	}
	if !nav.IsCurrent && v.Kind != ranking.All {
		// A finished period: its views are not this period's, so the card
		// links to the current one rather than mixing periods.
		p.NowURL = withQuery(cardPath(b.ID, v.Name, card.Member), "segment", sg)
		p.Summary.GapLabel = "Result"
	}
	if nav.IsCurrent {
		p.Live = &views.Live{URL: liveURL(b.ID, v.Name, seg, "member", card.Member), TableID: p.Summary.ID}
	}
	p.Neighbours = views.Table{
		ID:          "neighbours-" + b.ID + "-" + v.Name,
		Caption:     fmt.Sprintf("Ranks around %s", name),
		Period:      card.Period.ID,
		Rows:        rows(b, v.Name, seg, linkPeriod, card.Around, card.Member),
		ScoreHeader: scoreHeader(b),
	}
	for _, sr := range rc.Segments {
		p.Segments = append(p.Segments, views.CardSegment{
			Label: segmentLabel(sr.Segment), Rank: sr.Rank, Total: sr.Total, Score: scoreText(b, sr.Score),
			URL:     withQuery(cardPath(b.ID, v.Name, card.Member), "period", linkPeriod, "segment", sr.Segment.String()),
			Current: sr.Segment == seg,
		})
	}
	for _, o := range others {
		cv := views.CardView{
			Label: viewLabel(o.View), Period: viewPeriodWords(o.View, o.Period, loc), Total: o.Total,
			URL: withQuery(cardPath(b.ID, o.View.Name, card.Member), "segment", sg), Current: o.View.Name == v.Name,
		}
		if o.Present {
			cv.Rank, cv.Score = o.Rank, scoreText(b, o.Score)
		}
		p.Views = append(p.Views, cv)
	}
	points := make([]views.ChartPoint, 0, len(hist.Points))
	ranks := make([]views.ChartPoint, 0, len(hist.Points))
	for _, h := range hist.Points {
		label := shortPeriodLabel(v, h.Period, loc)
		points = append(points, views.ChartPoint{
			Period: h.Period.ID, Label: label, Value: scoreFloat(b, h.Score), Score: scoreText(b, h.Score), Present: h.Present,
		})
		ranks = append(ranks, views.ChartPoint{
			Period: h.Period.ID, Label: label, Value: float64(h.Rank), Present: h.Present && h.Rank > 0,
			Score: fmt.Sprintf("#%d of %d", h.Rank, h.Total),
		})
	}
	p.ChartLabel = scoreHeader(b)
	p.Chart = views.NewChart(fmt.Sprintf("%s of %s in the last %d periods of the %s view", scoreHeader(b), name, len(points), viewLabel(v)), points,
		views.ChartOptions{Integer: b.Decimals == 0 && b.Format != "duration", LowerIsBetter: b.Order == ranking.Asc})
	p.RankChart = views.NewChart(fmt.Sprintf("Rank of %s in the last %d periods of the %s view (#1 at the top)", name, len(ranks), viewLabel(v)), ranks,
		views.ChartOptions{Integer: true, LowerIsBetter: true, NoZero: true})
	if p.RankChart.Note != "" {
		p.RankChart.Note = ""
	}
	p.Lines = insights(cardFacts(b, v, card, hist, nav.IsCurrent, loc))
	return p
}

// cardSummary is the headline of a card: rank, score, top % and the gap.
func (s *Server) cardSummary(b *ranking.Board, v ranking.View, card *ranking.Card, hist *ranking.History, current bool) views.CardSummary {
	f := cardFacts(b, v, card, hist, current, s.cfg.Calendar.Location())
	return views.CardSummary{
		ID: views.CardID(b.ID, v.Name), Rank: card.Rank, Score: scoreText(b, card.Score), ScoreLabel: scoreHeader(b),
		Total: card.Total, Gap: f.gapLine(),
	}
}

// scoreFloat is a scaled score as a float, for drawing only.
func scoreFloat(b *ranking.Board, v int64) float64 {
	f, _ := strconv.ParseFloat(b.FormatScore(v), 64)
	return f
}

// viewPeriodWords names a view's current period in words beside its view
// label ("today", "this week"); nothing for all time, whose label says it.
func viewPeriodWords(v ranking.View, p ranking.Period, loc *time.Location) string {
	if v.Kind == ranking.All {
		return ""
	}
	return periodPhrase(v, p, true, loc)
}

// shortPeriodLabel names a period briefly for a chart axis: 13:00, Sun 22,
// 16 Nov, Nov 2026, or a window's last day.
func shortPeriodLabel(v ranking.View, p ranking.Period, loc *time.Location) string {
	start := p.Start.In(loc)
	switch v.Kind {
	case ranking.Hour:
		return start.Format("Mon 15:04")
	case ranking.Day:
		return start.Format("Mon 2 Jan")
	case ranking.Week:
		return start.Format("2 Jan")
	case ranking.Month:
		return start.Format("Jan 2006")
	case ranking.Window:
		return p.End.In(loc).Add(-time.Second).Format("2 Jan")
	}
	return "All time"
}
