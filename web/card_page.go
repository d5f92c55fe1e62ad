package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

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
	b, view, member, seg, err := s.memberPath(c)
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
	if ranking.ErrorCode(err) == ranking.ENOTFOUND {
		return s.cardNotPlayed(c, b, v, seg, member, period, err)
	}
	if err != nil {
		return err
	}
	p := s.cardModel(b, v, seg, rc)
	if p.Summary.Zone, err = s.zoneLine(c.Request().Context(), b, v, seg, &rc.Card, p.Period.IsCurrent); err != nil {
		return err
	}
	p.Image = absURL(c, previewPath(b.ID, v.Name, rc.Card.Member, p.Period, seg))
	if p.League, err = s.cardLeague(c, b, member, p.Name); err != nil {
		return err
	}
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
	p := s.cardFrame(b, v, seg, card.Standing, card.Member, name)
	nav := p.Period
	linkPeriod := card.Period.ID
	if nav.IsCurrent {
		linkPeriod = ""
	}
	p.Description = cardDescription(b, v, seg, card, name, nav.IsCurrent, loc)
	p.Summary = s.cardSummary(b, v, card, hist, nav.IsCurrent)
	if nav.IsCurrent {
		p.Summary.Passed = latestLine(card, name, rc.PassedBy, rc.Now)
	}
	if !nav.IsCurrent && v.Kind != ranking.All {
		// A finished period: its views are not this period's, so the card
		// links to the current one rather than mixing periods.
		p.NowURL = withQuery(cardPath(b.ID, v.Name, card.Member), "segment", sg)
		p.Summary.GapLabel = "Result"
		if !card.Final {
			// Late scores may still move it: no result yet.
			p.Summary.GapLabel = "Provisional"
			p.Summary.Late = fmt.Sprintf("Late scores may still arrive until %s, so this can still change.", zoned(card.Period.End.Add(b.Lateness), loc, "Mon 2 Jan 15:04"))
		}
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
			Score: "#" + strconv.FormatInt(h.Rank, 10) + " of " + strconv.FormatInt(h.Total, 10),
		})
	}
	p.ChartLabel = scoreHeader(b)
	p.ChartFew = chartFew(v, name, hist, nav.IsCurrent)
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

// chartFew says why a card draws no chart: all time is one period, and a
// line needs two periods with a score; "" when the charts have a line.
func chartFew(v ranking.View, name string, hist *ranking.History, current bool) string {
	if v.Kind == ranking.All {
		return "-"
	}
	n := 0
	for _, h := range hist.Points {
		if h.Present {
			n++
		}
	}
	if n >= 2 {
		return ""
	}
	span := "period"
	switch v.Kind {
	case ranking.Hour:
		span = "hour"
	case ranking.Day, ranking.Window:
		span = "day"
	case ranking.Week:
		span = "week"
	case ranking.Month:
		span = "month"
	}
	verb := "has"
	if !current {
		verb = "had"
	}
	return fmt.Sprintf("%s %s a score in only one of the last %d %ss, so there is no line to draw yet.", name, verb, len(hist.Points), span)
}

// latestLine says who last passed the member in the current period, by
// name, while that is still so; once the member is ahead again it says
// when it happened and where the member is now.
func latestLine(c *ranking.Card, name string, m *ranking.Move, now time.Time) string {
	if m == nil {
		return ""
	}
	who, when := displayName(m.Name, m.Member), ago(now.Sub(m.At))
	// Still ahead: the passer ranks above the member among its
	// neighbours, or is out of sight while the member is below the rank
	// the passer took.
	ahead, seen := false, false
	for _, e := range c.Around {
		if e.Member == m.Member {
			seen, ahead = true, e.Rank < c.Rank
		}
	}
	if !seen {
		ahead = c.Rank > m.Rank
	}
	if ahead {
		return fmt.Sprintf("%s passed %s for #%d · %s", who, name, m.Rank, when)
	}
	return fmt.Sprintf("%s passed %s for #%d %s; %s is ahead again, at #%d", who, name, m.Rank, when, name, c.Rank)
}

// cardNotPlayed is the card of a member the board knows in a period where
// it has no score: it keeps the period navigation, so that "← Previous"
// walks on through the periods it skipped, and the current one follows
// the live feed to fill in with its first score. An id the board does not
// know, or a segment board's card, stays not found.
func (s *Server) cardNotPlayed(c echo.Context, b *ranking.Board, v ranking.View, seg ranking.Segment, member, period string, notFound error) error {
	var store interface {
		memberSearcher
		pageReader
	} = s.store
	ctx := c.Request().Context()
	if utf8.RuneCountInString(member) > 64 || v.Kind == ranking.All || !seg.IsZero() {
		// A segment board's card of someone outside that segment is not
		// a period they skipped: it stays not found.
		return notFound
	}
	found, err := store.SearchMembers(ctx, b.ID, member)
	if ranking.ErrorCode(err) == ranking.EINVALID {
		return notFound // nothing a search can look for
	}
	if err != nil {
		return err
	}
	name, known := "", false
	for _, m := range found {
		if m.Member == member {
			name, known = m.Name, true
		}
	}
	if !known {
		return notFound
	}
	if name == "" {
		name = member
	}
	pg, err := store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Segment: seg, Period: period, Limit: 1})
	if err != nil {
		return err
	}
	loc := s.cfg.Calendar.Location()
	sg := seg.String()
	p := s.cardFrame(b, v, seg, pg.Standing, member, name)
	p.Summary = views.CardSummary{ID: views.CardID(b.ID, v.Name)}
	nav := p.Period
	if nav.IsCurrent {
		p.NotPlayed = fmt.Sprintf("%s has no score %s yet.", name, p.ViewLabel)
		p.Live = &views.Live{URL: liveURL(b.ID, v.Name, seg, "member", member), TableID: p.Summary.ID}
	} else if pg.Now.Before(pg.Period.Start) {
		p.NotPlayed = capitalize(periodInline(v, pg.Period, loc)) + " hasn't started yet."
		p.NowURL = withQuery(cardPath(b.ID, v.Name, member), "segment", sg)
	} else {
		in, _ := pastPeriod(v, pg.Period, pg.Now, loc)
		p.NotPlayed = fmt.Sprintf("%s didn't play %s.", name, in)
		p.NowURL = withQuery(cardPath(b.ID, v.Name, member), "segment", sg)
	}
	// A past period's answer changes only with a late score for it.
	cacheFor(c, pg.Final)
	return s.renderPage(c, http.StatusOK, views.Card(p))
}

// cardFrame is what every rank card page shows around its member: the
// title, the links back, the period navigation, the view tabs and the id
// (when a name stands for it); every link keeps the segment.
func (s *Server) cardFrame(b *ranking.Board, v ranking.View, seg ranking.Segment, st ranking.Standing, member, name string) views.CardPage {
	sg := seg.String()
	nav := s.periodNav(b, v, st, func(p string) string {
		return withQuery(cardPath(b.ID, v.Name, member), "period", p, "segment", sg)
	})
	linkPeriod := st.Period.ID
	if nav.IsCurrent {
		linkPeriod = ""
	}
	p := views.CardPage{
		Layout:     s.layout(name + " · " + boardTitle(b, seg)),
		BoardID:    b.ID,
		BoardTitle: boardTitle(b, seg),
		BoardURL:   withQuery(boardPath(b.ID, v.Name), "period", linkPeriod, "segment", sg),
		Segment:    segmentLabel(seg),
		ViewLabel:  periodPhrase(v, st.Period, nav.IsCurrent, s.cfg.Calendar.Location()),
		Period:     nav,
		Member:     member,
		Name:       name,
	}
	if !seg.IsZero() {
		p.WholeURL = withQuery(cardPath(b.ID, v.Name, member), "period", linkPeriod)
	}
	for _, ov := range b.Views {
		p.Tabs = append(p.Tabs, views.Link{Label: viewLabel(ov), URL: withQuery(cardPath(b.ID, ov.Name, member), "segment", sg), Current: ov.Name == v.Name})
	}
	if name != member {
		p.MemberID = member
	}
	return p
}

// scoreFloat is a scaled score as a float, for drawing only: the double
// nearest v / 10^decimals, as parsing its decimal text would give (both
// are exact in a double and IEEE division rounds correctly).
func scoreFloat(b *ranking.Board, v int64) float64 {
	return float64(v) / math.Pow10(b.Decimals)
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
