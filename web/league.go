package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/standings/standings/ranking"
)

// leagueReader reads a board's league rounds (the league API, pages, CSV
// and the rank card's league section).
type leagueReader interface {
	League(ctx context.Context, boardID, round string) (*ranking.LeagueRound, error)
	Cohort(ctx context.Context, boardID, round, tierID string, number int) (*ranking.Cohort, error)
	LeagueMember(ctx context.Context, boardID, round, member string) (*ranking.LeagueStanding, error)
}

// leagueJSON is the answer of GET /api/v1/boards/{board}/league.
type leagueJSON struct {
	Board  string           `json:"board"`
	Round  string           `json:"round"`
	Start  *string          `json:"start"`
	End    *string          `json:"end"`
	Closed bool             `json:"closed"`
	Tiers  []leagueTierJSON `json:"tiers"`
}

// leagueTierJSON is one tier of a round: its first cohorts and how many
// there are in all.
type leagueTierJSON struct {
	Tier        string             `json:"tier"`
	Title       string             `json:"title"`
	Members     int                `json:"members"`
	CohortCount int                `json:"cohort_count"`
	Cohorts     []leagueCohortJSON `json:"cohorts"`
}

type leagueCohortJSON struct {
	Cohort  int  `json:"cohort"`
	Members int  `json:"members"`
	Decided bool `json:"decided"`
}

// cohortJSON is the answer of GET /api/v1/boards/{board}/league/{tier}/{cohort}.
type cohortJSON struct {
	Board   string            `json:"board"`
	Round   string            `json:"round"`
	Start   *string           `json:"start"`
	End     *string           `json:"end"`
	Closed  bool              `json:"closed"`
	Decided bool              `json:"decided"`
	Tier    string            `json:"tier"`
	Title   string            `json:"title"`
	Cohort  int               `json:"cohort"`
	Promote int               `json:"promote"` // ranks 1..promote are the promotion zone
	Demote  int               `json:"demote"`  // the last demote ranks are the demotion zone
	Entries []cohortEntryJSON `json:"entries"`
}

type cohortEntryJSON struct {
	entryJSON
	Zone    string  `json:"zone"`
	Outcome *string `json:"outcome"` // null until the cohort is decided
}

// leagueMemberJSON is the answer of GET /api/v1/boards/{board}/league/members/{member}.
type leagueMemberJSON struct {
	Board      string          `json:"board"`
	Round      string          `json:"round"`
	Start      *string         `json:"start"`
	End        *string         `json:"end"`
	Closed     bool            `json:"closed"`
	Member     string          `json:"member"`
	Name       *string         `json:"name"`
	Tier       string          `json:"tier"`
	Cohort     int             `json:"cohort"`
	Rank       int64           `json:"rank"`
	Score      json.RawMessage `json:"score"`
	CohortSize int             `json:"cohort_size"`
	Zone       string          `json:"zone"`
	Outcome    *string         `json:"outcome"`
	NextTier   string          `json:"next_tier"`
}

// handleLeague serves GET /api/v1/boards/{board}/league?round=.
func (s *Server) handleLeague(c echo.Context) error {
	var store leagueReader = s.store
	b, err := s.leagueBoard(c)
	if err != nil {
		return err
	}
	r, err := store.League(c.Request().Context(), b.ID, c.QueryParam("round"))
	if err != nil {
		return err
	}
	loc := s.cfg.Calendar.Location()
	out := leagueJSON{Board: b.ID, Round: r.Round.ID, Start: instant(r.Round.Start, loc), End: instant(r.Round.End, loc),
		Closed: r.Closed, Tiers: make([]leagueTierJSON, 0, len(r.Tiers))}
	for _, t := range r.Tiers {
		tj := leagueTierJSON{Tier: t.ID, Title: t.Title, Members: t.Members, CohortCount: t.NCohorts, Cohorts: make([]leagueCohortJSON, 0, len(t.Cohorts))}
		for _, co := range t.Cohorts {
			tj.Cohorts = append(tj.Cohorts, leagueCohortJSON{Cohort: co.Number, Members: co.Members, Decided: co.Decided})
		}
		out.Tiers = append(out.Tiers, tj)
	}
	cacheFor(c, false)
	return render(c, http.StatusOK, out)
}

// handleCohort serves GET /api/v1/boards/{board}/league/{tier}/{cohort}?round=.
func (s *Server) handleCohort(c echo.Context) error {
	var store leagueReader = s.store
	b, err := s.leagueBoard(c)
	if err != nil {
		return err
	}
	tier, number, _, err := cohortParams(c, false)
	if err != nil {
		return err
	}
	co, err := store.Cohort(c.Request().Context(), b.ID, c.QueryParam("round"), tier, number)
	if err != nil {
		return err
	}
	loc := s.cfg.Calendar.Location()
	out := cohortJSON{Board: b.ID, Round: co.Round.ID, Start: instant(co.Round.Start, loc), End: instant(co.Round.End, loc),
		Closed: co.Closed, Decided: co.Decided, Tier: co.Tier.ID, Title: co.Tier.Title, Cohort: co.Number,
		Promote: co.Promote, Demote: co.Demote, Entries: make([]cohortEntryJSON, 0, len(co.Entries))}
	for _, e := range co.Entries {
		out.Entries = append(out.Entries, cohortEntryJSON{
			entryJSON: entryJSON{Rank: e.Rank, Member: e.Member, Name: nameOf(e.Name), Score: json.RawMessage(b.FormatScore(e.Score))},
			Zone:      e.Zone, Outcome: nameOf(e.Outcome),
		})
	}
	cacheFor(c, false)
	return render(c, http.StatusOK, out)
}

// handleLeagueMember serves GET /api/v1/boards/{board}/league/members/{member}?round=.
func (s *Server) handleLeagueMember(c echo.Context) error {
	var store leagueReader = s.store
	b, err := s.leagueBoard(c)
	if err != nil {
		return err
	}
	member, err := pathParam(c, "member")
	if err != nil {
		return err
	}
	st, err := store.LeagueMember(c.Request().Context(), b.ID, c.QueryParam("round"), member)
	if err != nil {
		return err
	}
	co := st.Cohort
	var name string
	for _, e := range co.Entries {
		if e.Member == member {
			name = e.Name
		}
	}
	loc := s.cfg.Calendar.Location()
	cacheFor(c, false)
	return render(c, http.StatusOK, leagueMemberJSON{
		Board: b.ID, Round: co.Round.ID, Start: instant(co.Round.Start, loc), End: instant(co.Round.End, loc), Closed: co.Closed,
		Member: member, Name: nameOf(name), Tier: st.Tier.ID, Cohort: st.Number, Rank: st.Rank,
		Score: json.RawMessage(b.FormatScore(st.Score)), CohortSize: st.CohortSize, Zone: st.Zone,
		Outcome: nameOf(st.Outcome), NextTier: st.NextTier.ID,
	})
}

// leagueBoard looks up the board named in the path, which must have a
// league.
func (s *Server) leagueBoard(c echo.Context) (*ranking.Board, error) {
	b, err := s.board(c)
	if err != nil {
		return nil, err
	}
	if b.League == nil {
		return nil, ranking.Errorf(ranking.ENOTFOUND, "board %q has no league", b.ID)
	}
	return b, nil
}

// cohortParams reads the {tier} and {cohort} path parameters. csv says
// whether the cohort may end in ".csv" (the page route's export); ext
// tells whether it did.
func cohortParams(c echo.Context, csv bool) (tier string, number int, ext bool, err error) {
	tier, err = pathParam(c, "tier")
	if err != nil {
		return "", 0, false, err
	}
	raw, err := pathParam(c, "cohort")
	if err != nil {
		return "", 0, false, err
	}
	if csv {
		raw, ext = strings.CutSuffix(raw, ".csv")
	}
	n, ok := parseDigits(raw)
	if !ok || n < 1 || n > ranking.MaxCohortNumber {
		return "", 0, false, ranking.Errorf(ranking.EINVALID, "a cohort is a whole number from 1 to %d, got %q", ranking.MaxCohortNumber, raw)
	}
	return tier, n, ext, nil
}
