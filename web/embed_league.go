package web

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// handleEmbedLeague serves GET /embed/{board}/league?me=&theme=: a compact
// widget of one member's group in the current round, for iframes on other
// sites. Shared for a tick like the board widget (answerCache).
func (s *Server) handleEmbedLeague(c echo.Context) error {
	key, _ := shareKey(c, "embed-league", "theme", "me")
	return s.answers.serve(c, c.Param("board"), key, func() (*answer, error) { return s.embedLeague(c, s.answers.keeps()) })
}

// embedLeague reads and renders a league widget (keep: to be served
// again): one read, the member's place with its whole group.
func (s *Server) embedLeague(c echo.Context, keep bool) (*answer, error) {
	var store leagueReader = s.store
	theme, err := themeParam(c, "light")
	if err != nil {
		return nil, err
	}
	me, err := meParam(c)
	if err != nil {
		return nil, err
	}
	if me == "" {
		return nil, ranking.Errorf(ranking.EINVALID, "me is required: the member id whose group the widget shows")
	}
	b, err := s.leagueBoard(c)
	if err != nil {
		return nil, err
	}
	p := views.LeagueEmbedPage{
		Title:      b.Title + " · League",
		Theme:      theme,
		LeagueURL:  leaguePath(b.ID),
		NotDurable: s.notDurable,
		Me:         me,
	}
	st, err := store.LeagueMember(c.Request().Context(), b.ID, "", me)
	switch {
	case ranking.ErrorCode(err) == ranking.ENOTFOUND:
		p.Absent = fmt.Sprintf("%s hasn't played this round yet.", me)
		p.Description = fmt.Sprintf("The league of %s.", b.Title)
		return s.renderAnswer(c, http.StatusOK, views.LeagueEmbed(p), cacheCurrent, keep)
	case err != nil:
		return nil, err
	}
	co := st.Cohort
	p.Heading = fmt.Sprintf("%s · group %d", tierTitle(co.Tier), co.Number)
	p.GroupURL = withQuery(cohortPath(b.ID, co.Tier.ID, co.Number), "me", me)
	p.ScoreHeader = scoreHeader(b)
	p.Rows, p.Zones = cohortTable(b, co, me)
	if !co.Decided {
		p.Live = &views.Live{URL: liveCohortPath(b.ID, co, true), TableID: views.IDCohortLive}
	}
	p.Countdown, p.Status = s.roundState(b.League, co.Round, co.Closed, co.Now, co.Decided)
	// The sentence is the member's row's own, which app.js follows live.
	name := me
	for _, r := range p.Rows {
		if r.Member == me {
			name, p.Place = r.Name, r.Name+" "+r.Place
		}
	}
	p.Description = fmt.Sprintf("%s in %s, %s of %s.", name, p.Heading, periodLabel(b.League.Cycle, co.Round, s.cfg.Calendar.Location()), b.Title)
	return s.renderAnswer(c, http.StatusOK, views.LeagueEmbed(p), cacheCurrent, keep)
}
