package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// recapRead is how many of a period's top entries a recap reads: its
// climbers are found among them, and its sum is given when they are all.
const recapRead = 100

// recapClimbers is how many climbers a recap names.
const recapClimbers = 3

// handleRecapPage serves GET /boards/{board}/{view}/recap?period=: how one
// period went (by default the one that ended last): podium, biggest
// climbers against the period before, the closest race in the top 10 and
// the total. A period nobody scored in, or not retained and with no
// recorded result, is 404.
func (s *Server) handleRecapPage(c echo.Context) error {
	var store pageReader = s.reads
	b, view, err := s.boardView(c)
	if err != nil {
		return err
	}
	v, _ := b.View(view)
	if v.Kind == ranking.All {
		return ranking.Errorf(ranking.ENOTFOUND, "all time never ends, so it has no recap; see the board instead")
	}
	ctx := c.Request().Context()
	cal := s.cfg.Calendar
	loc := cal.Location()
	period := c.QueryParam("period")
	if period == "" {
		cur, err := store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Limit: 1, NoPrevRanks: true})
		if err != nil {
			return err
		}
		period = cal.Prev(v, cur.Period).ID
	}
	per, err := cal.ParsePeriod(v, period)
	if err != nil {
		return err
	}
	pg, err := store.Page(ctx, b.ID, v.Name, ranking.PageQuery{Period: per.ID, Limit: recapRead})
	if err != nil {
		return err
	}
	p := views.RecapPage{
		Layout:      s.layout("Recap · " + periodLabel(v, per, loc) + " · " + b.Title),
		BoardTitle:  b.Title,
		ViewLabel:   viewLabel(v),
		BoardURL:    withQuery(boardPath(b.ID, v.Name), "period", per.ID),
		ResultsURL:  resultsPath(b.ID, v.Name),
		PeriodLabel: periodLabel(v, per, loc),
		ClimbSince:  "against " + periodInline(v, cal.Prev(v, per), loc),
	}
	now := pg.Now
	switch {
	case pg.Final:
		p.Final, p.Status = true, "Final results"
	case now.Before(per.Start):
		return ranking.Errorf(ranking.ENOTFOUND, "%s has not started yet", periodInline(v, per, loc))
	case now.Before(per.End):
		p.Status = fmt.Sprintf("In progress: %s ends %s; these are the standings so far.", periodInline(v, per, loc), zoned(per.End, loc, "Mon 2 Jan 15:04"))
	default:
		p.Status = provisionalText(b, v, per, loc)
	}
	if pg.Total > 0 {
		s.recapFromStandings(b, v, per, pg, &p)
	} else if err := s.recapFromResult(ctx, b, v, per, &p); err != nil {
		return err
	}
	if len(p.Podium) > 0 {
		lead := p.Podium[0]
		verb := "Won by "
		if !p.Final {
			verb = "Led by "
		}
		p.Winner = verb + lead.Name + " with " + lead.Score
	}
	p.Description = "How " + b.Title + " · " + viewLabel(v) + " went, " + p.PeriodLabel + ": " + p.Winner + "; " + p.Total + "."
	if pg.Total > 0 {
		// The preview draws the period's own standings, retained as long
		// as the page reads them.
		p.Image = absURL(c, recapImagePath(b.ID, v.Name, per.ID, ranking.Segment{}))
	}
	if prev := cal.Prev(v, per); cal.Within(v, prev, cal.PeriodAt(v, now), max(b.Keep, b.ResultsKeep)) {
		p.PrevURL = recapPath(b.ID, v.Name, prev.ID)
	}
	if next := cal.Next(v, per); !now.Before(next.Start) {
		p.NextURL = recapPath(b.ID, v.Name, next.ID)
	}
	return s.renderPage(c, http.StatusOK, views.Recap(p))
}

// recapFromStandings fills a recap from the period's own standings (still
// retained): previous ranks give the climbers.
func (s *Server) recapFromStandings(b *ranking.Board, v ranking.View, per ranking.Period, pg *ranking.Page, p *views.RecapPage) {
	rs := withUnits(b, rows(b, v.Name, ranking.Segment{}, per.ID, pg.Entries, ""))
	p.Podium = rs[:min(podiumSize, len(rs))]
	type climb struct {
		i    int
		gain int64
	}
	var cs []climb
	for i, e := range pg.Entries {
		if e.PrevRank > e.Rank {
			cs = append(cs, climb{i, e.PrevRank - e.Rank})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].gain > cs[j].gain })
	for _, c := range cs[:min(recapClimbers, len(cs))] {
		e := pg.Entries[c.i]
		p.Climbers = append(p.Climbers, views.Climber{Row: rs[c.i], Text: fmt.Sprintf("up %s, from #%d to #%d", places(c.gain), e.PrevRank, e.Rank)})
	}
	scores := make([]int64, len(pg.Entries))
	for i, e := range pg.Entries {
		scores[i] = e.Score
	}
	p.Race = closestRace(b, rs, scores)
	p.Total = count(pg.Total, "member", "members") + " ranked"
	if b.Update == ranking.Increment && int64(len(pg.Entries)) == pg.Total {
		var sum int64
		for _, sc := range scores {
			sum += sc
		}
		_, many := unitWords(b)
		p.Total += " · " + scoreText(b, sum) + " " + many + " in all"
	}
}

// recapFromResult fills a recap from the period's recorded result, once
// its standings have expired: climbers are those listed in both its
// result and the one before. No result (or nobody in it) is 404.
func (s *Server) recapFromResult(ctx context.Context, b *ranking.Board, v ranking.View, per ranking.Period, p *views.RecapPage) error {
	var store resultsReader = s.store
	loc := s.cfg.Calendar.Location()
	nobody := ranking.Errorf(ranking.ENOTFOUND, "nobody scored in %s on %s, so there is nothing to recap", periodInline(v, per, loc), b.Title)
	if b.ResultsKeep == 0 {
		return nobody
	}
	raw, err := store.Result(ctx, b.ID, v.Name, per.ID)
	if ranking.ErrorCode(err) == ranking.ENOTFOUND {
		return nobody
	}
	if err != nil {
		return err
	}
	r, err := parseResult(raw)
	if err != nil {
		return err
	}
	if r.Total == 0 {
		return nobody
	}
	rs := resultRows(b, v.Name, r, len(r.Entries))
	p.Podium = rs[:min(podiumSize, len(rs))]
	scores := make([]int64, len(r.Entries))
	for i, e := range r.Entries {
		scores[i], _ = b.ParseScore(string(e.Score))
	}
	p.Race = closestRace(b, rs, scores)
	p.Total = count(r.Total, "member", "members") + " ranked"
	prevRaw, err := store.Result(ctx, b.ID, v.Name, s.cfg.Calendar.Prev(v, per).ID)
	if err != nil {
		if ranking.ErrorCode(err) == ranking.ENOTFOUND {
			return nil
		}
		return err
	}
	prev, err := parseResult(prevRaw)
	if err != nil {
		return err
	}
	was := map[string]int64{}
	for _, e := range prev.Entries {
		was[e.Member] = e.Rank
	}
	for i, e := range r.Entries {
		if w, ok := was[e.Member]; ok && w > e.Rank && len(p.Climbers) < recapClimbers {
			p.Climbers = append(p.Climbers, views.Climber{Row: rs[i], Text: fmt.Sprintf("up %s, from #%d to #%d", places(w-e.Rank), w, e.Rank)})
		}
	}
	return nil
}

// closestRace names the two neighbours in the top 10 whose scores are
// nearest: "#4 Ana Lima and #5 Kofi Mensah finished 0.3 points apart".
func closestRace(b *ranking.Board, rs []views.Row, scores []int64) string {
	best := -1
	var gap int64
	for i := 0; i+1 < min(10, len(rs)); i++ {
		d := scores[i] - scores[i+1]
		if d < 0 {
			d = -d
		}
		if best < 0 || d < gap {
			best, gap = i, d
		}
	}
	if best < 0 {
		return ""
	}
	a, z := rs[best], rs[best+1]
	pair := fmt.Sprintf("#%d %s and #%d %s", a.Rank, a.Name, z.Rank, z.Name)
	if gap == 0 {
		return pair + " finished level on " + a.Score + "."
	}
	one, many := unitWords(b)
	diff := scoreText(b, gap)
	if b.Format == "duration" {
		return pair + " finished " + diff + " apart."
	}
	noun := many
	if diff == scoreText(b, 1) && b.Decimals == 0 {
		noun = one
	}
	return pair + " finished " + diff + " " + noun + " apart."
}
