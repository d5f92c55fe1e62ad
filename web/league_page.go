package web

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
	"github.com/standings/standings/views"
)

// leaguePath is a board's league page; cohortPath one group's page.
func leaguePath(board string) string { return "/boards/" + url.PathEscape(board) + "/league" }

func cohortPath(board, tier string, number int) string {
	return leaguePath(board) + "/" + url.PathEscape(tier) + "/" + strconv.Itoa(number)
}

// handleLeaguePage serves GET /boards/{board}/league?round=&member=: the
// round's tiers and groups; with member, that member's group (or why
// not).
func (s *Server) handleLeaguePage(c echo.Context) error {
	var store leagueReader = s.store
	b, err := s.leagueBoard(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	round := c.QueryParam("round")
	member := c.QueryParam("member")
	findErr := ""
	if member != "" {
		st, err := store.LeagueMember(ctx, b.ID, round, member)
		if err == nil {
			return c.Redirect(http.StatusSeeOther, withQuery(cohortPath(b.ID, st.Tier.ID, st.Number), "round", round, "me", member))
		}
		switch ranking.ErrorCode(err) {
		case ranking.ENOTFOUND:
			findErr = fmt.Sprintf("“%s” has not played this round.", member)
		case ranking.EINVALID:
			findErr = "That is not a member id: " + ranking.ErrorMessage(err)
		default:
			return err
		}
	}
	r, err := store.League(ctx, b.ID, round)
	if err != nil {
		return err
	}
	l := b.League
	loc := s.cfg.Calendar.Location()
	nav := s.roundNav(b, r.Round, r.Closed, r.Now, func(p string) string { return withQuery(leaguePath(b.ID), "round", p) })
	keep := ""
	if !nav.IsCurrent {
		keep = r.Round.ID
	}
	p := views.LeaguePage{
		Layout:     s.layout(b.Title + " · League"),
		BoardTitle: b.Title,
		BoardURL:   boardPath(b.ID, b.Views[0].Name),
		Round:      nav,
		Rules:      leagueRules(l),
		FindURL:    leaguePath(b.ID),
		FindRound:  keep,
		Query:      member,
		FindErr:    findErr,
		APIURL:     withQuery(apiPrefix+leaguePath(b.ID), "round", keep),
	}
	p.Description = fmt.Sprintf("The %s league of %s: %s.", strings.ToLower(viewLabel(l.Cycle)), b.Title, periodLabel(l.Cycle, r.Round, loc))
	p.Countdown, p.Status = s.roundState(l, r.Round, r.Closed, r.Now, overviewDecided(r))
	for i := len(r.Tiers) - 1; i >= 0; i-- {
		t := r.Tiers[i]
		box := views.LeagueTierBox{Title: tierTitle(t.Tier), Members: howMany(t.Members, "player", "players") + " in " + howMany(t.NCohorts, "group", "groups")}
		if t.Members == 0 {
			box.Members = "Nobody yet"
			if r.Closed {
				box.Members = "Nobody played"
			}
		}
		for _, co := range t.Cohorts {
			box.Groups = append(box.Groups, views.Link{
				Label: fmt.Sprintf("Group %d · %s", co.Number, howMany(co.Members, "player", "players")),
				URL:   withQuery(cohortPath(b.ID, t.ID, co.Number), "round", keep),
			})
		}
		if more := t.NCohorts - len(t.Cohorts); more > 0 {
			box.More = "and " + howMany(more, "more group", "more groups") + ": find yours by member id above"
		}
		p.Tiers = append(p.Tiers, box)
	}
	cacheFor(c, false)
	return s.renderPage(c, http.StatusOK, views.League(p))
}

// handleCohortPage serves GET /boards/{board}/league/{tier}/{cohort}?round=&me=
// and, for a cohort named "{n}.csv", the group as CSV.
func (s *Server) handleCohortPage(c echo.Context) error {
	var store leagueReader = s.store
	me, err := meParam(c)
	if err != nil {
		return err
	}
	b, err := s.leagueBoard(c)
	if err != nil {
		return err
	}
	tier, number, asCSV, err := cohortParams(c, true)
	if err != nil {
		return err
	}
	round := c.QueryParam("round")
	co, err := store.Cohort(c.Request().Context(), b.ID, round, tier, number)
	if err != nil {
		return err
	}
	if asCSV {
		return cohortCSV(c, b, co)
	}
	l := b.League
	nav := s.roundNav(b, co.Round, co.Closed, co.Now, func(p string) string {
		return withQuery(cohortPath(b.ID, tier, number), "round", p, "me", me)
	})
	keep := ""
	if !nav.IsCurrent {
		keep = co.Round.ID
	}
	heading := fmt.Sprintf("%s · group %d", tierTitle(co.Tier), co.Number)
	p := views.CohortPage{
		Layout:      s.layout(heading + " · " + b.Title),
		BoardTitle:  b.Title,
		LeagueURL:   withQuery(leaguePath(b.ID), "round", keep),
		Heading:     heading,
		Round:       nav,
		ScoreHeader: scoreHeader(b),
		Live:        !co.Decided,
		CSVURL:      withQuery(cohortPath(b.ID, tier, number)+".csv", "round", keep),
		APIURL:      withQuery(apiPrefix+cohortPath(b.ID, tier, number), "round", keep),
	}
	p.Description = fmt.Sprintf("%s, %s of %s: %s.", heading, strings.ToLower(viewLabel(l.Cycle)), b.Title, howMany(len(co.Entries), "player", "players"))
	p.Countdown, p.Status = s.roundState(l, co.Round, co.Closed, co.Now, co.Decided)
	p.Rows, p.Zones = cohortTable(b, co, me)
	if p.Live {
		p.Layout.Live = &views.Live{URL: liveCohortPath(b.ID, co, false), TableID: views.IDCohortLive}
	}
	cacheFor(c, false)
	return s.renderPage(c, http.StatusOK, views.Cohort(p))
}

// liveCohortPath is a group's live feed (its round named): the group
// page's table, or the league widget's (widget).
func liveCohortPath(board string, co *ranking.Cohort, widget bool) string {
	w := ""
	if widget {
		w = "1"
	}
	return withQuery("/ws/"+url.PathEscape(board)+"/league/"+url.PathEscape(co.Tier.ID)+"/"+strconv.Itoa(co.Number), "round", co.Round.ID, "widget", w)
}

// liveCohort renders a group's table for its live topic from a fresh
// read: as the page (or the widget) shows it, with no row marked as the
// viewer's, so that every viewer gets the same bytes.
func (s *Server) liveCohort(ctx context.Context, b *ranking.Board, a cohortAddr) (templ.Component, error) {
	if b.League == nil {
		return nil, ranking.Errorf(ranking.ENOTFOUND, "board %q has no league", b.ID)
	}
	var store leagueReader = s.store
	co, err := store.Cohort(ctx, b.ID, a.round, a.tier, a.number)
	if err != nil {
		return nil, err
	}
	t := views.CohortTable{
		Heading:     fmt.Sprintf("%s · group %d", tierTitle(co.Tier), co.Number),
		ScoreHeader: scoreHeader(b),
		Final:       co.Decided,
	}
	t.Rows, _ = cohortTable(b, co, "")
	if a.widget {
		return views.LeagueEmbedTable(t), nil
	}
	_, t.Status = s.roundState(b.League, co.Round, co.Closed, co.Now, co.Decided)
	return views.CohortLive(t), nil
}

// cohortTable is a group's rows (me highlighted, zone lines placed) and
// its zones in words, as the group page and the league widget show them.
func cohortTable(b *ranking.Board, co *ranking.Cohort, me string) (rows []views.CohortRow, zones []string) {
	l := b.League
	up, down := tierAt(l, co.Level+1), tierAt(l, co.Level-1)
	if co.Promote > 0 {
		zones = append(zones, fmt.Sprintf("Promotion zone: the top %s move up to %s.", howMany(co.Promote, "player", "players"), tierTitle(up)))
	}
	if co.Demote > 0 {
		zones = append(zones, fmt.Sprintf("Demotion zone: the bottom %s move down to %s.", howMany(co.Demote, "player", "players"), tierTitle(down)))
	}
	if len(zones) == 0 {
		zones = append(zones, "Too few players for zones: everyone stays in "+tierTitle(co.Tier)+".")
	}
	cardView := leagueCardView(b)
	n := len(co.Entries)
	for i, e := range co.Entries {
		name := e.Name
		if name == "" {
			name = e.Member
		}
		r := views.CohortRow{Row: views.Row{
			Rank: e.Rank, Member: e.Member, Name: name, Score: scoreText(b, e.Score),
			CardURL: cardPath(b.ID, cardView, e.Member), Self: me != "" && e.Member == me,
			Initials: initials(name), Hue: hue(e.Member),
		}, Zone: e.Zone}
		switch e.Zone {
		case ranking.ZonePromotion:
			r.ZoneText = "Moves up to " + tierTitle(up)
		case ranking.ZoneDemotion:
			r.ZoneText = "Moves down to " + tierTitle(down)
		default:
			r.ZoneText = "Stays in " + tierTitle(co.Tier)
		}
		r.Place = fmt.Sprintf("is #%d of %d: %s if the round ends like this.", e.Rank, n, strings.ToLower(r.ZoneText[:1])+r.ZoneText[1:])
		switch e.Outcome {
		case ranking.OutcomePromoted:
			r.Outcome = "Promoted to " + tierTitle(up)
		case ranking.OutcomeDemoted:
			r.Outcome = "Demoted to " + tierTitle(down)
		case ranking.OutcomeStayed:
			r.Outcome = "Stayed in " + tierTitle(co.Tier)
		}
		// The lines fall between zones: after the promotion zone's last
		// row, and before the demotion zone's first.
		if i+1 < n {
			next := co.Entries[i+1].Zone
			switch {
			case e.Zone == ranking.ZonePromotion && next != ranking.ZonePromotion:
				r.LineAfter = "promotion"
			case e.Zone != ranking.ZoneDemotion && next == ranking.ZoneDemotion:
				r.LineAfter = "demotion"
			}
		}
		rows = append(rows, r)
	}
	return rows, zones
}

// cohortCSV writes a group as CSV: rank, member, name, score, zone and
// outcome (empty until decided). A group holds at most cohort_size rows.
func cohortCSV(c echo.Context, b *ranking.Board, co *ranking.Cohort) error {
	var buf strings.Builder
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"rank", "member", "name", "score", "zone", "outcome"})
	for _, e := range co.Entries {
		_ = w.Write([]string{strconv.FormatInt(e.Rank, 10), csvCell(e.Member), csvCell(e.Name), b.FormatScore(e.Score), e.Zone, e.Outcome})
	}
	w.Flush()
	h := c.Response().Header()
	h.Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s-league-%s-%s-%d.csv"`, b.ID, strings.ReplaceAll(co.Round.ID, ":", ""), co.Tier.ID, co.Number))
	h.Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", []byte(buf.String()))
}

// roundNav is the previous / current / next navigation of rounds, read
// at now on Redis's clock.
func (s *Server) roundNav(b *ranking.Board, p ranking.Period, closed bool, now time.Time, link func(string) string) views.PeriodNav {
	return s.periodNav(b, b.League.Cycle, ranking.Standing{Board: b, View: b.League.Cycle, Period: p, Final: closed, Now: now}, link)
}

// roundState is a current round's countdown, or a closed round's status
// in words.
func (s *Server) roundState(l *ranking.League, p ranking.Period, closed bool, now time.Time, decided bool) (*views.Countdown, string) {
	if !closed {
		return s.countdown(l.Cycle, p, now), ""
	}
	if decided {
		return nil, "This round is over: the outcomes below are final."
	}
	return nil, "This round is over. Outcomes are being decided and appear here shortly."
}

// overviewDecided says whether every listed group of a round is decided.
func overviewDecided(r *ranking.LeagueRound) bool {
	for _, t := range r.Tiers {
		for _, co := range t.Cohorts {
			if !co.Decided {
				return false
			}
		}
	}
	return true
}

// leagueRules says a league's rules in a sentence.
func leagueRules(l *ranking.League) string {
	return fmt.Sprintf("A new round every %s. Groups of up to %d players; the top %d of each group move up a tier and the bottom %d move down.",
		strings.ToLower(cycleNoun(l.Cycle)), l.CohortSize, l.Promote, l.Demote)
}

// cycleNoun is "hour", "day", "week" or "month".
func cycleNoun(v ranking.View) string {
	switch v.Kind {
	case ranking.Hour:
		return "hour"
	case ranking.Day:
		return "day"
	case ranking.Month:
		return "month"
	}
	return "week"
}

// tierTitle names a tier to a person: "Silver league".
func tierTitle(t ranking.Tier) string {
	if strings.Contains(strings.ToLower(t.Title), "league") {
		return t.Title
	}
	return t.Title + " league"
}

// tierAt is the tier at a level (1 = lowest), clamped to the league's.
func tierAt(l *ranking.League, level int) ranking.Tier {
	return l.Tiers[min(max(level, 1), len(l.Tiers))-1]
}

// leagueCardView is the view a group's members' rank cards open in: the
// league's cycle when the board shows it, else the board's first view.
func leagueCardView(b *ranking.Board) string {
	if v, ok := b.View(b.League.Cycle.Name); ok {
		return v.Name
	}
	return b.Views[0].Name
}

// howMany is "1 player" or "1,204 players".
func howMany(n int, one, many string) string {
	return grouped(int64(n)) + " " + either(int64(n), one, many)
}

// cardLeague is a rank card's league section: the member's place in the
// current round (one read), or nil on a board without a league or when
// the member has not played this round.
func (s *Server) cardLeague(c echo.Context, b *ranking.Board, member, name string) (*views.CardLeague, error) {
	if b.League == nil {
		return nil, nil
	}
	var store leagueReader = s.store
	st, err := store.LeagueMember(c.Request().Context(), b.ID, "", member)
	if ranking.ErrorCode(err) == ranking.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l, co := b.League, st.Cohort
	cl := &views.CardLeague{
		Heading: "League · " + periodLabel(l.Cycle, co.Round, s.cfg.Calendar.Location()),
		Tier:    tierTitle(st.Tier),
		Place:   fmt.Sprintf("#%d of %d in group %d", st.Rank, st.CohortSize, st.Number),
		URL:     withQuery(cohortPath(b.ID, st.Tier.ID, st.Number), "me", member),
	}
	switch st.Zone {
	case ranking.ZonePromotion:
		cl.Zone = fmt.Sprintf("In the promotion zone: %s moves up to %s if the round ends like this.", name, tierTitle(st.NextTier))
	case ranking.ZoneDemotion:
		cl.Zone = fmt.Sprintf("In the demotion zone: %s moves down to %s if the round ends like this.", name, tierTitle(st.NextTier))
	default:
		cl.Zone = fmt.Sprintf("Safe: %s stays in %s if the round ends like this.", name, tierTitle(st.Tier))
	}
	return cl, nil
}
