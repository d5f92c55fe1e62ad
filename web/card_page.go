package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

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
	RankCard(ctx context.Context, boardID, viewName, period, member string, around, historyN int) (*ranking.RankCard, error)
}

// handleRankCard serves GET /boards/{board}/{view}/members/{member}?period=.
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
	v, _ := b.View(view)
	period := c.QueryParam("period")
	if period != "" {
		if _, err := s.cfg.Calendar.ParsePeriod(v, period); err != nil {
			return err
		}
	}
	// One read, so the headline, the neighbours, the chart and every view
	// show the same moment even while scores change.
	rc, err := store.RankCard(c.Request().Context(), b.ID, view, period, member, cardAround, cardHistory)
	if err != nil {
		return err
	}
	return s.renderPage(c, http.StatusOK, views.Card(s.cardModel(b, v, &rc.Card, rc.History, rc.Views)))
}

// cardModel lays out a rank card.
func (s *Server) cardModel(b *ranking.Board, v ranking.View, card *ranking.Card, hist *ranking.History, others []ranking.ViewStanding) views.CardPage {
	loc := s.cfg.Calendar.Location()
	name := card.Name
	if name == "" {
		name = card.Member
	}
	nav := s.periodNav(b, v, card.Standing, func(p string) string {
		return withQuery(cardPath(b.ID, v.Name, card.Member), "period", p)
	})
	linkPeriod := card.Period.ID
	if nav.IsCurrent {
		linkPeriod = ""
	}
	p := views.CardPage{
		Layout:     s.layout(name + " · " + b.Title),
		BoardID:    b.ID,
		BoardTitle: b.Title,
		BoardURL:   withQuery(boardPath(b.ID, v.Name), "period", linkPeriod),
		ViewLabel:  periodPhrase(v, card.Period, nav.IsCurrent, loc),
		Period:     nav,
		Member:     card.Member,
		Name:       name,
	}
	for _, ov := range b.Views {
		p.Tabs = append(p.Tabs, views.Link{Label: viewLabel(ov), URL: cardPath(b.ID, ov.Name, card.Member), Current: ov.Name == v.Name})
	}
	p.Summary = s.cardSummary(b, v, card, hist, nav.IsCurrent)
	if nav.IsCurrent {
		p.Live = &views.Live{URL: withQuery("/ws/"+b.ID+"/"+v.Name, "member", card.Member), TableID: p.Summary.ID}
	}
	p.Neighbours = views.Table{
		ID:      "neighbours-" + b.ID + "-" + v.Name,
		Caption: fmt.Sprintf("Ranks around %s", name),
		Period:  card.Period.ID,
		Rows:    rows(b, v.Name, linkPeriod, card.Around, card.Member),
	}
	for _, o := range others {
		cv := views.CardView{
			Label: viewLabel(o.View), Period: o.Period.ID, Total: o.Total,
			URL: cardPath(b.ID, o.View.Name, card.Member), Current: o.View.Name == v.Name,
		}
		if o.Present {
			cv.Rank, cv.Score = o.Rank, b.FormatScore(o.Score)
		}
		p.Views = append(p.Views, cv)
	}
	points := make([]views.ChartPoint, 0, len(hist.Points))
	for _, h := range hist.Points {
		points = append(points, views.ChartPoint{
			Period: h.Period.ID, Value: scoreFloat(b, h.Score), Score: b.FormatScore(h.Score), Present: h.Present,
		})
	}
	p.Chart = views.NewChart(fmt.Sprintf("Score of %s in the last %d periods of the %s view", name, len(points), viewLabel(v)), points)
	p.Lines = insights(cardFacts(b, v, card, hist, nav.IsCurrent, loc))
	return p
}

// cardSummary is the headline of a card: rank, score, top % and the gap.
func (s *Server) cardSummary(b *ranking.Board, v ranking.View, card *ranking.Card, hist *ranking.History, current bool) views.CardSummary {
	f := cardFacts(b, v, card, hist, current, s.cfg.Calendar.Location())
	return views.CardSummary{
		ID: views.CardID(b.ID, v.Name), Rank: card.Rank, Score: b.FormatScore(card.Score),
		Total: card.Total, TopPercent: strconv.FormatFloat(card.TopPercent, 'f', -1, 64), Gap: f.gapLine(),
	}
}

// scoreFloat is a scaled score as a float, for drawing only.
func scoreFloat(b *ranking.Board, v int64) float64 {
	f, _ := strconv.ParseFloat(b.FormatScore(v), 64)
	return f
}
